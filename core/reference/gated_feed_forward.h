// gated_feed_forward.h — the gated feed-forward network of Llama-style models (SwiGLU).
#pragma once

#include "base/tensor.h"
#include "model/config.h"
#include "model/weights.h"

namespace sf::ref {

// Shazeer 2020, "GLU Variants Improve Transformer", FFN_SwiGLU; transformers' LlamaMLP:
//   FFN(x) = (act(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ,  act = SiLU (Swish) for Llama, Qwen2, Mistral
// W_up is the weights' fc1, W_down their fc2, W_gate their gate.
Mat gated_feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x);  // (n, d) -> (n, d)

}  // namespace sf::ref
