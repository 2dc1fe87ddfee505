// linear.h — y = x Wᵀ + b, PyTorch's nn.Linear with W stored (out_features, in_features).
#pragma once

#include "tensor.h"
#include "weights.h"

namespace sf {

// x (n, in) -> y (n, out)
inline void linear_forward(const Mat& x, const Mat& weight, const RowVec& bias, Mat& y) {
  y.noalias() = x * weight.transpose();
  y.rowwise() += bias;
}
inline void linear_forward(const Mat& x, const Linear& l, Mat& y) { linear_forward(x, l.weight, l.bias, y); }

}  // namespace sf
