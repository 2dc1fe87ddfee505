// trainer.h — trains a model on a task: batches, forward with a full trace, label-smoothed loss,
// backward, gradient clipping, Adam with the warm-up or a constant schedule; records metrics;
// saves and resumes checkpoints bit-identically.
//
// A step samples `batch` training examples from the task's train split with the trainer's RNG,
// splits the batch into `threads` shards that run forward+backward in parallel (each with its own
// trace and gradient buffer), then sums the shard gradients in a fixed order: results are
// deterministic for a (seed, threads) pair. The loss is normalised by the whole batch's scored
// tokens, so sharding changes nothing but float rounding.
//
// Files: trainer.cpp (creation and the step loop, evaluation), trainer_checkpoint.cpp (model,
// metrics and checkpoint files, resuming); the options (train_options.h), the metrics document
// (metrics.h) and dropout masks (dropout.h) have files of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "base/rng.h"
#include "model/trace.h"
#include "train/adam.h"
#include "train/batch.h"
#include "train/dropout.h"
#include "train/evaluate.h"
#include "train/loss.h"
#include "train/metrics.h"
#include "train/schedule.h"
#include "train/tasks.h"
#include "train/train_options.h"

namespace sf {

// Seeded fixed validation examples: the same for every run of a task.
constexpr uint64_t kValidationSeed = 20261121;

// Something more to record at the probe steps (after record_probes), given the metrics document,
// the step and the model as of that step: the explorer and `stepformer train` add the head
// detectors' scores (analysis/head_detector.h: record_head_scores).
using MetricsProbe = std::function<void(nlohmann::json& metrics, int64_t step, const Model& m)>;

class Trainer {
 public:
  static Result<Trainer> create(TrainOptions o);
  static Result<Trainer> resume(const std::string& checkpoint_path);

  StepStats step();
  bool finished() const { return adam_.t >= opt_.steps; }
  int64_t steps_done() const { return adam_.t; }

  // Exact match of greedy decoding on the first n held-out examples.
  EvalResult evaluate(int n) const;
  // Records the final evaluation (final_eval_examples) into the metrics.
  EvalResult final_evaluation(double seconds);

  const Model& model() const { return model_; }
  const TrainOptions& options() const { return opt_; }
  TrainOptions& options() { return opt_; }
  const Task& task() const { return task_; }
  const nlohmann::json& metrics() const { return metrics_; }
  const std::vector<Example>& validation() const { return validation_; }
  void set_probe(MetricsProbe p) { probe_ = std::move(p); }

  // Checkpoint: model tensors + Adam moments ("adam.m.<name>", "adam.v.<name>") + step, RNG
  // state, options and metrics in __metadata__. Written atomically.
  Result<bool> save_checkpoint(const std::string& path) const;
  Result<bool> save_model(const std::string& path) const;
  Result<bool> save_metrics(const std::string& path) const;

 private:
  // One core's part of a step: its rows of the batch, recording and gradients. Kept from step
  // to step, so that the gradient buffers and the recording's matrices reuse their memory
  // instead of being allocated (and the gradients zeroed twice) every step.
  struct Shard {
    Batch batch;
    Trace trace;
    Weights grads;
    bool grads_allocated = false;
    LossResult loss;
    uint64_t dropout_seed = 0;
  };

  // The parts of step(), in order.
  Batch sample_batch();                                               // opt_.batch training examples
  void split_into_shards(const Batch& batch, int T);                  // T shards of about equal size
  void run_shard(Shard& sh, int target_tokens, bool full_recording);  // forward, loss, backward
  StepStats update(const Batch& batch, int T);                        // the shards' gradients summed, Adam, metrics

  TrainOptions opt_;
  Task task_;
  Model model_;
  Adam adam_;
  Rng rng_;
  std::vector<Example> validation_;
  nlohmann::json metrics_;
  std::vector<Shard> shards_;
  MetricsProbe probe_;
};

}  // namespace sf
