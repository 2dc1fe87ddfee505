// residual.h — the sublayer connection, where post-LN and pre-LN differ.
#pragma once

#include <functional>

#include "base/tensor.h"
#include "model/config.h"
#include "model/weights.h"

namespace sf::ref {

using Sublayer = std::function<Mat(const Mat&)>;  // F: (n, d) -> (n, d), attention or feed-forward

// "Transformer in details", Residual Connection
// (Vaswani et al. 2017, §3.1): y = LN(x + F(x)).
Mat post_ln(const Mat& x, const LayerNormWeights& ln, const Sublayer& f);  // (n, d)

// The same lecture, Post-LN and Pre-LN (Xiong et al. 2020): y = x + F(LN(x)); the stack ends
// with one more LN.
Mat pre_ln(const Mat& x, const LayerNormWeights& ln, const Sublayer& f);  // (n, d)

// The model's placement of the two.
Mat sublayer_connection(NormPlacement p, const Mat& x, const LayerNormWeights& ln, const Sublayer& f);  // (n, d)

// The end of a stack: pre-LN's final LN(x); post-LN's x as it is (its last block ended in an LN).
Mat stack_output(NormPlacement p, const Mat& x, const LayerNormWeights& final_ln);  // (n, d)

}  // namespace sf::ref
