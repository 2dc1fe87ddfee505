// train_options.h — what a training run is asked to do: the task, the model's shape, the
// optimiser and schedule, evaluation and probing periods; saved in the metrics and in every
// checkpoint ("stepformer.train_options") so a run can be resumed and compared.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "model/config.h"
#include "train/schedule.h"
#include "train/tasks.h"

namespace sf {

struct TrainOptions {
  std::string task = "copy";
  TaskOptions task_options;
  Arch arch = Arch::EncoderDecoder;  // the task's own unless overridden (any task runs decoder-only)
  bool arch_set = false;
  NormPlacement norm = NormPlacement::Pre;
  int encoder_layers = 2;  // ignored for decoder-only
  int decoder_layers = 2;
  int d_model = 64;
  int n_heads = 4;
  int d_ff = 256;
  Activation activation = Activation::Relu;
  Positional positional = Positional::Sinusoidal;
  int batch = 64;
  int64_t steps = 2000;
  uint64_t seed = 1;
  Schedule schedule;  // d_model is copied in from d_model
  float clip = 0.0f;  // global gradient-norm clip; 0 = off
  float label_smoothing = 0.1f;
  float dropout = 0.0f;  // on sublayer outputs and embeddings, training only
  int eval_every = 250;  // exact match on eval_examples held-out examples
  int eval_examples = 200;
  int final_eval_examples = 1000;
  int probe_every = 50;  // residual-stream norms and attention entropy
  int threads = 1;
  std::string command;  // the command line, recorded in the metrics
};

nlohmann::json to_json(const TrainOptions& o);
Result<TrainOptions> train_options_from_json(const nlohmann::json& j);
// The model configuration the options describe for a task.
Config model_config(const TrainOptions& o, const Task& t);
// The task the options describe (arch override applied).
Result<Task> options_task(const TrainOptions& o);

}  // namespace sf
