// rotary.h — rotary position embedding (Llama, Qwen2, Mistral, GPT-NeoX), Hugging Face's layout.
#pragma once

#include "base/tensor.h"
#include "model/config.h"

namespace sf::ref {

// θ_i = theta^(−2i/r), i < r/2, for the r rotating dimensions of a head, then rope_scaling:
// "linear" divides every θ_i by the factor; "llama3" divides those whose wavelength 2π/θ_i is
// longer than original_max_len / low_freq_factor, keeps those shorter than original_max_len /
// high_freq_factor, and blends the two in between (transformers' modeling_rope_utils).
RowVec rotary_frequencies(const Config& c);  // (r/2)

// rotate_half(x) = (−x_{r/2..r}, x_{0..r/2}): the second half negated, moved to the front.
Mat rotate_half(const Mat& x);  // (n, r) -> (n, r)

// Su et al. 2021, "RoFormer", eq. (34) in transformers' rotate_half layout: row t of one head x
// (the query or key of the token at position pos0 + t) turned by the angles (pos0 + t)·θ_i,
//   x' = x ⊙ cos + rotate_half(x) ⊙ sin,  cos = (cos(pθ_0) … cos(pθ_{r/2−1}), the same again)
// on the first r = 2·|θ| dimensions; the rest pass unchanged (GPT-NeoX's rotary_pct).
// The lecture's sinusoidal rotation M(k, φ) ("Transformer Architecture", positional encoding)
// applied to q and k instead of added to x: q_m·k_n then depends on m − n only.
Mat rotary(const Mat& x, const RowVec& theta, int pos0);  // (n, d_k) -> (n, d_k)

}  // namespace sf::ref
