// grouped_attention.h — grouped-query attention (Llama, Qwen2, Mistral).
#pragma once

#include "base/tensor.h"
#include "model/weights.h"
#include "reference/attention.h"

namespace sf::ref {

// Ainslie et al. 2023, "GQA": the n_heads query heads share n_kv_heads key/value heads, query
// head h reading K/V head h ÷ (n_heads ÷ n_kv_heads) (transformers' repeat_kv). n_kv_heads =
// n_heads is multi-head attention, 1 is multi-query attention. The KV cache keeps only the
// n_kv_heads heads: n_heads ÷ n_kv_heads times fewer bytes.
MultiHeadAttention grouped_query_attention(const AttentionWeights& w, int n_heads, int n_kv_heads, const Mat& q,
                                           const Mat& k, const Mat& v, const Mat& mask);
// q (n_q, h·d_k) already rotated, k (n_k, h_kv·d_k) likewise, v (n_k, h_kv·d_k), mask (n_q, n_k)

}  // namespace sf::ref
