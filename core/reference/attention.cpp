#include "reference/attention.h"

#include <cmath>
#include <limits>

#include "reference/linear.h"

namespace sf::ref {

Mat softmax_rows(const Mat& s) {
  Mat p = Mat::Zero(s.rows(), s.cols());  // (n_q, n_k)
  for (Eigen::Index i = 0; i < s.rows(); ++i) {
    const float max = s.row(i).maxCoeff();                         // subtracted for a safe exp; the result is unchanged
    if (max == -std::numeric_limits<float>::infinity()) continue;  // every key masked: row stays 0
    p.row(i) = (s.row(i).array() - max).unaryExpr([](float v) { return std::exp(v); }).matrix();
    p.row(i) /= p.row(i).sum();
  }
  return p;
}

Attention scaled_dot_product_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& mask) {
  const float d_k = static_cast<float>(q.cols());
  const Mat scores = q * k.transpose() / std::sqrt(d_k) + mask;  // (n_q, n_k)
  Attention a;
  a.weights = softmax_rows(scores);  // (n_q, n_k)
  a.out = a.weights * v;             // (n_q, d_v)
  return a;
}

Mat split_head(const Mat& x, int h, int n_heads) {
  const Eigen::Index d_k = x.cols() / n_heads;
  return x.middleCols(h * d_k, d_k);  // (n, d_k)
}

Mat concat_heads(const std::vector<Mat>& heads) {
  const Eigen::Index d_k = heads[0].cols();
  Mat x(heads[0].rows(), d_k * static_cast<Eigen::Index>(heads.size()));  // (n, d)
  for (size_t h = 0; h < heads.size(); ++h) x.middleCols(static_cast<Eigen::Index>(h) * d_k, d_k) = heads[h];
  return x;
}

MultiHeadAttention attend_heads(const AttentionWeights& w, int n_heads, const Mat& q, const Mat& k, const Mat& v,
                                const Mat& mask) {
  MultiHeadAttention mha;
  std::vector<Mat> heads;  // h × (n_q, d_k)
  for (int h = 0; h < n_heads; ++h) {
    Attention a = scaled_dot_product_attention(split_head(q, h, n_heads), split_head(k, h, n_heads),
                                               split_head(v, h, n_heads), mask);
    heads.push_back(a.out);
    mha.weights.push_back(a.weights);
  }
  mha.out = linear(concat_heads(heads), w.o_proj);  // (n_q, d)
  return mha;
}

MultiHeadAttention multi_head_attention(const AttentionWeights& w, int n_heads, const Mat& x_q, const Mat& x_kv,
                                        const Mat& mask) {
  const Mat q = linear(x_q, w.q_proj);   // (n_q, d)
  const Mat k = linear(x_kv, w.k_proj);  // (n_k, d)
  const Mat v = linear(x_kv, w.v_proj);  // (n_k, d)
  return attend_heads(w, n_heads, q, k, v, mask);
}

}  // namespace sf::ref
