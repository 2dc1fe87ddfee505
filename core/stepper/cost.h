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
  int64_t projections = 0;   // Q, K, V, O: 2·rows·d² each (cross K/V over the memory included);
                             // decoder self-attention: Q, O 2·rows·d·d_attn, K, V 2·rows·d·h_kv·d_k
  int64_t attention = 0;     // Q_h K_hᵀ and P_h V_h over all query heads: 2·n_q·n_k·h·d_k each
  int64_t feed_forward = 0;  // fc1 and fc2 (and a gated MLP's gate): 2·rows·d·dff each
  int64_t generator = 0;     // logits: 2·rows·d·V
  int64_t total() const { return projections + attention + feed_forward + generator; }
};

// A teacher-forced forward pass: encoder over n_src tokens (0 for decoder-only) and decoder
// (with generator) over n_tgt tokens.
FlopCount forward_flops(const Config& c, int n_src, int n_tgt);

// The same forward counting only the products a causal mask leaves: decoder self-attention's
// scores and P·V over each query's keys up to itself, n(n + 1)/2 pairs rather than n². The forward
// skips the rest (model/attention.h's QueryBlocks); the benchmarks count this as the work done.
FlopCount causal_forward_flops(const Config& c, int n_src, int n_tgt);

// One decoding step whose decoder input is t tokens long (producing the t-th output token).
// cached: only the newest row runs; the cross-attention K/V are not counted (computed once, see
// cross_kv_setup_flops). Not cached: the whole decoder over t rows, cross K/V and the generator on
// every row included (that is what a recomputing step runs).
FlopCount decode_step_flops(const Config& c, int n_src, int t, bool cached);
// Cross-attention K/V of every decoder layer, computed once per source: L · 2 · (2·n_src·d²).
int64_t cross_kv_setup_flops(const Config& c, int n_src);

// Bytes of one cached K or V element: stepformer keeps its caches in float32, whatever the
// dtype of the weights file.
constexpr int kKvBytesPerElement = 4;

// Self-attention KV cache of one sequence holding `tokens` positions ("Transformer Architecture",
// KV-Cache for reducing inference redundancy): K and V, 2 × L × h_kv × d_k × tokens × 4 bytes.
// Without grouped-query attention h_kv · d_k = d, the lecture's 2 × L × tokens × d × 4.
int64_t kv_cache_bytes(const Config& c, int tokens);
// The same cache if every query head kept K/V heads of its own (multi-head attention):
// 2 × L × h × d_k × tokens × 4. Equals kv_cache_bytes without grouped-query attention.
int64_t mha_kv_cache_bytes(const Config& c, int tokens);

// Grouped-query attention (Ainslie et al. 2023): query head h reads K/V head h ÷ (h_q ÷ h_kv),
// the forward pass's Heads::kv_of (transformers' repeat_kv).
int kv_head_of(const Config& c, int query_head);
// For each K/V head g, the query heads that share it, in order: (h_kv) lists of h_q ÷ h_kv heads.
std::vector<std::vector<int>> query_heads_by_kv_head(const Config& c);

// The KV-cache cost table as of one moment of a decode, per decoder layer and in total, next to
// what a multi-head cache of the same model would hold.
struct KvCacheRow {
  int layer = 0;
  int tokens = 0;         // positions this layer holds
  int64_t bytes = 0;      // 2 × h_kv × d_k × tokens × 4 × sequences
  int64_t mha_bytes = 0;  // 2 × h × d_k × tokens × 4 × sequences
  // mha_bytes ÷ bytes (= h ÷ h_kv); 0 while the layer holds nothing.
  double saved() const { return bytes > 0 ? static_cast<double>(mha_bytes) / static_cast<double>(bytes) : 0.0; }
};
struct KvCacheTable {
  int query_heads = 0;  // h
  int kv_heads = 0;     // h_kv
  int group = 1;        // h ÷ h_kv query heads per K/V head
  int d_k = 0;          // per head
  int bytes_per_element = kKvBytesPerElement;
  int sequences = 1;  // hypotheses holding a cache
  std::vector<KvCacheRow> layers;
  int64_t bytes = 0;      // sum over layers
  int64_t mha_bytes = 0;  // sum over layers
  // mha_bytes ÷ bytes (= group); 1 for multi-head attention, 0 while nothing is cached.
  double saved() const { return bytes > 0 ? static_cast<double>(mha_bytes) / static_cast<double>(bytes) : 0.0; }
};
// tokens_per_layer: (L_dec) positions each decoder layer holds.
KvCacheTable kv_cache_table(const Config& c, const std::vector<int>& tokens_per_layer, int sequences);
// Cross-attention K/V kept for one sequence: 2 × L × n_src × d × 4 (encoder-decoder only).
int64_t cross_kv_bytes(const Config& c, int n_src);
// One attention layer's maps: heads × n_q × n_k floats × 4 bytes.
int64_t attention_map_bytes(const Config& c, int n_q, int n_k);

// Everything the cost panel shows for one moment of a decode.
struct CostReport {
  std::vector<ParamCount> params;  // per component
  int64_t params_total = 0;
  int64_t weight_bytes = 0;       // params_total × 4: what one uncached token must read at least once
                                  // (a Session's: the weights as held, held_bytes — matrices kept 16-bit count 2)
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
