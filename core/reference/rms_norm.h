// rms_norm.h — RMSNorm over each token's d features (Llama, Qwen2, Mistral).
#pragma once

#include "base/tensor.h"
#include "model/weights.h"

namespace sf::ref {

// Zhang & Sennrich 2019, "Root Mean Square Layer Normalization"; transformers' LlamaRMSNorm:
//   RMSNorm(x) = γ ⊙ x / √(mean(x²) + ε)
// LayerNorm without the mean subtracted and without the shift β.
Mat rms_norm(const Mat& x, const LayerNormWeights& w);  // (n, d) -> (n, d)

}  // namespace sf::ref
