// bench_common.h — pieces the benchmarks share.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// A model of shape `c` with Xavier-random weights and word vocabularies of `vocab` entries
// (<pad> <s> </s> <unk> w4 w5 …): the target's, and the source's when `c` has an encoder. Set up
// for inference as load_model does (pack_for_inference).
inline Model random_model(Config c, int vocab, uint64_t seed = 1) {
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(v.size()) < vocab) v.push_back("w" + std::to_string(v.size()));
  if (c.has_encoder()) c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  Weights w;
  init_xavier(w, c, seed);
  pack_for_inference(w);
  return Model::make(std::move(c), std::move(w));
}

// GPT-2 small's shape (the hub's gpt2): d_model 768, 12 heads, 12 layers, d_ff 3072, 1024
// positions, pre-LN, tanh-GELU, learned positions, output tied to the token embedding, no √d
// embedding scale; use with random_model(c, 50257): 124 M parameters, 475 MiB of float32.
inline Config gpt2_small_config() {
  Config c;
  c.arch = Arch::DecoderOnly;
  c.d_model = 768;
  c.n_heads = 12;
  c.n_decoder_layers = 12;
  c.d_ff = 3072;
  c.max_len = 1024;
  c.norm = NormPlacement::Pre;
  c.activation = Activation::GeluTanh;
  c.positional = Positional::Learned;
  c.share_embeddings = true;
  c.scale_embeddings = false;
  return c;
}

// The work of a figure, from the shapes alone, as scripts/bench.sh reports it: FLOPs of the matrix
// products (stepper/cost.h's count, the one the cost panel shows), and for a cached decoding step
// the bytes it must read at least once.
inline double flops(const FlopCount& f) { return static_cast<double>(f.total()); }

// What one cached decoding step reads, in bytes of float32: every weight matrix it multiplies by
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

inline StepBytes decode_step_bytes(const Config& c, int n_src, int t) {
  const int64_t d = c.d_model, da = c.d_attn(), dkv = c.d_kv(), dff = c.d_ff;
  int64_t floats = 0;
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    floats += 2 * d * da + 2 * d * dkv;
    if (c.has_encoder()) floats += 2 * d * d;
    if (c.has_ffn()) floats += (c.mlp == Mlp::Gated ? 3 : 2) * d * dff;
  }
  floats += d * c.tgt_vocab.size();
  StepBytes b;
  b.weights = floats * 4;
  b.kv = kv_cache_bytes(c, t) + cross_kv_bytes(c, n_src);
  b.mha_kv = mha_kv_cache_bytes(c, t) + cross_kv_bytes(c, n_src);
  return b;
}

// Sets the counters scripts/bench_table.py reads for a cached step at decoder input length t.
inline void step_counters(benchmark::State& state, const Config& c, int n_src, int t) {
  const StepBytes b = decode_step_bytes(c, n_src, t);
  state.counters["flops"] = flops(decode_step_flops(c, n_src, t, true));
  state.counters["bytes"] = static_cast<double>(b.total());
  state.counters["kv_bytes"] = static_cast<double>(b.kv);
  state.counters["mha_bytes"] = static_cast<double>(b.mha_total());
}

}  // namespace sf
