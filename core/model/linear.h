// linear.h — y = x Wᵀ + b, PyTorch's nn.Linear with W stored (out_features, in_features).
#pragma once

#include "base/tensor.h"
#include "model/weights.h"

namespace sf {

// x (n, in) -> y (n, out)
inline void linear_forward(const Mat& x, const Mat& weight, const RowVec& bias, Mat& y) {
  y.noalias() = x * weight.transpose();
  y.rowwise() += bias;
}
inline void linear_forward(const Mat& x, const Linear& l, Mat& y) { linear_forward(x, l.weight, l.bias, y); }

// Backward of y = x Wᵀ + b. x (n, in), dy (n, out). Parameter grads accumulate (+=):
// dweight (out, in) += dyᵀ x, dbias (out) += Σ_rows dy. The input grad is written (=):
// dx (n, in) = dy W; pass nullptr when nothing upstream needs it (the first layer's input).
inline void linear_backward(const Mat& x, const Mat& weight, const Mat& dy, Mat& dweight, RowVec& dbias, Mat* dx) {
  dweight.noalias() += dy.transpose() * x;
  dbias += dy.colwise().sum();
  if (dx) dx->noalias() = dy * weight;
}
inline void linear_backward(const Mat& x, const Linear& l, const Mat& dy, Linear& g, Mat* dx) {
  linear_backward(x, l.weight, dy, g.weight, g.bias, dx);
}

}  // namespace sf
