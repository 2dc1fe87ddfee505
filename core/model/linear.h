// linear.h — y = x Wᵀ + b, PyTorch's nn.Linear with W stored (out_features, in_features).
#pragma once

#include <initializer_list>

#include "base/gemm.h"
#include "base/tensor.h"
#include "model/weights.h"

namespace sf {

// y = x Wᵀ: x (n, in), weight (out, in) -> y (n, out), on base/gemm.h's kernel; a single row (a
// cached decoding step) is base/matvec.h's matrix-vector product instead, split between the cores
// by rows of W, at multiples of 16 rows (each output's sum does not depend on the split). With `bias` (out): y = x Wᵀ +
// b; then the epilogue (a fused ReLU).
void matmul_transposed(const Mat& x, const Mat& weight, Mat& y, const RowVec* bias = nullptr, const Epilogue& ep = {});

// y = x Wᵀ with W (out, in) kept 16-bit (base/half.h): a single row is matvec_half, split between
// the cores by rows of W like matmul_transposed (each output's sum does not depend on the split);
// several rows run on base/gemm.h's kernel, W widened to float32 as its panels are packed. With
// `bias` (out): y = x Wᵀ + b; then the epilogue.
void matmul_transposed(const Mat& x, const HalfMat& weight, Mat& y, const RowVec* bias = nullptr,
                       const Epilogue& ep = {});

// y = x Wᵀ with W (out, in) packed (packed_gemm.h): several rows are packed_product; a single row
// is matvec_packed (base/gemm.h), split between the cores by whole panels like matmul_transposed.
// With `bias` (out): y = x Wᵀ + b; then the epilogue.
void matmul_transposed(const Mat& x, const PackedWeight& weight, Mat& y, const RowVec* bias = nullptr,
                       const Epilogue& ep = {});

// x (n, in) -> y (n, out)
inline void linear_forward(const Mat& x, const Mat& weight, const RowVec& bias, Mat& y, const Epilogue& ep = {}) {
  matmul_transposed(x, weight, y, &bias, ep);
}
// The one place a Linear's storage (WeightStorage) chooses the product. Float32: with
// Linear::packed present, a product over several rows runs on it (no packing of the weight); a
// single row (a cached step) is a matrix-vector product over weight, which packs nothing, or on
// the packing when that is all the Linear holds. BF16/F16: the 16-bit products above.
void linear_forward(const Mat& x, const Linear& l, Mat& y, const Epilogue& ep = {});

// One of several Linears that read the same input, and where its output goes.
struct LinearOut {
  const Linear* l = nullptr;
  Mat* y = nullptr;
};
// *part.y = x part.lᵀ + b for every part, each with the bits linear_forward gives it: an attention
// layer's Q, K and V, a gated feed-forward's gate and up projections. Together they open one
// parallel region rather than one each: several rows on packed float32 weights share gemm_same_a
// (A packed once per thread), a single row (a cached step) splits the parts' rows, concatenated,
// between the cores in one split. Any other storage runs part by part.
void linear_forward_same_input(const Mat& x, std::initializer_list<LinearOut> parts);

// Whether the calling thread's one-row products split between the cores now: false while its
// split governor (base/split_governor.h) runs them on this thread alone because splits cost time
// on this host. A cached step's other short regions (its one-query attention) follow it.
bool small_splits_pay();

// The output projection: logits (n, V) = x (n, d) Wᵀ + b, W the generator's weight or the target
// embedding it is tied to (Weights::generator_weight, or its 16-bit form); packed when
// pack_for_inference packed it.
inline void generator_forward(const Weights& w, const Config& c, const Mat& x, Mat& logits) {
  if (const HalfMat* h = w.generator_half(c)) {
    matmul_transposed(x, *h, logits, &w.generator.bias);
    return;
  }
  if (x.rows() > 1 && w.generator.packed) {
    packed_product(x, *w.generator.packed, logits, &w.generator.bias);
    return;
  }
  linear_forward(x, w.generator_weight(c), w.generator.bias, logits);
}

// Backward of y = x Wᵀ + b. x (n, in), dy (n, out). Parameter grads accumulate (+=):
// dweight (out, in) += dyᵀ x, dbias (out) += Σ_rows dy; or dweight = dyᵀ x with dw_out =
// Overwrite (a backward that is the matrix's only contribution, onto a gradient nobody cleared:
// see model_backward). The input grad is written (=), or added to a dx of that shape (dx_out =
// Accumulate: K and V read the same input): dx (n, in) = dy W; pass nullptr when nothing upstream
// needs it (the first layer's input). The epilogue applies to dx (ReLU's backward gate, when x is
// a ReLU's output).
void linear_backward(const Mat& x, const Mat& weight, const Mat& dy, Mat& dweight, RowVec& dbias, Mat* dx,
                     GemmOut dx_out = GemmOut::Overwrite, const Epilogue& dx_ep = {},
                     GemmOut dw_out = GemmOut::Accumulate);
inline void linear_backward(const Mat& x, const Linear& l, const Mat& dy, Linear& g, Mat* dx,
                            GemmOut dx_out = GemmOut::Overwrite, const Epilogue& dx_ep = {},
                            GemmOut dw_out = GemmOut::Accumulate) {
  linear_backward(x, l.weight, dy, g.weight, g.bias, dx, dx_out, dx_ep, dw_out);
}

}  // namespace sf
