// trainer.h — trains a model on a task: batches, forward with a full trace, label-smoothed loss,
// backward, gradient clipping, Adam with the warm-up or a constant schedule; records metrics;
// saves and resumes checkpoints bit-identically.
//
// A step samples `batch` training examples from the task's train split with the trainer's RNG,
// splits the batch into `threads` shards that run forward+backward in parallel (each with its own
// trace and gradient buffer), then sums the shard gradients in a fixed order: results are
// deterministic for a (seed, threads) pair. The loss is normalised by the whole batch's scored
// tokens, so sharding changes nothing but float rounding.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "base/rng.h"
#include "model/trace.h"
#include "train/adam.h"
#include "train/evaluate.h"
#include "train/schedule.h"
#include "train/tasks.h"

namespace sf {

struct TrainOptions {
  std::string task = "copy";
  TaskOptions task_options;
  Arch arch = Arch::EncoderDecoder;  // the task's own unless overridden (any task runs decoder-only)
  bool arch_set = false;
  NormPlacement norm = NormPlacement::Pre;
  int encoder_layers = 2;            // ignored for decoder-only
  int decoder_layers = 2;
  int d_model = 64;
  int n_heads = 4;
  int d_ff = 256;
  Activation activation = Activation::Relu;
  Positional positional = Positional::Sinusoidal;
  int batch = 64;
  int64_t steps = 2000;
  uint64_t seed = 1;
  Schedule schedule;                 // d_model is copied in from d_model
  float clip = 0.0f;                 // global gradient-norm clip; 0 = off
  float label_smoothing = 0.1f;
  float dropout = 0.0f;              // on sublayer outputs and embeddings, training only
  int eval_every = 250;              // exact match on eval_examples held-out examples
  int eval_examples = 200;
  int final_eval_examples = 1000;
  int probe_every = 50;              // residual-stream norms and attention entropy
  int threads = 1;
  std::string command;               // the command line, recorded in the metrics
};

nlohmann::json to_json(const TrainOptions& o);
Result<TrainOptions> train_options_from_json(const nlohmann::json& j);
// The model configuration the options describe for a task.
Config model_config(const TrainOptions& o, const Task& t);
// The task the options describe (arch override applied).
Result<Task> options_task(const TrainOptions& o);

struct StepStats {
  int64_t step = 0;        // optimiser steps done, this one included
  double loss = 0;         // label-smoothed loss of the batch
  double accuracy = 0;     // teacher-forced token accuracy of the batch
  double lr = 0;
  double grad_norm = 0;    // before clipping
  int tokens = 0;          // scored target tokens in the batch
  bool evaluated = false;  // an evaluation ran after this step
  double exact_match = 0;  // its result
};

// Seeded fixed validation examples: the same for every run of a task.
constexpr uint64_t kValidationSeed = 20261121;

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

  // Checkpoint: model tensors + Adam moments ("adam.m.<name>", "adam.v.<name>") + step, RNG
  // state, options and metrics in __metadata__. Written atomically.
  Result<bool> save_checkpoint(const std::string& path) const;
  Result<bool> save_model(const std::string& path) const;
  Result<bool> save_metrics(const std::string& path) const;

 private:
  struct Shard;
  void record(const StepStats& s, const Weights& grads);
  void probe(const std::vector<Shard>& shards);

  TrainOptions opt_;
  Task task_;
  Model model_;
  Adam adam_;
  Rng rng_;
  std::vector<Example> validation_;
  nlohmann::json metrics_;
};

// Dropout (training only): draws residual and embedding dropout masks (keep with probability
// 1 − p, scaled by 1/(1 − p)) into a trace before its forward run, for B sequences of n source and
// m target tokens. The forward applies them and the backward reads them from the trace.
void draw_dropout_masks(Trace& t, const Config& c, int batch, int n, int m, float p, uint64_t seed);

// Gradient groups: the module a parameter belongs to ("encoder.layers.0.self_attn",
// "decoder.layers.1.norm3", "embeddings", "generator", "decoder.norm"), and its layer
// ("encoder.layers.0"; other parameters: "" = no layer).
std::string param_group(const std::string& name);
std::string param_layer(const std::string& name);

}  // namespace sf
