// run_curves.h — the curves of a training run (loss, learning rate, gradient norms, evaluations,
// residual-stream probes) read out of the metrics document a Trainer records (train/metrics.h),
// live or from a `.metrics.json` file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "model/config.h"

namespace sf {

// The curves of one training run, as the plots read them: from a live Trainer or from a
// `.metrics.json` file written by `stepformer train` (the shipped models').
struct RunCurves {
  std::string label;  // "pre-LN, warm-up 200"
  std::string task;
  NormPlacement norm = NormPlacement::Pre;
  std::string schedule;  // "warmup" | "constant"
  int warmup = 0;
  double peak_lr = 0;  // the largest learning rate of the schedule
  int64_t steps_planned = 0;
  std::vector<double> step;                          // (S) 1, 2, …
  std::vector<double> loss;                          // (S) label-smoothed training loss of the step's batch
  std::vector<double> accuracy;                      // (S) teacher-forced token accuracy
  std::vector<double> lr;                            // (S)
  std::vector<double> grad_norm;                     // (S) global gradient norm before clipping
  std::vector<std::string> layers;                   // (L) "encoder.layers.0", …, "decoder.layers.1"
  std::vector<std::vector<double>> grad_norm_layer;  // [S][L] ‖∇‖ of each layer's parameters
  std::vector<double> eval_step, exact_match;        // held-out exact match at eval steps
  std::vector<std::string> streams;                  // "encoder.embed", "encoder.layers.0", …
  std::vector<double> probe_step;
  std::vector<std::vector<double>> residual_norm;  // [probe][stream] mean ‖x‖ over tokens
  // Detector scores of each decoder self-attention head on a repeated random sequence, at the
  // probe steps (metrics "heads", when the run recorded them).
  std::vector<std::string> heads;                   // (K) "L0 H0", "L0 H1", …, layer-major
  std::vector<double> head_step;                    // (P) the steps they were measured at
  std::vector<std::vector<double>> induction;       // [P][K] induction score
  std::vector<std::vector<double>> previous_token;  // [P][K] previous-token score
  double final_exact_match = -1;                    // −1: no final evaluation recorded
  bool diverged() const;                            // a non-finite loss was recorded
};

// Reads the "stepformer.metrics/1" JSON a Trainer records (Trainer::metrics(), .metrics.json).
// A field of the wrong type is an error, never an exception.
Result<RunCurves> curves_from_metrics(const nlohmann::json& m, const std::string& label);
Result<RunCurves> curves_from_metrics_file(const std::string& path, const std::string& label);

// Brings curves read from a growing metrics document up to date: appends only the steps,
// evaluations and probes recorded since (the document only grows), so a live view reads each
// number once. The same result as curves_from_metrics on the whole document.
Result<bool> update_curves(RunCurves& c, const nlohmann::json& m);

}  // namespace sf
