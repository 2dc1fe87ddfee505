#include "reference/decoder_family.h"

#include <utility>

#include "reference/feed_forward.h"
#include "reference/gated_feed_forward.h"
#include "reference/grouped_attention.h"
#include "reference/half_linear.h"
#include "reference/layer_norm.h"
#include "reference/linear.h"
#include "reference/mask.h"
#include "reference/rms_norm.h"
#include "reference/rotary.h"
#include "reference/sliding_window.h"

namespace sf::ref {

Mat rotate_heads(const Mat& x, int heads, const RowVec& theta) {
  std::vector<Mat> out;  // [head] (n, d_k)
  for (int h = 0; h < heads; ++h) out.push_back(rotary(split_head(x, h, heads), theta, 0));
  return concat_heads(out);
}

Mat family_norm(const Config& c, const Mat& x, const LayerNormWeights& w) {
  return c.norm_kind == NormKind::RMSNorm ? rms_norm(x, w) : layer_norm(x, w);
}

Mat family_mlp(const Config& c, const Mat& x, const FeedForwardWeights& w) {
  return c.mlp == Mlp::Gated ? gated_feed_forward(w, c.activation, x) : feed_forward(w, c.activation, x);
}

MultiHeadAttention family_self_attention(const Config& c, const AttentionWeights& w, const Mat& h, const RowVec& theta,
                                         const Mat& mask) {
  const Mat q = rotate_heads(linear(h, w.q_proj), c.n_heads, theta);     // (n, h·d_k)
  const Mat k = rotate_heads(linear(h, w.k_proj), c.kv_heads(), theta);  // (n, h_kv·d_k)
  const Mat v = linear(h, w.v_proj);                                     // (n, h_kv·d_k)
  return grouped_query_attention(w, c.n_heads, c.kv_heads(), q, k, v, mask);
}

FamilyLayer family_layer(const Config& c, const DecoderLayerWeights& w, const Mat& x, const RowVec& theta,
                         const Mat& mask) {
  const MultiHeadAttention a = family_self_attention(c, w.self_attn, family_norm(c, x, w.norm1), theta, mask);
  if (c.residual == Residual::Parallel)
    return {family_mlp(c, family_norm(c, x, w.norm2), w.ffn) + a.out + x, a.weights};
  const Mat y = x + a.out;  // (n, d)
  return {y + family_mlp(c, family_norm(c, y, w.norm2), w.ffn), a.weights};
}

FamilyDecoder family_decoder(const Model& m, const std::vector<int>& ids) {
  const Config& c = m.config;
  const int n = static_cast<int>(ids.size());
  const RowVec theta = rotary_frequencies(c);  // (r/2)
  // (n, n): causal, or banded for Mistral's sliding window
  const Mat mask = c.sliding_window > 0 ? sliding_window_mask(n, n, c.sliding_window) : causal_mask(n, n);
  Mat x(n, c.d_model);  // (n, d)
  const Mat widened = target_table_if_half(m.weights);
  const Mat& table = widened.size() ? widened : m.weights.tgt_embed;  // (V, d)
  for (int t = 0; t < n; ++t) x.row(t) = table.row(ids[static_cast<size_t>(t)]);
  FamilyDecoder r;
  for (const DecoderLayerWeights& l : m.weights.decoder) {
    FamilyLayer layer = family_layer(c, l, x, theta, mask);
    x = std::move(layer.out);
    r.self_weights.push_back(std::move(layer.weights));
  }
  x = family_norm(c, x, m.weights.decoder_norm);
  r.logits = x * generator_weight(m).transpose();  // (n, V)
  return r;
}

}  // namespace sf::ref
