// decoder.h — the decoder stack, run on a chunk of new target tokens.
//
// Per layer: masked self-attention (causal ∧ target padding), cross-attention over the encoder
// memory (encoder-decoder only, source padding mask), feed-forward — each in the residual/LN
// connection of the model's norm placement; then the final LN (pre-LN) and the generator.
//
// One function serves every use: teacher forcing and training (the whole target, no cache),
// a decoder-only prefill (the prompt into an empty cache), and a decoding step (one token, with
// the cache). Without a cache the chunk is the whole sequence.
#pragma once

#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "model/trace.h"

namespace sf {

// The encoder side a decoder reads (encoder-decoder models); null members for decoder-only.
struct EncoderContext {
  const Mat* memory = nullptr;                // (B·n, d)
  const std::vector<int>* src_ids = nullptr;  // (B·n) for the source padding mask
};

// tgt_ids (B·m): the new tokens; with a cache (holding the same B sequences) they sit at
// positions cache->length .. cache->length + m − 1 and are appended to it. Returns logits (B·m, V);
// with a compact recording of one sequence (a stepper Session's step, model/recording.h) only the
// last row's (1, V): a 1,000-token prefill's other rows are 200 MB and 40 % of its products.
Mat decode(const Model& m, const std::vector<int>& tgt_ids, int batch, const EncoderContext& enc, KvCache* cache,
           DecoderTrace* tr, const RunOptions& opt = {});

}  // namespace sf
