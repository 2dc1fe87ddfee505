// packed_gemm.h — y = x Wᵀ with the weight packed once, for inference.
//
// Eigen's matrix product copies ("packs") both operands into its kernel's panel layout on every
// call. For a weight (out, in) read by a few dozen token rows that copy costs a third as much as
// the arithmetic (perf, small and base models: gemm_pack_lhs 25-30 % of a forward, whether W is
// stored (out, in) or transposed). PackedWeight holds W in that panel layout, made once, so that a
// product packs only the activation rows and runs Eigen's own kernel (gebp) on the stored panels.
// Outputs are split between the calling thread's cores by row blocks of W, so a result does not
// depend on the thread count.
#pragma once

#include <vector>

#include "base/tensor.h"

namespace sf {

struct PackedWeight {
  Eigen::Index rows = 0, cols = 0;   // W's shape (out, in)
  Eigen::Index kc = 0, mc = 0;       // block sizes: depth (in) × rows (out) per packed block
  Eigen::VectorXf data;              // every block in Eigen's lhs panel layout (64-byte aligned)
  std::vector<Eigen::Index> offset;  // [row block · depth blocks + depth block] start in data
};

// Packs w (out, in) for Eigen's kernel on this machine's SIMD width.
PackedWeight pack_weight(const Mat& w);

// y (n, out) = x (n, in) Wᵀ, for any n ≥ 1 (a single row is better served by a matrix-vector
// product: linear_forward keeps those on the unpacked weight).
void packed_product(const Mat& x, const PackedWeight& w, Mat& y);

}  // namespace sf
