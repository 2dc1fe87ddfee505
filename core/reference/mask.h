// mask.h — the additive masks M of softmax(QKᵀ/√d_k + M): 0 where a query may attend, −∞ where
// it may not (exp(−∞) = 0, so a masked key gets exactly zero weight).
#pragma once

#include <vector>

#include "base/tensor.h"

namespace sf::ref {

// "Transformer From Scratch", Masking: keys that are <pad> are hidden from
// every query.
Mat padding_mask(int n_q, const std::vector<int>& key_ids, int pad);  // (n_q, n_k)

// "Transformer Architecture", Attention mask: query i (at position q_offset + i) sees
// key j only if j ≤ q_offset + i — no peeking at later tokens.
Mat causal_mask(int n_q, int n_k, int q_offset = 0);  // (n_q, n_k)

}  // namespace sf::ref
