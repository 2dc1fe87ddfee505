// layer_norm.h — torch.nn.LayerNorm(d, eps): y = (x − μ) / √(σ² + ε) · w + b per token,
// with the biased variance σ² = mean((x − μ)²). ε is the weights' eps (Config::layer_norm_eps:
// 1e-5 by default, BERT 1e-12).
//
// The blog post "Transformer From Scratch In PyTorch" (Layer Normalization) writes a variant with the unbiased std and
// ε added outside the root, (x − μ) / (std + ε); we follow PyTorch's nn.LayerNorm instead, so models exported from
// PyTorch give the same numbers.
#pragma once

#include "base/tensor.h"
#include "model/recording.h"
#include "model/weights.h"

namespace sf {

constexpr float kLayerNormEps = 1e-5f;  // the default ε (PyTorch's)

struct LayerNormTrace {
  Recording kind = Recording::Full;  // set before the run: Training records mean and var only
  ColVec mean;                       // (n) per-token mean μ (LayerNorm only)
  ColVec var;                        // (n) per-token biased variance σ² (LayerNorm only)
  ColVec rms;                        // (n) per-token root mean square √mean(x²) (RMSNorm only)
  Mat out;                           // (n, d)
};

// Dispatches on w.kind (the one place): LayerNorm as above, or RMSNorm (Zhang & Sennrich 2019;
// transformers' LlamaRMSNorm) y = x / √(mean(x²) + ε) · w, no mean subtracted, no bias.
void layer_norm_forward(const Mat& x, const LayerNormWeights& w, Mat& out, LayerNormTrace* tr);

// Backward: x (n, d) the input the forward read, tr its statistics, dy (n, d) the output grad.
// g.weight += Σ_t dy ⊙ x̂, g.bias += Σ_t dy (+=); dx (n, d) is written (=):
//   dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)),  dx̂ = dy ⊙ w,  x̂ = (x − μ) · rstd,
// plus `skip` (n, d) when given: a pre-LN block's identity path, whose gradient joins the LN's
// here rather than in a pass of its own over both (dx = skip + LN'(dy)).
void layer_norm_backward(const Mat& x, const LayerNormWeights& w, const LayerNormTrace& tr, const Mat& dy,
                         LayerNormWeights& g, Mat& dx, const Mat* skip = nullptr);

}  // namespace sf
