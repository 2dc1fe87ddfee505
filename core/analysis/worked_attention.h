// worked_attention.h — one query attending over a few keys, every intermediate number kept: the
// lectures' worked example ("Transformer Architecture", "Attention is All You Need — Transformer
// in details": "Thinking Machines", q·k = 112 and 96, ÷ √64 → 14 and 12, softmax → 0.88 and 0.12)
// computed by the model's own softmax, for the explorer's worked-example panel.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace sf {

struct WorkedAttention {
  int d_k = 0;                 // the length of q and of every key
  float sqrt_dk = 0;           // √d_k
  std::vector<float> dots;     // [j] q·k_j
  std::vector<float> scaled;   // [j] q·k_j / √d_k
  float max = 0;               // the largest scaled score (subtracted before exp)
  std::vector<float> exps;     // [j] exp(scaled_j − max)
  float sum = 0;               // Σ_j exps_j
  std::vector<float> weights;  // [j] softmax: exps_j / sum, as the model's masked_softmax gives them
  std::vector<float> out;      // (d_v) Σ_j weights_j · v_j
};

// q (d_k), keys [n] (d_k each), values [n] (d_v each, all the same length). Error names the
// vector whose length is wrong; n ≥ 1.
Result<WorkedAttention> worked_attention(const std::vector<float>& q, const std::vector<std::vector<float>>& keys,
                                         const std::vector<std::vector<float>>& values);

}  // namespace sf
