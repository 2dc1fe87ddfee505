// bench_common.h — pieces the benchmarks share.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../model_shapes.h"  // random_model, gpt2_small_config
#include "model/decoder.h"
#include "model/encoder.h"
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

// The benchmarks' encoder-decoders (forward_bench's, decode_bench's), as their PyTorch peers
// (tests/bench/peers/torch_forward.py, torch_decode.py): ReLU, sinusoidal positions, and a
// vocabulary of kSeq2SeqVocab (random_model's argument).
constexpr int kSeq2SeqVocab = 1000;
inline Config seq2seq_config(int d, int h, int layers, int dff, NormPlacement norm, int max_len) {
  Config c;
  c.arch = Arch::EncoderDecoder;
  c.d_model = d;
  c.n_heads = h;
  c.n_encoder_layers = c.n_decoder_layers = layers;
  c.d_ff = dff;
  c.max_len = max_len;
  c.norm = norm;
  c.activation = Activation::Relu;
  c.positional = Positional::Sinusoidal;
  return c;
}

// forward_bench's model: post-LN, max_len 256.
inline Model seq2seq_model(int d, int h, int layers, int dff) {
  return random_model(seq2seq_config(d, h, layers, dff, NormPlacement::Post, 256), kSeq2SeqVocab);
}

// forward_bench's input to that model: n source and n target ids.
struct Seq2SeqInput {
  std::vector<int> src, tgt;
};
inline Seq2SeqInput seq2seq_input(int n) {
  Seq2SeqInput in;
  for (int i = 0; i < n; ++i) {
    in.src.push_back(4 + (i * 7) % 990);
    in.tgt.push_back(4 + (i * 11) % 990);
  }
  return in;
}

// forward_bench's timed work: the encoder and the decoder over `in` (batch 1), recording into a
// fresh trace when `record`; returns the logits.
inline Mat seq2seq_forward(const Model& m, const Seq2SeqInput& in, bool record) {
  Trace t;
  const Mat memory = encode(m, in.src, 1, record ? &t.encoder : nullptr);
  const EncoderContext enc{&memory, &in.src};
  return decode(m, in.tgt, 1, enc, nullptr, record ? &t.decoder : nullptr);
}

// decode_bench's base model (d_model 512, 8 heads, 6+6 layers, d_ff 2048, pre-LN, max_len 512),
// its 64 source tokens and their encoder memory.
struct DecodeBase {
  Model model;
  std::vector<int> src;  // (64)
  Mat memory;            // (64, 512)
};
inline DecodeBase decode_base() {
  DecodeBase b{random_model(seq2seq_config(512, 8, 6, 2048, NormPlacement::Pre, 512), kSeq2SeqVocab), {}, {}};
  for (int i = 0; i < 64; ++i) b.src.push_back(4 + (i * 7) % 990);
  b.memory = encode(b.model, b.src, 1, nullptr);
  return b;
}

// decode_bench's decoder input of t tokens: <s> then t − 1 ordinary tokens.
inline std::vector<int> decode_prefix(int t) {
  std::vector<int> ids{1};
  for (int i = 1; i < t; ++i) ids.push_back(4 + (i * 13) % 990);
  return ids;
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
