// mask_tables.h — the Masks panel's six tables for one head of an attention view, computed once
// per view and head (the panel draws them every frame): the masks the forward's rules give, one by
// one, beside the scores, the masked scores and the weights, as in the "Transformer Architecture"
// lecture's attention mask tables.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/attention.h"

namespace sf {

struct MaskTables {
  Mat padding;         // (n_q, n_k) −∞ on the <pad> keys, else 0
  Mat causal;          // (n_q, n_k) the causal rule; with a sliding window also the keys it drops
  Mat outside_window;  // (n_q, n_k) the keys a sliding window drops (−∞); empty without a window
  Mat scores;          // (n_q, n_k) S = raw · 1/√d_k, bit for bit AttentionTrace::scores
  Mat masked;          // (n_q, n_k) S + M, exactly −∞ wherever M is (also where S was not computed)
};

// Head `raw` (n_q, n_k, the raw scores Q_h K_hᵀ: HeadMaps) of attention `a` (scale and mask
// a.masks[0]), whose keys are `key_ids`; `pad_key`, `causal` and `window` are the rules the
// forward built the mask with (model/mask.h: mask_parts).
MaskTables mask_tables(const AttentionTrace& a, const Mat& raw, const std::vector<int>& key_ids, int pad_key,
                       bool causal, int window);

}  // namespace sf
