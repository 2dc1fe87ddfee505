// metrics.h — what a training run records in its metrics file ("stepformer.metrics/1"): per step
// the loss, accuracy, learning rate and gradient norms (global, per module group, per layer); every
// probe_every steps the residual-stream norms and attention entropy per head (and what the
// trainer's probe hook adds: the head detectors' scores, analysis/head_detector.h); the evaluations.
//
// Metrics are plotted, not replayed: numbers are rounded to 5 significant digits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "model/trace.h"
#include "train/train_options.h"

namespace sf {

struct StepStats {
  int64_t step = 0;     // optimiser steps done, this one included
  double loss = 0;      // label-smoothed loss of the batch
  double accuracy = 0;  // teacher-forced token accuracy of the batch
  double lr = 0;
  double grad_norm = 0;    // before clipping
  int tokens = 0;          // scored target tokens in the batch
  bool evaluated = false;  // an evaluation ran after this step
  double exact_match = 0;  // its result
};

// Gradient groups: the module a parameter belongs to ("encoder.layers.0.self_attn",
// "decoder.layers.1.norm3", "embeddings", "generator", "decoder.norm"), and its layer
// ("encoder.layers.0"; other parameters: "" = no layer).
std::string param_group(const std::string& name);
std::string param_layer(const std::string& name);

// x rounded to 5 significant digits (what the metrics file holds).
double round5(double x);

// A new metrics document for a run: options, configuration, parameter count, module groups and
// layers, and the empty per-step, probe and evaluation series.
nlohmann::json new_metrics(const TrainOptions& o, const Model& m);

// Why a saved metrics document (a checkpoint's) cannot take the records of the run `fresh`
// (new_metrics of its options and model) describes, or "" when it can: every object of `fresh` it
// holds is an object, every series (an empty list) a list, every fixed list (module groups, layers,
// probe streams) is there and the same list, and a "heads" record is an object of lists. Resuming
// appends to these (and creates what is missing); a document from elsewhere with another shape
// would end the run mid-way, or loop over module groups it does not name.
std::string metrics_mismatch(const nlohmann::json& saved, const nlohmann::json& fresh);

// Appends one step's loss, accuracy, lr, gradient norm and tokens, and the gradient norms per
// group and layer of `grads` (before clipping), to metrics["steps"]; `squares` holds Σ g² of every
// tensor of param_table(grads, c), in order (squared_norms, Adam::step). The step number itself is appended by
// the caller once the optimiser has run.
void record_step(nlohmann::json& metrics, const StepStats& s, const Weights& grads, const Config& c,
                 const std::vector<double>& squares);

// Appends the probes of one step to metrics["probes"]: mean residual-stream norm per stream and
// mean attention entropy per module and head over the non-padding rows of every trace (the
// shards of a batch, combined).
void record_probes(nlohmann::json& metrics, int64_t step, const Config& c, const std::vector<const Trace*>& traces);

}  // namespace sf
