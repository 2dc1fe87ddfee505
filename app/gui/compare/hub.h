// hub.h — the state shared by the three pre-LN vs post-LN views (compare, training, gradient norms
// at initialisation), and the threads that do their work. The UI thread only reads immutable
// snapshots and posts requests:
//   CompareWorker  owns the Comparison (two Sessions) and publishes a CompareSnap after each
//                  operation, with both runs' attention views and layer statistics built;
//   TrainJob       (core/train/train_job.h) trains the pre/post pair;
//   gradient norms at initialisation run as a std::async task.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "compare/plot.h"
#include "analysis/prepost_plots.h"
#include "job_thread.h"
#include "snapshot.h"
#include "train/train_job.h"

namespace sf::gui {

// One side of the comparison as the panels draw it.
struct RunSnap {
  std::shared_ptr<const Snapshot> view;  // the explorer's views of this run (build_views)
  ModelStats stats;                      // per-layer statistics as of the run's stage
  std::string name;                      // "copy-preln.safetensors", "copy-preln → post-LN (switched)"
  std::shared_ptr<const Model> model;
};

struct CompareSnap {
  uint64_t generation = 0;
  uint64_t ticket = 0;                    // the last operation processed
  std::shared_ptr<const Comparison> cmp;  // null: nothing loaded yet
  RunSnap run[2];
  int position = 0, known = 0;  // point on the merged timeline, points known so far
  std::string point;            // describe(key)
  std::string src, tgt;
  std::vector<std::string> log;  // messages, most recent last ("error: …" for errors)
  uint64_t last_error_ticket = 0;
  bool ok() const { return cmp != nullptr; }
};

// The compare worker's mutable state (worker thread only).
struct CompareEngine {
  std::optional<Comparison> cmp;
  std::shared_ptr<const Model> model[2];
  std::string name[2];
  std::string src, tgt;
  DecodeSettings settings;
  std::vector<std::string> log;
  uint64_t ticket = 0, last_error_ticket = 0;

  void info(const std::string& m);
  void error(const std::string& m);
  // Sets both models and restarts on the current input (or the model's example when it does not fit).
  bool load(std::shared_ptr<const Model> a, const std::string& name_a, std::shared_ptr<const Model> b,
            const std::string& name_b, const std::string& path_a = "");
  bool set_input(const std::string& src, const std::string& tgt);
};

// The compare view's worker thread: runs operations on its CompareEngine and publishes a
// CompareSnap (both runs' views and layer statistics built) after each burst.
class CompareWorker : public JobThread<CompareEngine, CompareSnap> {
 public:
  explicit CompareWorker(std::function<void()> wake);
};

// A shipped pre/post pair: assets/models/<task>-preln / -postln (+ .metrics.json when recorded).
struct ShippedPair {
  std::string task;
  std::string pre, post;                  // model paths
  std::string pre_metrics, post_metrics;  // "" when absent
};
std::vector<ShippedPair> shipped_pairs();

// Layer/head selection of the compare view.
struct CompareSelection {
  AttnKind kind = AttnKind::EncoderSelf;
  int layer = 0;
  int head = 0;
  bool follow = true;  // follow the stage the runs are on
};

class PrePostHub {
 public:
  explicit PrePostHub(std::function<void()> wake);
  ~PrePostHub();

  // ---- compare
  CompareWorker compare;
  CompareSelection sel;
  std::vector<ShippedPair> pairs;
  // Operations (posted to the compare worker); each returns its ticket.
  uint64_t open_pair(const ShippedPair& p);
  uint64_t open_models(std::shared_ptr<const Model> a, const std::string& name_a, std::shared_ptr<const Model> b,
                       const std::string& name_b);
  uint64_t open_files(const std::string& a, const std::string& b);
  uint64_t open_switched(std::shared_ptr<const Model> m, const std::string& name);
  uint64_t move(const std::string& what, int times = 1);  // forward back next-token prev-token end home

  // ---- training
  PairOptions train_opt;
  std::unique_ptr<TrainJob> job;
  std::string job_error;
  std::vector<RunCurves> history;  // earlier runs kept for the overlay
  bool keep_history = true;
  std::vector<RunCurves> recorded;  // a shipped pair's recorded metrics
  std::string recorded_name;
  bool show_recorded = true;
  char save_stem[512] = {0};
  bool start_training();  // a new job with train_opt (the previous one goes to history)
  std::vector<RunCurves> plotted_runs() const;
  bool load_recorded(const ShippedPair& p, std::string& error);

  // ---- gradient norms at initialisation
  GradNormOptions gn_opt;
  std::future<GradNormPair> gn_future;
  std::shared_ptr<const GradNormPair> gn_result;
  double gn_seconds = 0;
  bool gn_running() const { return gn_future.valid(); }
  void start_gradnorms();
  void poll();  // once per frame: picks up finished async work

 private:
  std::chrono::steady_clock::time_point gn_started_;
  // Cancelled jobs finishing their current step; destroyed by poll() once stopped, so the UI never
  // waits for a step.
  std::vector<std::unique_ptr<TrainJob>> retiring_;
};

// The hub of the app (created by make_prepost_panels; null before).
PrePostHub* prepost_hub();

}  // namespace sf::gui
