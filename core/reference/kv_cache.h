// kv_cache.h — decoding one token at a time with a KV cache.
//
// "Transformer Architecture" (its longer version), KV-Cache for reducing
// inference redundancy: a new token's query needs the keys and values of every earlier token,
// which do not change; keep them, and each step projects only the new token. Cross-attention's
// keys and values come from the encoder's memory alone: computed once, before the first step.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"
#include "reference/encoder.h"

namespace sf::ref {

struct KvCacheLayer {
  Mat k;        // (t, d) self-attention keys of the t tokens so far: one row more per step
  Mat v;        // (t, d) their values
  Mat cross_k;  // (n_src, d) the memory's keys, computed once (empty without an encoder)
  Mat cross_v;  // (n_src, d) the memory's values
};

struct KvCache {
  std::vector<KvCacheLayer> layers;  // one per decoder layer
  std::vector<int> ids;              // (t) the tokens so far, for the padding mask
  std::vector<int> src_ids;          // (n_src) the source, for cross-attention's padding mask
};

// An empty cache for `m`; with an encoder, each layer's cross K = memory W_Kᵀ and V = memory W_Vᵀ.
// memory (n_src, d) and src_ids (n_src), or memory = nullptr for a decoder-only model.
KvCache start_cache(const Model& m, const Mat* memory, const std::vector<int>& src_ids);

// Appends row (1, d) to buffer (t, d), which becomes (t + 1, d); an empty buffer takes the row's width.
void append_row(Mat& buffer, const Mat& row);

struct DecoderStep {
  RowVec logits;                // (V) scores for the token after `token`
  AttentionMaps self_weights;   // [layer][head] (1, t + 1) the new token over every cached one
  AttentionMaps cross_weights;  // [layer][head] (1, n_src); empty without an encoder
};

// One decoding step: `token` at position t = cache.ids.size() goes through every layer; each
// layer appends its key and value to the cache and attends over all t + 1 of them.
DecoderStep decoder_step(const Model& m, KvCache& cache, int token);

}  // namespace sf::ref
