// packed_gemm.h — y = x Wᵀ (+ b) with the weight packed once, for inference.
//
// A product packs its B operand into the micro-kernel's panel layout (base/gemm.h). For a weight
// (out, in) read by every forward that copy is redone each time for nothing; PackedWeight holds
// Wᵀ in that layout, made once (pack_for_inference), so a product packs only the activation rows.
#pragma once

#include "base/gemm.h"
#include "base/tensor.h"

namespace sf {

struct PackedWeight {
  PackedB wt;  // Wᵀ (in, out), packed: W's shape is (wt.n, wt.k)
};

// Packs w (out, in).
PackedWeight pack_weight(const Mat& w);
// W (out, in) read back from its packing: the same floats.
Mat unpacked(const PackedWeight& w);

// y (n, out) = x (n, in) Wᵀ (+ bias (out), when given), for any n ≥ 0. A single row reads every
// panel once, in order, like a matrix-vector product; linear_forward runs one on W's rows instead
// when the Linear keeps them (Linear::weight).
void packed_product(const Mat& x, const PackedWeight& w, Mat& y, const RowVec* bias = nullptr, const Epilogue& ep = {});

}  // namespace sf
