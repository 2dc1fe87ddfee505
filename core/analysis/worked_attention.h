// worked_attention.h — one query attending over a few keys, every intermediate number kept: the
// lectures' worked example ("Transformer Architecture", "Attention is All You Need — Transformer
// in details": "Thinking Machines", q·k = 112 and 96, ÷ √64 → 14 and 12, softmax → 0.88 and 0.12)
// computed by the model's own softmax, for the explorer's worked-example panel.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "model/attention.h"

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

// One cell (query i, key j) of one head of a recorded attention, written out step by step as the
// Q, K, V panel shows it: q_i and k_j (the K/V head the query head reads), their product term by
// term, the recorded raw score, ÷ √d_k, + mask, and the softmax over the row's visible keys.
struct AttentionCell {
  int d_k = 0;
  std::vector<float> q, k, prod;  // (d_k) q_i, k_j and q_i ⊙ k_j
  float dot = 0;                  // Σ_c prod_c
  float raw = 0;                  // the recorded Q_h K_hᵀ entry; NaN: the key did not exist yet
  float sqrt_dk = 0;              // √d_k
  float scaled = 0;               // raw / √d_k, as the forward rounded it (raw × scale)
  float mask = 0;                 // 0 or −inf
  bool computed = false;          // raw is a number
  bool masked = false;            // mask is −inf: the weight is exactly 0
  int visible = 0;                // keys of row i with a finite mask and a computed score
  float row_max = 0;              // m = max over those keys of their scaled score
  float exp_sum = 0;              // Σ_j exp(s_j − m) over those keys
  float exp_cell = 0;             // exp(scaled − m)
  float softmax = 0;              // exp_cell / exp_sum (0 when masked or not computed)
  float weight = 0;               // the recorded weight
  std::vector<float> row;         // (n_k) the row's scores + mask: s_j, or −inf where masked
};

// Batch element 0, query head `head`; i, j inside the weights.
AttentionCell attention_cell(const AttentionTrace& a, int head, int i, int j);
// The same with the head's raw scores and weights (n_q, n_k) given apart from the recording (a
// view that keeps Q, K and the mask and computes a head's map on demand, analysis/head_maps.h).
AttentionCell attention_cell(const AttentionTrace& a, const Mat& raw, const Mat& weights, int head, int i, int j);

}  // namespace sf
