#include "reference/decoder.h"

#include "reference/embedding.h"
#include "reference/feed_forward.h"
#include "reference/generator.h"
#include "reference/mask.h"
#include "reference/residual.h"

namespace sf::ref {

Mat target_mask(const Model& m, const std::vector<int>& key_ids, int n_q, int q_offset) {
  Mat mask = causal_mask(n_q, static_cast<int>(key_ids.size()), q_offset);  // (n_q, n_k)
  if (m.config.decoder_pad_mask) mask += padding_mask(n_q, key_ids, m.config.tgt_vocab.pad());
  return mask;
}

DecoderLayer decoder_layer(const Config& c, const DecoderLayerWeights& w, const Mat& x, const AttentionSublayer& self,
                           const AttentionSublayer* cross) {
  DecoderLayer layer;
  Mat y = sublayer_connection(c.norm, x, w.norm1, [&](const Mat& h) {
    MultiHeadAttention a = self(h);
    layer.self_weights = a.weights;
    return a.out;
  });  // (n_q, d)
  if (cross)
    y = sublayer_connection(c.norm, y, w.norm2, [&](const Mat& h) {
      MultiHeadAttention a = (*cross)(h);
      layer.cross_weights = a.weights;
      return a.out;
    });
  if (!c.has_ffn()) {  // an attention-only layer
    layer.out = y;
    return layer;
  }
  layer.out = sublayer_connection(c.norm, y, w.ffn_norm(c.arch),
                                  [&](const Mat& h) { return feed_forward(w.ffn, c.activation, h); });
  return layer;
}

Decoder decoder(const Model& m, const std::vector<int>& tgt_ids, const Mat* memory, const std::vector<int>& src_ids) {
  const Config& c = m.config;
  const int n = static_cast<int>(tgt_ids.size());
  const Mat self_mask = target_mask(m, tgt_ids, n);                    // (m, m)
  const Mat cross_mask = memory ? source_mask(m, src_ids, n) : Mat();  // (m, n_src)
  Decoder dec;
  Mat x = embed(m, tgt_ids, /*source=*/false);  // (m, d)
  for (const DecoderLayerWeights& w : m.weights.decoder) {
    const AttentionSublayer self = [&](const Mat& h) {
      return multi_head_attention(w.self_attn, c.n_heads, h, h, self_mask);
    };
    const AttentionSublayer cross = [&](const Mat& h) {
      return multi_head_attention(w.cross_attn, c.n_heads, h, *memory, cross_mask);
    };
    DecoderLayer layer = decoder_layer(c, w, x, self, memory ? &cross : nullptr);
    x = layer.out;
    dec.self_weights.push_back(layer.self_weights);
    if (memory) dec.cross_weights.push_back(layer.cross_weights);
  }
  dec.output = stack_output(c.norm, x, m.weights.decoder_norm);
  dec.logits = generator(m, dec.output);
  return dec;
}

}  // namespace sf::ref
