// half_linear.h — weights kept 16-bit (BF16 or F16, base/half.h) on the reference path: each
// value converted to float as its format defines it, then the product as linear.h writes it.
#pragma once

#include <cstdint>

#include "base/half.h"
#include "base/tensor.h"
#include "model/model.h"
#include "model/weights.h"

namespace sf::ref {

// One stored value as a float, from its fields:
//   BF16: sign s, 8 exponent bits e, 7 mantissa bits m: (−1)^s · 2^(e−127) · (1 + m/2^7), e = 0:
//         (−1)^s · 2^−126 · m/2^7 (subnormal) — the upper half of a float32;
//   F16:  sign s, 5 exponent bits e, 10 mantissa bits m: (−1)^s · 2^(e−15) · (1 + m/2^10), e = 0:
//         (−1)^s · 2^−14 · m/2^10.
// (e all ones, Inf/NaN, never reaches a product: the loader refuses non-finite weights.)
float half_value(uint16_t h, WeightStorage s);
Mat widen(const HalfMat& w);  // (rows, cols), every value by half_value

// y = x Wᵀ + b with W (out, in) 16-bit: W converted to float, then the product.
Mat half_linear(const Mat& x, const HalfMat& w, const RowVec& b);  // x (n, in) -> (n, out)

// The weights as float32 whatever their storage: a Linear's, the target embedding table, and the
// output projection's (the tied table or the generator's own).
Mat weight(const Linear& l);                 // (out, in)
Mat target_table(const Weights& w);          // (V, d)
Mat target_table_if_half(const Weights& w);  // (V, d) when the table is kept 16-bit, else empty (use tgt_embed)
Mat generator_weight(const Model& m);        // (V, d)

}  // namespace sf::ref
