// kv_cache.h — keys and values a decoder has already computed, so a decoding step only projects
// the newest token ("Transformer Architecture" lecture, KV-Cache for reducing inference redundancy).
//
// Self-attention K and V grow by one row per decoded token, per layer (all heads side by side:
// head h is columns [h·dk, (h+1)·dk)). Cross-attention K and V depend only on the encoder memory,
// so they are computed once and reused at every step. Two plain buffers indexed by position,
// preallocated to max_len rows (at most kKvInitialRows: a real model's max_len of 32,768 would
// hold hundreds of MB of zeros), grown by doubling when a step needs more rows.
// A model with grouped-query attention stores only its h_kv K/V heads: rows of h_kv·dk floats.
//
// One cache can hold B sequences of equal length decoded together (batched greedy decoding):
// sequence b owns rows [b·max_len, (b+1)·max_len) of the self-attention buffers and rows
// [b·n_src, (b+1)·n_src) of the cross-attention K/V (the batched memory's layout).
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor.h"

namespace sf {

constexpr int kKvInitialRows = 1024;

struct KvCacheLayer {
  Mat self_k;   // (B·capacity, h_kv·dk) rows [b·capacity, b·capacity + length) are valid
  Mat self_v;   // (B·capacity, h_kv·dk)
  Mat cross_k;  // (B·n_src, d) computed once from the memory
  Mat cross_v;  // (B·n_src, d)
  bool cross_ready = false;
};

struct KvCache {
  std::vector<KvCacheLayer> layers;
  std::vector<int> ids;       // (B·length) token id of each cached position, sequence by sequence
                              // (for the padding mask)
  std::vector<int> row_step;  // (length) the decoding step at which each row came in
  int batch = 1;              // sequences held (B)
  int capacity = 0;           // rows per sequence held by the buffers (≤ max_len)
  int max_len = 0;            // rows per sequence the model allows
  int length = 0;             // cached positions per sequence
  int step = 0;               // decode calls so far (a prefill counts as one step)

  // d_kv: the width of a K/V row (Config::d_kv()).
  void reset(int n_layers, int max_len, int d_kv, int batch = 1);
  // Grows the buffers (keeping every sequence's cached rows) to hold `rows` rows per sequence.
  void reserve(int rows);
  // The ids of sequence b's cached positions (length).
  std::vector<int> sequence_ids(int b) const;
  // Appends m new tokens to each sequence: new_ids (B·m) sequence by sequence.
  void append_ids(const std::vector<int>& new_ids);
  // 2 × layers × length × d × 4 × B: the self-attention part, which grows (the lecture's formula).
  int64_t self_bytes() const;
  // Cross-attention K and V, fixed once computed: 2 × layers × n_src × d × 4.
  int64_t cross_bytes() const;
  int64_t bytes() const { return self_bytes() + cross_bytes(); }
};

}  // namespace sf
