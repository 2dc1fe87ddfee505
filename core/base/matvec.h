// matvec.h — the product of a cached decoding step with float32 weights: one row x times Wᵀ, W
// (out, in) row-major, read once from memory. base/half.h's matvec_half is the same product over
// 16-bit weights; both run the row loop of base/simd.h.
#pragma once

#include "base/tensor.h"

namespace sf {

// y[r] = Σ_i x[i]·W(r, i) for rows r in [r0, r1) of W (out, in). Each output's sum runs in float32
// over W's row in a fixed order of its own (partial sums in vector lanes, then the lanes added),
// whichever rows a call covers: splitting the rows between threads does not change a bit.
void matvec(const float* x, const Mat& w, Eigen::Index r0, Eigen::Index r1, float* y);

// The portable form, built without SIMD on every machine: the tests run it beside the SIMD form.
namespace portable {
void matvec(const float* x, const Mat& w, Eigen::Index r0, Eigen::Index r1, float* y);
}  // namespace portable

// Which kernel matvec runs in this build: "avx512", "avx2" or "portable".
const char* matvec_kernel_name();

}  // namespace sf
