#include "reference/ablation.h"

#include <algorithm>

#include "reference/decoder.h"
#include "reference/embedding.h"
#include "reference/encoder.h"
#include "reference/feed_forward.h"
#include "reference/generator.h"
#include "reference/linear.h"
#include "reference/residual.h"

namespace sf::ref {

Mat ablate(Ablate mode, const Mat& x) {
  if (mode == Ablate::Zero) return Mat::Zero(x.rows(), x.cols());  // (n, w)
  return x.colwise().mean().replicate(x.rows(), 1);                // (n, w) each row the column means
}

MultiHeadAttention ablated_multi_head_attention(const AttentionWeights& w, int n_heads, const Mat& x_q, const Mat& x_kv,
                                                const Mat& mask, const std::vector<int>& removed, Ablate mode) {
  const Mat q = linear(x_q, w.q_proj);   // (n_q, d)
  const Mat k = linear(x_kv, w.k_proj);  // (n_k, d)
  const Mat v = linear(x_kv, w.v_proj);  // (n_k, d)
  MultiHeadAttention mha;
  std::vector<Mat> heads;  // h × (n_q, d_k)
  for (int h = 0; h < n_heads; ++h) {
    Attention a = scaled_dot_product_attention(split_head(q, h, n_heads), split_head(k, h, n_heads),
                                               split_head(v, h, n_heads), mask);
    const bool out = std::find(removed.begin(), removed.end(), h) != removed.end();
    heads.push_back(out ? ablate(mode, a.out) : a.out);
    mha.weights.push_back(a.weights);
  }
  mha.out = linear(concat_heads(heads), w.o_proj);  // (n_q, d)
  return mha;
}

namespace {

// The heads of `layer` among (layer, head) pairs.
std::vector<int> heads_of(const std::vector<LayerHead>& all, int layer) {
  std::vector<int> heads;
  for (const LayerHead& lh : all)
    if (lh.layer == layer) heads.push_back(lh.head);
  return heads;
}

}  // namespace

Output ablated_forward(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& tgt_ids,
                       const DecoderAblation& a) {
  const Config& c = m.config;
  Output out;
  const bool cross = c.has_cross_attention();
  if (cross) out.memory = encoder(m, src_ids).memory;  // (n, d)
  const int n = static_cast<int>(tgt_ids.size());
  const Mat self_mask = target_mask(m, tgt_ids, n);                   // (m, m)
  const Mat cross_mask = cross ? source_mask(m, src_ids, n) : Mat();  // (m, n_src)
  Mat x = embed(m, tgt_ids, /*source=*/false);                        // (m, d)
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    const DecoderLayerWeights& w = m.weights.decoder[static_cast<size_t>(l)];
    // The decoder block of decoder.h: y = Connection(x, SelfAttention(x));
    // z = Connection(y, CrossAttention(y, memory)); out = Connection(z, FFN(z)).
    x = sublayer_connection(c.norm, x, w.norm1, [&](const Mat& h) {
      MultiHeadAttention s =
          ablated_multi_head_attention(w.self_attn, c.n_heads, h, h, self_mask, heads_of(a.self_heads, l), a.mode);
      out.decoder_self.push_back(s.weights);
      return s.out;
    });  // (m, d)
    if (cross)
      x = sublayer_connection(c.norm, x, w.norm2, [&](const Mat& h) {
        MultiHeadAttention s = ablated_multi_head_attention(w.cross_attn, c.n_heads, h, out.memory, cross_mask,
                                                            heads_of(a.cross_heads, l), a.mode);
        out.decoder_cross.push_back(s.weights);
        return s.out;
      });
    if (!c.has_ffn()) continue;  // an attention-only layer
    const bool removed = std::find(a.mlps.begin(), a.mlps.end(), l) != a.mlps.end();
    x = sublayer_connection(c.norm, x, w.ffn_norm(c.arch), [&](const Mat& h) {
      const Mat f = feed_forward(w.ffn, c.activation, h);  // (m, d)
      return removed ? ablate(a.mode, f) : f;
    });
  }
  out.logits = generator(m, stack_output(c.norm, x, m.weights.decoder_norm));  // (m, V)
  return out;
}

}  // namespace sf::ref
