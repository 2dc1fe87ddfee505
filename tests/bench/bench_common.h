// bench_common.h — pieces the benchmarks share.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../model_shapes.h"  // random_model, gpt2_small_config
#include "model/kv_cache.h"
#include "model/model.h"
#include "stepper/cost.h"

namespace sf {

// Rolls a single-sequence cache back by one row, so every iteration measures the same step t.
inline void drop_last_row(KvCache& c) {
  --c.length;
  --c.step;
  c.ids.pop_back();
  c.row_step.pop_back();
}

// The work of a figure, from the shapes alone, as scripts/bench.sh reports it: FLOPs of the matrix
// products (stepper/cost.h's count, the one the cost panel shows), and for a cached decoding step
// the bytes it must read at least once.
inline double flops(const FlopCount& f) { return static_cast<double>(f.total()); }

// What one cached decoding step reads, in bytes: every weight matrix it multiplies by, at
// `weight_bytes` per value (4 for float32, 2 for matrices kept BF16/F16: base/half.h)
// (per decoder layer Q, K, V, O — K and V h_kv·d_k wide under grouped-query attention — the
// cross-attention's Q and O, the feed-forward's two or three matrices; then the generator) and the
// K/V rows it attends over (t self-attention rows per layer, plus the cross-attention's n_src).
// Embedding lookups, norms and biases are O(d) and left out.
struct StepBytes {
  int64_t weights = 0;
  int64_t kv = 0;      // the cache as kept (h_kv K/V heads)
  int64_t mha_kv = 0;  // the same cache if every query head had K/V of its own
  int64_t total() const { return weights + kv; }
  int64_t mha_total() const { return weights + mha_kv; }
};

inline StepBytes decode_step_bytes(const Config& c, int n_src, int t, int64_t weight_bytes = 4) {
  const int64_t d = c.d_model, da = c.d_attn(), dkv = c.d_kv(), dff = c.d_ff;
  int64_t floats = 0;
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    floats += 2 * d * da + 2 * d * dkv;
    if (c.has_encoder()) floats += 2 * d * d;
    if (c.has_ffn()) floats += (c.mlp == Mlp::Gated ? 3 : 2) * d * dff;
  }
  floats += d * c.tgt_vocab.size();
  StepBytes b;
  b.weights = floats * weight_bytes;
  b.kv = kv_cache_bytes(c, t) + cross_kv_bytes(c, n_src);
  b.mha_kv = mha_kv_cache_bytes(c, t) + cross_kv_bytes(c, n_src);
  return b;
}

// Sets the counters scripts/bench_table.py reads for a cached step at decoder input length t, its
// weight matrices held at `weight_bytes` per value.
inline void step_counters(benchmark::State& state, const Config& c, int n_src, int t, int64_t weight_bytes = 4) {
  const StepBytes b = decode_step_bytes(c, n_src, t, weight_bytes);
  state.counters["weight_bits"] = static_cast<double>(8 * weight_bytes);
  state.counters["flops"] = flops(decode_step_flops(c, n_src, t, true));
  state.counters["bytes"] = static_cast<double>(b.total());
  state.counters["kv_bytes"] = static_cast<double>(b.kv);
  state.counters["mha_bytes"] = static_cast<double>(b.mha_total());
}

}  // namespace sf
