// layer_norm.h — LayerNorm over each token's d features.
#pragma once

#include "base/tensor.h"
#include "model/weights.h"

namespace sf::ref {

// "Transformer From Scratch", Layer Normalization:
//   LN(x) = γ ⊙ (x − μ) / √(σ² + ε) + β,  μ and σ² the mean and variance of the token's row.
// As torch.nn.LayerNorm: the biased variance, ε inside the root (the blog post divides by the
// unbiased std + ε; PyTorch's form gives the numbers of models trained in PyTorch).
Mat layer_norm(const Mat& x, const LayerNormWeights& w);  // (n, d) -> (n, d)

}  // namespace sf::ref
