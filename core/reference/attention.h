// attention.h — scaled dot-product attention and multi-head attention.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/weights.h"

namespace sf::ref {

// softmax over each row; a key whose score is −∞ gets exactly 0, and a row with every key masked
// stays all zeros (no distribution to form).
Mat softmax_rows(const Mat& s);  // (n_q, n_k)

struct Attention {
  Mat out;      // (n_q, d_v) the weighted sum of the values
  Mat weights;  // (n_q, n_k) softmax(QKᵀ/√d_k + M), each row sums to 1
};

// "Transformer Architecture", Scaled dot product; Vaswani et al. 2017, eq. (1):
//   Attention(Q, K, V) = softmax(QKᵀ / √d_k + M) V
Attention scaled_dot_product_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& mask);
// q (n_q, d_k), k (n_k, d_k), v (n_k, d_v), mask (n_q, n_k)

// Head h of a projected (n, d) block: columns [h·d_k, (h+1)·d_k).
Mat split_head(const Mat& x, int h, int n_heads);  // (n, d) -> (n, d_k)
// The heads side by side: concat(head_0, …, head_{h−1}).
Mat concat_heads(const std::vector<Mat>& heads);  // h × (n, d_k) -> (n, d)

struct MultiHeadAttention {
  Mat out;                   // (n_q, d) concat(heads) W_Oᵀ + b_O
  std::vector<Mat> weights;  // [head] (n_q, n_k)
};

// "Transformer Architecture", Multi-Headed Self-Attention; Vaswani et al. 2017, §3.2.2:
//   head_i = Attention(Q_i, K_i, V_i),  MultiHead = concat(head_1 … head_h) W_O
// on Q, K, V already projected (a KV cache hands over its K and V).
MultiHeadAttention attend_heads(const AttentionWeights& w, int n_heads, const Mat& q, const Mat& k, const Mat& v,
                                const Mat& mask);  // q (n_q, d), k v (n_k, d), mask (n_q, n_k)

// Project, split heads, attend, concat, W_O: Q = x_q W_Qᵀ, K = x_kv W_Kᵀ, V = x_kv W_Vᵀ (+ biases).
// Self-attention passes the same block twice; cross-attention passes the encoder's memory as x_kv.
MultiHeadAttention multi_head_attention(const AttentionWeights& w, int n_heads, const Mat& x_q, const Mat& x_kv,
                                        const Mat& mask);  // x_q (n_q, d), x_kv (n_k, d), mask (n_q, n_k)

}  // namespace sf::ref
