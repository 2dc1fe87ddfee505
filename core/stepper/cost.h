// cost.h — what a model costs to store and to run, as in the "Transformer Architecture" lecture's cost tables, as
// numbers the UI shows next to the stepper.
//
// Conventions (that lecture, FLOPS of Matrix Multiplication): a product (n × k)·(k × m) costs 2·n·k·m FLOPs (one
// multiply, one add). Only matrix products are counted; biases, softmax, LayerNorm, activations and residual adds are
// element-wise, O(n·d), and left out. Bytes are float32 (4 bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace sf {

// Parameter count per component, from the configuration alone (no weights needed), in the
// order and with the names of count_params_by_component ("tgt_embed",
// "encoder.layers.0.self_attn" = 4d² + 4d, "encoder.layers.0.ffn" = 2·d·dff + dff + d, ...).
std::vector<ParamCount> param_counts(const Config& c);
int64_t param_total(const Config& c);

struct FlopCount {
  int64_t projections = 0;   // Q, K, V, O: 2·rows·d² each (cross K/V over the memory included)
  int64_t attention = 0;     // Q_h K_hᵀ and P_h V_h over all heads: 2·n_q·n_k·d each
  int64_t feed_forward = 0;  // fc1 and fc2: 2·rows·d·dff each
  int64_t generator = 0;     // logits: 2·rows·d·V
  int64_t total() const { return projections + attention + feed_forward + generator; }
};

// A teacher-forced forward pass: encoder over n_src tokens (0 for decoder-only) and decoder
// (with generator) over n_tgt tokens.
FlopCount forward_flops(const Config& c, int n_src, int n_tgt);

// One decoding step whose decoder input is t tokens long (producing the t-th output token).
// cached: only the newest row runs; the cross-attention K/V are not counted (computed once, see
// cross_kv_setup_flops). Not cached: the whole decoder over t rows, cross K/V and the generator on
// every row included (that is what a recomputing step runs).
FlopCount decode_step_flops(const Config& c, int n_src, int t, bool cached);
// Cross-attention K/V of every decoder layer, computed once per source: L · 2 · (2·n_src·d²).
int64_t cross_kv_setup_flops(const Config& c, int n_src);

// Self-attention KV cache of one sequence holding `tokens` positions: 2 × L × tokens × d × 4.
int64_t kv_cache_bytes(const Config& c, int tokens);
// Cross-attention K/V kept for one sequence: 2 × L × n_src × d × 4 (encoder-decoder only).
int64_t cross_kv_bytes(const Config& c, int n_src);
// One attention layer's maps: heads × n_q × n_k floats × 4 bytes.
int64_t attention_map_bytes(const Config& c, int n_q, int n_k);

// Everything the cost panel shows for one moment of a decode.
struct CostReport {
  std::vector<ParamCount> params;  // per component
  int64_t params_total = 0;
  int64_t weight_bytes = 0;       // params_total × 4: what one uncached token must read at least once
  int n_src = 0;                  // source tokens (0 for decoder-only)
  int t = 0;                      // decoder input length of the current step
  int sequences = 1;              // hypotheses decoded side by side (beam width)
  FlopCount forward;              // teacher-forced forward over (n_src, t)
  FlopCount step_cached;          // this step with the cache
  FlopCount step_uncached;        // this step by recomputation
  int64_t cross_setup_flops = 0;  // once per source
  int64_t kv_self_bytes = 0;      // sequences × kv_cache_bytes(t)
  int64_t kv_cross_bytes = 0;     // sequences × cross_kv_bytes(n_src)
  int64_t attn_map_bytes = 0;     // full forward's maps: encoder self + decoder self + cross, all layers
};
CostReport cost_report(const Config& c, int n_src, int t, int sequences);

}  // namespace sf
