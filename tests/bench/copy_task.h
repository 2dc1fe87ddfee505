// copy_task.h — the training benchmarks' configuration (train_bench, train_breakdown_bench): the
// copy task, d_model 128, 4 heads, 2+2 layers, d_ff 512, batch 64, length 10, vocabulary 11
// (7 symbols + the 4 specials), no dropout, Adam at a constant 1e-3, label smoothing 0.
#pragma once

#include <cstdint>

#include "train/trainer.h"

namespace sf {

inline TrainOptions copy_options(NormPlacement norm, int threads, uint64_t seed) {
  TrainOptions o;
  o.task = "copy";
  o.task_options = {10, 10, 7};
  o.norm = norm;
  o.encoder_layers = o.decoder_layers = 2;
  o.d_model = 128;
  o.n_heads = 4;
  o.d_ff = 512;
  o.batch = 64;
  o.steps = 1 << 30;
  o.seed = seed;
  o.schedule.kind = Schedule::Constant;
  o.schedule.rate = 1e-3;
  o.label_smoothing = 0.0f;
  o.dropout = 0.0f;
  o.eval_every = 0;
  o.probe_every = 0;
  o.threads = threads;
  return o;
}

}  // namespace sf
