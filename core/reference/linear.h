// linear.h — the reference path's one building block: a Linear layer as PyTorch stores it.
//
// core/reference/ is the Transformer written as the lectures write it, one short function per
// formula, plain Eigen, no recording and no tuned kernels: the code to read first. core/model/
// runs the same model fast (and records every intermediate for the explorer); the tests in
// tests/reference_test.cpp check that both give the same numbers.
#pragma once

#include "base/tensor.h"
#include "model/weights.h"

namespace sf::ref {

// y = x Wᵀ + b, W stored (out, in) as nn.Linear does (Vaswani et al. 2017, §3.2.2's projections).
Mat linear(const Mat& x, const Linear& l);  // x (n, in) -> (n, out)

}  // namespace sf::ref
