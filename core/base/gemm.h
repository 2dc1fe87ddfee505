// gemm.h — C = A·B (+ bias) for row-major float matrices: the one matrix product the model's
// projections and their gradients run on.
//
// Eigen's product reached ~70 % of this machine's FMA peak on our shapes (a few dozen to a few
// hundred token rows against 128…3072 features) and packed the weight again on every call. This
// is the BLIS scheme (Van Zee & van de Geijn 2015) cut down to what we need:
//   - B (k, n) is packed into column panels NR wide, a depth block KC at a time, zero-padded;
//     a weight read by many products is packed once (PackedB, e.g. Linear::packed);
//   - A (m, k) is packed into row groups of MR;
//   - a micro-kernel keeps an MR × NR tile of C in vector registers over one depth block
//     (AVX-512: 12 × 32 in 24 zmm; AVX2+FMA: 6 × 16 in 12 ymm; otherwise portable code).
// The panels of C are shared between the calling thread's cores (base/threads.h). Every element
// of C is accumulated in the same order — k = 0, 1, … within a depth block, depth blocks in
// turn — whatever the thread count and whichever kernel runs, so a result does not depend on
// either (AVX-512 and AVX2 builds give the same bits). One exception: a single row (m = 1) with an
// unpacked B is a matrix-vector product on Eigen (a cached decoding step's attention), since
// packing B for one row would cost as much as the product.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/half.h"
#include "base/tensor.h"

namespace sf {

// A strided view of a read-only matrix: element (r, c) is data[r·row_stride + c·col_stride].
// A row-major (rows, cols) matrix has strides (cols, 1); its transpose (cols, 1) swapped.
struct MatRef {
  const float* data = nullptr;
  Eigen::Index row_stride = 0, col_stride = 0;
  float at(Eigen::Index r, Eigen::Index c) const { return data[r * row_stride + c * col_stride]; }
};
inline MatRef mat_ref(const Mat& m) { return {m.data(), m.cols(), 1}; }    // m
inline MatRef mat_ref_t(const Mat& m) { return {m.data(), 1, m.cols()}; }  // mᵀ

// B (k, n) packed once for many products (a weight, as the projections read it: B = Wᵀ).
struct PackedB {
  Eigen::Index k = 0, n = 0;
  std::vector<float, Eigen::aligned_allocator<float>> data;  // [panel][depth block] (kc × NR) tiles
};

// Packs b (k, n): b.at(i, j) for i < k, j < n.
PackedB pack_b(MatRef b, Eigen::Index k, Eigen::Index n);
// The same into p, whose buffer is kept and grown as needed: a product's operand packed afresh for
// each of many calls (an attention head's K_hᵀ and V_h) without an allocation each. The slots of a
// last panel's columns past n keep what the buffer held; the kernel never reads them.
void pack_b_into(MatRef b, Eigen::Index k, Eigen::Index n, PackedB& p);
// Rows [j0, j0 + rows) of Bᵀ (n, k) read back from B's packing into out (rows, k), row-major: the
// rows of W when B = Wᵀ. The packing's own order, element by element: the same floats.
void unpack_bt_rows(const PackedB& b, Eigen::Index j0, Eigen::Index rows, float* out);

// What the product does with C (m, n), row stride ldc.
enum class GemmOut : uint8_t {
  Overwrite,   // C = A·B (+ bias)
  Accumulate,  // C += A·B (+ bias)
};

// What the product does to each element of C as it stores its final value (after the bias and
// the accumulation): a ReLU, fused into the product that feeds it (a feed-forward's fc1), or
// ReLU's backward gate, fused into the product that makes its gradient. Either would otherwise be
// a pass of its own over C (704 × 512 floats in a training step); both are exact, so a fused
// product gives the same bits as the product and then the pass.
struct Epilogue {
  enum class Kind : uint8_t {
    None,
    Relu,      // C = max(0, C)
    ReluGate,  // C(i, j) = gate(i, j) > 0 ? C(i, j) : 0: ReLU's backward, gate its output (m, n)
  };
  Kind kind = Kind::None;
  const float* gate = nullptr;  // ReluGate: gate(i, j) at gate[i·gate_ld + j]
  Eigen::Index gate_ld = 0;

