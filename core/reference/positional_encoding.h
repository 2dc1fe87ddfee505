// positional_encoding.h — the position vectors p_t added to the token embeddings.
#pragma once

#include "base/tensor.h"
#include "model/model.h"

namespace sf::ref {

// "Transformer in details", Positional Encoding
// (Vaswani et al. 2017, §3.5): p_t[2k] = sin(t·ω_k), p_t[2k+1] = cos(t·ω_k), ω_k = 10000^(−2k/d).
Mat sinusoidal_positions(int n, int d, int pos0 = 0);  // (n, d) rows t = pos0 .. pos0 + n − 1

// Marian's layout of the same angles: every sine first, then every cosine,
// p_t[k] = sin(t·ω_k) for k < ⌈d/2⌉, p_t[⌈d/2⌉ + k] = cos(t·ω_k).
Mat sinusoidal_positions_halves(int n, int d, int pos0 = 0);  // (n, d)

// "Transformer Architecture", Absolute Positional Embeddings: a trained table, row t.
Mat learned_positions(const Mat& table, int n, int pos0 = 0);  // table (max_len, d) -> (n, d)

// The model's choice of the three.
Mat positional_encoding(const Model& m, int n, int pos0 = 0);  // (n, d)

}  // namespace sf::ref
