#include "reference/encoder.h"

#include "reference/attention.h"
#include "reference/embedding.h"
#include "reference/feed_forward.h"
#include "reference/mask.h"
#include "reference/residual.h"

namespace sf::ref {

Mat source_mask(const Model& m, const std::vector<int>& src_ids, int n_q) {
  return padding_mask(n_q, src_ids, m.config.src_vocab.pad());
}

EncoderLayer encoder_layer(const Config& c, const EncoderLayerWeights& w, const Mat& x, const Mat& mask) {
  EncoderLayer layer;
  const Mat y = sublayer_connection(c.norm, x, w.norm1, [&](const Mat& h) {
    MultiHeadAttention a = multi_head_attention(w.self_attn, c.encoder_heads(), h, h, mask);
    layer.self_weights = a.weights;
    return a.out;
  });  // (n, d)
  layer.out =
      sublayer_connection(c.norm, y, w.norm2, [&](const Mat& h) { return feed_forward(w.ffn, c.activation, h); });
  return layer;
}

Encoder encoder(const Model& m, const std::vector<int>& src_ids) {
  const Config& c = m.config;
  const Mat mask = source_mask(m, src_ids, static_cast<int>(src_ids.size()));  // (n, n)
  Encoder enc;
  Mat x = embed(m, src_ids, /*source=*/true);  // (n, d)
  for (const EncoderLayerWeights& w : m.weights.encoder) {
    EncoderLayer layer = encoder_layer(c, w, x, mask);
    x = layer.out;
    enc.self_weights.push_back(layer.self_weights);
  }
  enc.memory = stack_output(c.norm, x, m.weights.encoder_norm);
  return enc;
}

}  // namespace sf::ref
