// residual.h — the sublayer connection: the ONE place where pre-LN and post-LN differ.
//
//   post-LN (Vaswani et al. 2017):  y = LN(x + Sublayer(x))
//   pre-LN  (Xiong et al. 2020):    y = x + Sublayer(LN(x))
//
// The Annotated Transformer's code is pre-LN although the paper is post-LN; here the choice is
// the config's `norm` and nothing else.
#pragma once

#include <utility>

#include "config.h"
#include "layer_norm.h"

namespace sf {

struct ResidualTrace {
  Mat input;         // (n, d) residual stream entering the block
  Mat sublayer_in;   // (n, d) what the sublayer read: LN(input) for pre-LN, input for post-LN
  Mat sublayer_out;  // (n, d)
  Mat sum;           // (n, d) input + sublayer_out (post-LN: before its LN; pre-LN: == output)
  LayerNormTrace norm;  // statistics of the LN of this block (of `input` for pre, of `sum` for post)
  Mat output;        // (n, d) residual stream leaving the block
};

// sublayer(const Mat& in, Mat& out) computes the block's function on `in`.
template <class Sublayer>
void residual_block(NormPlacement placement, const LayerNormWeights& ln, const Mat& x, Sublayer&& sublayer, Mat& y,
                    ResidualTrace* tr) {
  Mat s;  // (n, d) sublayer output
  if (tr) tr->input = x;
  switch (placement) {
    case NormPlacement::Post: {
      sublayer(x, s);
      Mat sum = x + s;
      layer_norm_forward(sum, ln, y, tr ? &tr->norm : nullptr);
      if (tr) {
        tr->sublayer_in = x;
        tr->sum = std::move(sum);
      }
      break;
    }
    case NormPlacement::Pre: {
      Mat normed;
      layer_norm_forward(x, ln, normed, tr ? &tr->norm : nullptr);
      sublayer(normed, s);
      y = x + s;
      if (tr) {
        tr->sublayer_in = std::move(normed);
        tr->sum = y;
      }
      break;
    }
  }
  if (tr) {
    tr->sublayer_out = std::move(s);
    tr->output = y;
  }
}

}  // namespace sf
