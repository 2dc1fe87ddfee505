// positional_encoding.h — sinusoidal position vectors (Vaswani et al. 2017, §3.5; "Transformer in details" lecture,
// Positional Encoding).
//
// Interleaved layout, as in that lecture: p_t[2k] = sin(t·ω_k), p_t[2k+1] = cos(t·ω_k),
// ω_k = 10000^(−2k/d). Because sin/cos of a sum expand linearly, each (sin, cos) pair of p_{t+φ}
// is a fixed rotation of the pair of p_t: the model can attend by relative offset.
//
// Marian's layout (Junczys-Dowmunt et al. 2018; transformers' MarianSinusoidalPositionalEmbedding)
// uses the same angles t·ω_k but puts every sine first and every cosine after:
// p_t[k] = sin(t·ω_k) for k < ⌈d/2⌉, p_t[⌈d/2⌉ + k] = cos(t·ω_k) for k < ⌊d/2⌋.
#pragma once

#include "base/tensor.h"
#include "model/config.h"

namespace sf {

float pe_frequency(int k, int d);        // ω_k = 10000^(−2k/d)
float pe_value(int t, int i, int d);     // p_t[i]
Mat sinusoidal_pe(int n, int d);         // (n, d), row t = p_t
Mat sinusoidal_halves_pe(int n, int d);  // (n, d), Marian's sines-then-cosines layout
// The fixed table of a config's positional choice (n, d); empty for learned positions.
Mat positional_table(Positional p, int n, int d);

// The 2x2 rotation M(k, φ) = [[cos ω_kφ, sin ω_kφ], [−sin ω_kφ, cos ω_kφ]] with
// M(k, φ) · (sin ω_k t, cos ω_k t)ᵀ = (sin ω_k (t+φ), cos ω_k (t+φ))ᵀ.
Eigen::Matrix2f pe_rotation(int k, int phi, int d);

}  // namespace sf