  static Epilogue relu() { return {Kind::Relu, nullptr, 0}; }
  static Epilogue relu_gate(const Mat& gate) { return {Kind::ReluGate, gate.data(), gate.cols()}; }
};

// C (m, n) = A (m, k) · B (k, n) (+ bias (n), when given), then the epilogue. m, n, k ≥ 0; C must
// not alias A or B (nor the gate).
void gemm(Eigen::Index m, Eigen::Index n, Eigen::Index k, MatRef a, MatRef b, float* c, Eigen::Index ldc, GemmOut out,
          const float* bias = nullptr, const Epilogue& ep = {});
// The same with B packed ahead of time.
void gemm(Eigen::Index m, MatRef a, const PackedB& b, float* c, Eigen::Index ldc, GemmOut out,
          const float* bias = nullptr, const Epilogue& ep = {});
// C (m, n) = A (m, k) · the leading k rows and n columns of a packed B (k ≤ b.k, n ≤ b.n): the
// products of an attention head's query blocks, each over the keys it sees, against K_hᵀ and V_h
// packed once for all of them.
void gemm(Eigen::Index m, Eigen::Index n, Eigen::Index k, MatRef a, const PackedB& b, float* c, Eigen::Index ldc,
          GemmOut out);
// One of several products that read the same A: C (m, b.n) = A · B (+ bias (b.n), when given).
struct PackedTarget {
  const PackedB* b = nullptr;
  float* c = nullptr;
  Eigen::Index ldc = 0;
  const float* bias = nullptr;
};
// targets[i].C = A (m, k) · targets[i].B for i < count, each as gemm gives it (the same bits):
// an attention layer's Q, K and V projections, a gated feed-forward's gate and up projections.
// The products share one parallel region, A packed once per thread, rather than one region and
// one packing of A each. Every B is k deep.
void gemm_same_a(Eigen::Index m, MatRef a, const PackedTarget* targets, size_t count);
// The same with B = Wᵀ, W (n, k) a 16-bit weight (base/half.h): each panel of B is widened to
// float32 as it is reached — one sequential pass when W is held in panels of NR, else transposed
// from its rows — so the kernel and the order of every sum are those of a float32 W holding the
// same values (the result has the same bits). One row (m = 1) is matvec_half.
void gemm(Eigen::Index m, MatRef a, const HalfMat& w, float* c, Eigen::Index ldc, GemmOut out,
          const float* bias = nullptr, const Epilogue& ep = {});
// One row of A times a packed B: y[j] = Σ_i x[i]·B(i, j) for columns j in [j0, j1) (a cached
// decoding step on a weight held packed only: B = Wᵀ). Each output's sum runs i = 0, 1, … as one
// FMA chain, as in gemm: whichever columns a call covers, the same bits. A range that starts or
// ends inside a panel computes the whole panel and keeps its own columns.
void matvec_packed(const float* x, const PackedB& b, Eigen::Index j0, Eigen::Index j1, float* y);
// How many columns of B a packed panel holds (32 with AVX-512, 16 otherwise).
Eigen::Index packed_panel_width();
// The epilogue as a pass of its own over C (m, n), row stride ldc: for a product made elsewhere
// (Eigen's matrix-vector product of a cached step).
void apply_epilogue(const Epilogue& ep, Eigen::Index m, Eigen::Index n, float* c, Eigen::Index ldc);

// d[j·ds + i] = s[i·ss + j] for i < rows, j < cols: d (cols, rows) = sᵀ for a row-major s
// (rows, cols), row strides ss and ds. An attention layer transposes its keys once this way, so
// that every head's Q_h K_hᵀ reads K_hᵀ as a row-major B in place.
void transpose_copy(const float* s, Eigen::Index ss, Eigen::Index rows, Eigen::Index cols, float* d, Eigen::Index ds);

// Which micro-kernel this build runs: "avx512", "avx2" or "portable".
const char* gemm_kernel_name();

}  // namespace sf
