// causal_leak.h — what the causal mask is for ("Transformer Architecture" lecture, Masked
// self-attention): the decoder runs teacher-forced on a target with and without the mask; without
// it, row i's weights reach the keys j > i (tokens it is meant to predict) and the predictions
// change.
#pragma once

#include <vector>

#include "model/attention.h"
#include "model/model.h"
#include "stepper/run.h"

namespace sf {

struct CausalLeak {
  AttentionTrace causal, leaky;    // decoder layer 0 self-attention, all heads, with and without the mask
  int layer = 0;                   // the layer shown
  std::vector<float> future_mass;  // (n) Σ_{j > i} w_ij without the mask, averaged over the heads
  float max_logit_diff = 0;        // max |logits with − logits without|
};

// The decoder fed `tgt_ids` (the encoder runs on in.src_ids first when the model has one).
CausalLeak causal_leak(const Model& m, const PreparedInput& in, const std::vector<int>& tgt_ids);

// (n_q) Σ_{j > i} w_ij averaged over the heads of an attention recording with B = 1.
std::vector<float> future_mass(const AttentionTrace& a);

}  // namespace sf
