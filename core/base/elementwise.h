// elementwise.h — sums and products of two blocks, element by element: the residual stream's
// adds (x + Sublayer(x)) and a gated MLP's act(gate) ⊙ up.
//
// A large block is split between the cores (base/threads.h: split_pass); an add or a multiply of
// two floats rounds the same on any path, so the split gives the one-core bits.
#pragma once

#include "base/tensor.h"

namespace sf {

// y = a + b (a and b of one shape; y is resized, and may be a or b).
void add(const Mat& a, const Mat& b, Mat& y);

// y = a ⊙ b (a and b of one shape; y is resized, and may be a or b).
void multiply(const Mat& a, const Mat& b, Mat& y);

}  // namespace sf
