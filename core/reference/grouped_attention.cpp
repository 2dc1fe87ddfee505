#include "reference/grouped_attention.h"

#include "reference/linear.h"

namespace sf::ref {

MultiHeadAttention grouped_query_attention(const AttentionWeights& w, int n_heads, int n_kv_heads, const Mat& q,
                                           const Mat& k, const Mat& v, const Mat& mask) {
  MultiHeadAttention mha;
  std::vector<Mat> heads;                  // h × (n_q, d_k)
  const int group = n_heads / n_kv_heads;  // query heads per K/V head
  for (int h = 0; h < n_heads; ++h) {
    const int g = h / group;
    Attention a = scaled_dot_product_attention(split_head(q, h, n_heads), split_head(k, g, n_kv_heads),
                                               split_head(v, g, n_kv_heads), mask);
    heads.push_back(a.out);
    mha.weights.push_back(a.weights);
  }
  mha.out = linear(concat_heads(heads), w.o_proj);  // (n_q, d)
  return mha;
}

}  // namespace sf::ref
