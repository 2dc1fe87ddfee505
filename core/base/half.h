// half.h — weight matrices kept in the 16-bit form their checkpoint stores (BF16 or F16), and the
// products that read them.
//
// A cached decoding step multiplies one row by every weight matrix of the model, so its time is
// the time to read those matrices from memory. Kept 16-bit, they are half the bytes. Every value
// is widened to float32 in registers as it is read — exactly: a BF16 is the upper half of a float,
// and every F16 is a float — and the sums run in float32, so a product differs from the float32
// one in its summation order only.
//
// WeightStorage is the one switch: model/linear.h reads a Linear's storage and sends its products
// to the float32 kernels or to these.
#pragma once

#include <cstdint>
#include <memory>

#include "base/tensor.h"

namespace sf {

enum class WeightStorage : uint8_t {
  F32,   // float32 (Mat)
  BF16,  // bfloat16: sign, 8 exponent bits, 7 mantissa bits — the upper half of a float32
  F16,   // IEEE 754 binary16: sign, 5 exponent bits, 10 mantissa bits
};
const char* to_string(WeightStorage s);  // "F32", "BF16", "F16"
inline int64_t bytes_per_weight(WeightStorage s) { return s == WeightStorage::F32 ? 4 : 2; }

// One 16-bit value as float32, exactly.
float half_to_float(uint16_t h, WeightStorage s);

// n 16-bit values at src -> out (float32), exactly. SIMD where the build has it.
void widen(const uint16_t* src, int64_t n, WeightStorage s, float* out);

// A (rows, cols) matrix of BF16 or F16 values: a weight (out, in) as its checkpoint stores it.
// Written once by the loader and read only afterwards: copies share the values.
//
// Its layout is one of two. Rows (panel = 0): row-major, as the checkpoint stores it. Panels
// (panel = P > 0): B = Wᵀ as base/gemm.h packs a float32 weight, 16-bit: panel p holds W's rows
// [p·P, p·P + P) as cols steps of P values (values[(p·cols + i)·P + c] = W(p·P + c, i)), the last
// panel zero-padded. A product over several rows then widens each panel with one sequential pass
// instead of transposing it, and a cached step reads the same panels front to back
// (matvec_half). pack_for_inference turns a loaded model's matrices into panels.
struct HalfMat {
  WeightStorage storage = WeightStorage::F32;  // BF16 or F16 when it holds a matrix
  Eigen::Index rows = 0, cols = 0;
  Eigen::Index panel = 0;  // 0: rows; else the panel width P
  std::shared_ptr<uint16_t[]> values;

  // Uninitialised (rows, cols) of storage s (BF16 or F16), in rows; large ones on transparent
  // huge pages.
  static HalfMat make(Eigen::Index rows, Eigen::Index cols, WeightStorage s);
  bool empty() const { return storage == WeightStorage::F32 || rows * cols == 0; }
  bool in_panels() const { return panel > 0; }
  int64_t size() const { return int64_t{rows} * cols; }
  // Row r (rows layout only).
  const uint16_t* row(Eigen::Index r) const { return values.get() + r * cols; }
  uint16_t* data() { return values.get(); }
  // W(r, c) as stored, in either layout.
  uint16_t at(Eigen::Index r, Eigen::Index c) const {
    return panel == 0 ? values[r * cols + c] : values[((r / panel) * cols + c) * panel + r % panel];
  }
  // Rows [r0, r0 + n) widened to float32 into out (n, cols), row-major.
  void widen_rows(Eigen::Index r0, Eigen::Index n, float* out) const;
  Mat widened() const;  // the whole matrix as float32 (rows, cols)
};

// The same values in panels (a new matrix; w in rows), of base/gemm.h's panel width
// (packed_panel_width(): the one width the products and matvec_half read).
HalfMat to_panels(const HalfMat& w);
// w's values rearranged into those panels (nothing to do when w is empty or in panels already).
// In place when w alone holds its values and its rows fill whole panels — panel q then occupies
// exactly the memory of rows [q·P, q·P + P), so one panel's buffer is all it needs and a load's
// peak does not grow by a matrix; otherwise as a copy (to_panels), leaving the values other copies
// share untouched.
void arrange_in_panels(HalfMat& w);

// y[r] = Σ_i x[i]·W(r, i) for rows r in [r0, r1) of W (out, in): one row of x times Wᵀ, the
// product of a cached decoding step. Each output's sum runs in float32 in a fixed order of its
// own whichever rows a call covers, so splitting the rows between threads does not change a bit:
// in rows, partial sums in vector lanes, then the lanes added; in panels, one FMA chain i = 0, 1,
// … per output, the order of base/gemm.h's kernel (a cached step gives the bits of the same row in
// a forward without bias). A range in panels that starts or ends inside a panel computes the
// whole panel and keeps its own outputs.
void matvec_half(const float* x, const HalfMat& w, Eigen::Index r0, Eigen::Index r1, float* y);

// The portable forms of widen and matvec_half, built without SIMD on every machine: the tests
// run them beside the SIMD forms (AVX-512 and AVX2-only machines both run the tests).
namespace portable {
void widen(const uint16_t* src, int64_t n, WeightStorage s, float* out);
void matvec_half(const float* x, const HalfMat& w, Eigen::Index r0, Eigen::Index r1, float* y);
}  // namespace portable

// Which kernel matvec_half runs in this build: "avx512", "avx2", "avx2+f16c" or "portable".
const char* half_kernel_name(WeightStorage s);

}  // namespace sf
