// feed_forward.h — the position-wise feed-forward network and its activations.
#pragma once

#include "base/tensor.h"
#include "model/config.h"
#include "model/weights.h"

namespace sf::ref {

Mat relu(const Mat& x);       // max(0, x)
Mat gelu_erf(const Mat& x);   // x·Φ(x) = ½x(1 + erf(x/√2)) (Hendrycks & Gimpel 2016; PyTorch's, BERT's)
Mat gelu_tanh(const Mat& x);  // ½x(1 + tanh(√(2/π)(x + 0.044715x³))) (GPT-2's "gelu_new")
Mat swish(const Mat& x);      // x·σ(x) (Marian's "swish", a.k.a. SiLU)
Mat activation(Activation a, const Mat& x);  // the model's choice of the four

// "Transformer in details", Position-Wise Feed-Forward
// (Vaswani et al. 2017, eq. (2)): FFN(x) = act(x W_1ᵀ + b_1) W_2ᵀ + b_2, each token on its own.
Mat feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x);  // (n, d) -> (n, d)

}  // namespace sf::ref
