// worker.h — the thread that runs the model. The UI thread posts operations; the worker runs them
// in order on its own Engine (the mutable state: model, Session, demos) and after each one
// publishes a new immutable Snapshot. An error becomes a Message in the snapshot, never a crash,
// and leaves the previous model and session in place.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "job_thread.h"
#include "snapshot.h"

namespace sf::gui {

// The worker's mutable state. Only the worker thread touches it.
struct Engine {
  std::shared_ptr<const Model> model;
  std::string model_path, model_name;
  std::optional<Session> session;
  std::string src, tgt;  // the input last set (even if refused)
  DecodeSettings settings;
  bool use_cache = true;
  std::string input_error;
  bool want_order_demo = false, want_leak_demo = false;
  std::shared_ptr<const OrderDemo> order_demo;
  std::shared_ptr<const LeakDemo> leak_demo;
  std::vector<int> leak_ids;                    // the decoder input the leak demo ran on
  std::map<std::string, std::string> metadata;  // the model file's __metadata__ (empty for a folder)
  uint64_t example_seed = 0;                    // the "Example" button's last pick
  std::shared_ptr<const BatchDemo> batch_demo;  // the model's examples padded as one batch
  std::vector<Message> log;
  uint64_t ticket = 0;  // the operation running
  uint64_t last_error_ticket = 0;
  uint64_t message_seq = 0;
  std::shared_ptr<const Snapshot> published;  // the last snapshot built (build_views shares its views)

  void info(const std::string& m) { push(Message::Info, m); }
  void warn(const std::string& m) { push(Message::Warning, m); }
  void error(const std::string& m) {
    push(Message::Error, m);
    last_error_ticket = ticket;
  }
  void push(Message::Level l, const std::string& m);

  // Operations (run on the worker thread).
  bool load_model(const std::string& path);
  void use_model(std::shared_ptr<const Model> m, const std::string& name);
  bool set_input(const std::string& src, const std::string& tgt);
  bool set_settings(const DecodeSettings& s);
  void set_cache(bool on);
  // The model's next example input (model_examples: its task's generator, a sentence, …).
  void next_example();
  // Appends the padding token to the source, as many as fit max_len (at most two).
  void append_padding();
  void refresh_demos(bool force);
};

// The explorer's worker thread: runs operations on its Engine and publishes a Snapshot with every
// view built (build_views) after each burst.
// The model view's thumbnails (analysis/head_maps.h), computed on a thread of their own when the
// view asks for them: the worker publishes a snapshot as soon as its step is computed (the first
// map is drawn without waiting for 144 thumbnails), and a run not looking at the model view never
// computes them.
class ThumbnailJobs {
 public:
  explicit ThumbnailJobs(std::function<void()> wake);
  ~ThumbnailJobs();
  ThumbnailJobs(const ThumbnailJobs&) = delete;
  ThumbnailJobs& operator=(const ThumbnailJobs&) = delete;
  // Replaces what is asked for: every thumbnail these views lack, in order. The UI calls it each
  // frame it draws a view with missing thumbnails; an unchanged request changes nothing.
  void request(std::vector<std::shared_ptr<const AttnData>> views);
  // Thumbnails are asked for and not all made yet.
  bool busy() const;

 private:
  void run();
  std::function<void()> wake_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<const AttnData>> pending_;
  bool working_ = false, stop_ = false;
  std::thread thread_;
};

class Worker : public JobThread<Engine, Snapshot> {
 public:
  explicit Worker(std::function<void()> wake = {});
  // No operation queued or running and no thumbnail asked for missing: what scripts, the frame
  // benchmark and the player wait for.
  bool idle() const { return JobThread::idle() && !thumbnails_.busy(); }
  void want_thumbnails(std::vector<std::shared_ptr<const AttnData>> views) { thumbnails_.request(std::move(views)); }

 private:
  ThumbnailJobs thumbnails_;
};

// The model's examples (core's model_examples) padded as one batch, with each sequence's masks.
std::shared_ptr<const BatchDemo> make_batch_demo(const Model& m, const std::map<std::string, std::string>& metadata);

}  // namespace sf::gui
