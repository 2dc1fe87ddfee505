// train_job.h — training several models side by side on a thread of their own (the explorer's
// training view): typically a pre-LN and a post-LN model of one configuration, with or without
// warm-up, to watch Xiong et al. (2020)'s observations happen.
//
// The job owns one Trainer per run and steps them in turn (run 0 step k, run 1 step k, run 0 step
// k+1, …), so the curves grow together and a pause leaves them at the same step. Every few tenths
// of a second it publishes an immutable TrainProgress (std::shared_ptr<const …>) with the curves
// read out of each Trainer's metrics; counters are atomics. The thread that owns the job never
// waits for a step: pause, resume, cancel and save are requests the job thread picks up between
// steps. A Trainer's results depend only on its options (seeded), so the same job gives the same
// curves every time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "train/run_curves.h"
#include "train/trainer.h"

namespace sf {

struct TrainRunSpec {
  std::string label;
  TrainOptions options;
  MetricsProbe probe;  // optional: more to record at the probe steps (Trainer::set_probe)
};

// The options of a pre/post pair as the training view builds them: the task's encoder-decoder
// model with `depth` encoder and decoder layers, Adam at `lr`: with warm-up, the schedule of
// Vaswani et al. §5.3 scaled so that its peak (at step `warmup`) is `lr`; without, `lr` from the
// first step (constant).
struct PairOptions {
  std::string task = "copy";
  int depth = 2;
  int d_model = 64;
  int n_heads = 4;
  int d_ff = 0;                 // 0: 4 · d_model
  bool attention_only = false;  // decoder-only tasks: no feed-forward sublayers (d_ff 0)
  double lr = 1e-3;
  bool warmup = true;
  int warmup_steps = 100;
  int64_t steps = 300;
  int batch = 32;
  uint64_t seed = 1;
  int eval_every = 0;  // 0: four evaluations over the run
  int eval_examples = 100;
  int probe_every = 10;
};
std::vector<TrainRunSpec> pair_specs(const PairOptions& o);
// "pre-LN, warm-up 100, lr 1e-3" / "post-LN, no warm-up, lr 1e-3".
std::string run_label(NormPlacement n, bool warmup, int warmup_steps, double lr);

struct TrainProgress {
  enum State { Starting, Running, Paused, Cancelled, Finished, Failed } state = Starting;
  std::vector<RunCurves> runs;
  // Copies of the models as of the last pause / cancel / finish (null while running).
  std::vector<std::shared_ptr<const Model>> models;
  std::vector<std::string> messages;  // save results, errors (most recent last)
  int64_t steps_done = 0;             // summed over runs
  int64_t steps_total = 0;
  double seconds = 0;  // wall time spent stepping
  uint64_t generation = 0;
  bool active() const { return state == Starting || state == Running || state == Paused; }
};
const char* to_string(TrainProgress::State s);

class TrainJob {
 public:
  // Creates the trainers (on the calling thread: cheap) and starts the job thread, running.
  static Result<std::unique_ptr<TrainJob>> start(std::vector<TrainRunSpec> runs);
  ~TrainJob();  // cancels and joins
  TrainJob(const TrainJob&) = delete;
  TrainJob& operator=(const TrainJob&) = delete;

  void pause();
  void resume();
  void cancel();  // stops after the current step; the models so far stay available
  // Saves every run's model and metrics as <stem>-<preln|postln>[-nowarmup].safetensors and
  // .metrics.json (atomic writes), on the job thread between steps; the result (paths or the
  // error) is appended to the progress messages and the job's `saved` list.
  void save(const std::string& stem);

  std::shared_ptr<const TrainProgress> progress() const;
  int64_t steps_done() const { return steps_done_.load(); }
  int64_t steps_total() const { return steps_total_; }
  bool paused() const { return paused_.load(); }
  // Blocks until the job has finished, was cancelled or failed, or `seconds` passed (tests).
  bool wait(double seconds) const;
  // The file names save() would write for `stem`, one per run.
  std::vector<std::string> save_paths(const std::string& stem) const;

 private:
  TrainJob() = default;
  void run();
  std::function<void()> next_request(TrainProgress::State st, bool& stop);
  TrainProgress::State step_runs();
  void publish(TrainProgress::State st, bool with_models);

  std::vector<TrainRunSpec> specs_;
  std::vector<Trainer> trainers_;
  std::vector<RunCurves> curves_;  // [run] as of the last publication (job thread only)
  int64_t steps_total_ = 0;
  std::atomic<int64_t> steps_done_{0};
  std::atomic<bool> paused_{false}, cancel_{false};
  std::atomic<bool> done_{false};

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<std::function<void()>> requests_;  // run on the job thread between steps
  std::shared_ptr<const TrainProgress> progress_;
  std::vector<std::string> messages_;
  double seconds_ = 0;
  uint64_t generation_ = 0;
  std::thread thread_;
};

}  // namespace sf
