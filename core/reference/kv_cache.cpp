#include "reference/kv_cache.h"

#include "reference/attention.h"
#include "reference/decoder.h"
#include "reference/embedding.h"
#include "reference/generator.h"
#include "reference/linear.h"
#include "reference/mask.h"
#include "reference/residual.h"

namespace sf::ref {

KvCache start_cache(const Model& m, const Mat* memory, const std::vector<int>& src_ids) {
  KvCache cache;
  cache.src_ids = src_ids;
  for (const DecoderLayerWeights& w : m.weights.decoder) {
    KvCacheLayer layer;  // k and v empty: no token yet
    if (memory) {
      layer.cross_k = linear(*memory, w.cross_attn.k_proj);  // (n_src, d)
      layer.cross_v = linear(*memory, w.cross_attn.v_proj);  // (n_src, d)
    }
    cache.layers.push_back(layer);
  }
  return cache;
}

void append_row(Mat& buffer, const Mat& row) {
  buffer.conservativeResize(buffer.rows() + 1, row.cols());  // (t + 1, d), the t rows kept
  buffer.bottomRows(1) = row;
}

namespace {

// One decoder layer on the new token's row x (1, d): its key and value join the layer's cache, and
// its query attends over every cached row and over the memory's K and V.
DecoderLayer decoder_layer_step(const Config& c, const DecoderLayerWeights& w, KvCacheLayer& kv, const Mat& x,
                                const Mat& self_mask, const Mat& cross_mask) {
  const AttentionSublayer self = [&](const Mat& h) {
    append_row(kv.k, linear(h, w.self_attn.k_proj));  // (t + 1, d)
    append_row(kv.v, linear(h, w.self_attn.v_proj));  // (t + 1, d)
    return attend_heads(w.self_attn, c.n_heads, linear(h, w.self_attn.q_proj), kv.k, kv.v, self_mask);
  };
  const AttentionSublayer cross = [&](const Mat& h) {
    return attend_heads(w.cross_attn, c.n_heads, linear(h, w.cross_attn.q_proj), kv.cross_k, kv.cross_v, cross_mask);
  };
  return decoder_layer(c, w, x, self, c.has_cross_attention() ? &cross : nullptr);
}

}  // namespace

DecoderStep decoder_step(const Model& m, KvCache& cache, int token) {
  const Config& c = m.config;
  const int t = static_cast<int>(cache.ids.size());  // the new token's position
  cache.ids.push_back(token);
  const Mat self_mask = target_mask(m, cache.ids, 1, t);    // (1, t + 1)
  const Mat cross_mask = source_mask(m, cache.src_ids, 1);  // (1, n_src)
  DecoderStep step;
  Mat x = embed(m, {token}, /*source=*/false, t);  // (1, d)
  for (size_t l = 0; l < cache.layers.size(); ++l) {
    DecoderLayer layer = decoder_layer_step(c, m.weights.decoder[l], cache.layers[l], x, self_mask, cross_mask);
    x = layer.out;
    step.self_weights.push_back(layer.self_weights);
    if (c.has_cross_attention()) step.cross_weights.push_back(layer.cross_weights);
  }
  step.logits = generator(m, stack_output(c.norm, x, m.weights.decoder_norm));  // (1, V)
  return step;
}

}  // namespace sf::ref
