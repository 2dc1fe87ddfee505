// kv_cache.h — keys and values a decoder has already computed, so a decoding step only projects
// the newest token (seed 004, "KV-Cache for reducing inference redundancy").
//
// Self-attention K and V grow by one row per decoded token, per layer (all heads side by side:
// head h is columns [h·dk, (h+1)·dk)). Cross-attention K and V depend only on the encoder memory,
// so they are computed once and reused at every step. Two plain buffers indexed by position,
// preallocated to max_len rows, so appending never copies.
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor.h"

namespace sf {

struct KvCacheLayer {
  Mat self_k;   // (max_len, d) rows [0, length) are valid
  Mat self_v;   // (max_len, d)
  Mat cross_k;  // (n_src, d) computed once from the memory
  Mat cross_v;  // (n_src, d)
  bool cross_ready = false;
};

struct KvCache {
  std::vector<KvCacheLayer> layers;
  std::vector<int> ids;       // (length) token id of each cached position (for the padding mask)
  std::vector<int> row_step;  // (length) the decoding step at which each row came in
  int length = 0;             // cached positions
  int step = 0;               // decode calls so far (a prefill counts as one step)

  void reset(int n_layers, int max_len, int d);
  // 2 × layers × length × d × 4: the self-attention part, which grows (seed 004's formula).
  int64_t self_bytes() const;
  // Cross-attention K and V, fixed once computed: 2 × layers × n_src × d × 4.
  int64_t cross_bytes() const;
  int64_t bytes() const { return self_bytes() + cross_bytes(); }
};

}  // namespace sf
