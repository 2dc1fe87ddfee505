// sublayers.h — what the encoder and decoder stacks (encoder.cpp, decoder.cpp) run the same way:
// the position-wise feed-forward sublayer inside its residual connection (Vaswani et al. 2017,
// §3.3: FFN(x) = act(x W1ᵀ + b1) W2ᵀ + b2), and pre-LN's closing LayerNorm of a stack (Xiong et
// al. 2020; post-LN has none).
#pragma once

#include <utility>

#include "model/feed_forward.h"
#include "model/intervention.h"
#include "model/residual.h"

namespace sf {

// The feed-forward on in (n, d) → out (n, d), then the hook's edits of its output (the recording
// then shows the edited output).
inline void mlp_sublayer(const Config& c, const FeedForwardWeights& w, const Mat& in, Mat& out, FeedForwardTrace* ft,
                         const Hook& hook) {
  feed_forward(w, c.activation, in, out, ft);
  if (hook.output(out) && ft && ft->kind != Recording::Training) ft->out = out;
}

// x (n, d) → y (n, d) = the FFN sublayer in its connection (c.norm decides the placement); x is
// consumed (see residual_block). The hook's edits apply to the FFN's output (model/intervention.h).
inline void ffn_connection(const Config& c, const LayerNormWeights& ln, const FeedForwardWeights& w, Mat& x, Mat& y,
                           FeedForwardTrace* ft, ResidualTrace* rt, const Hook& hook = {}) {
  residual_block(
      c.norm, ln, x, [&](const Mat& in, Mat& out) { mlp_sublayer(c, w, in, out, ft, hook); }, y, rt);
}

// Pre-LN: x (n, d) ← LN(x) with the stack's final norm; post-LN: x unchanged.
inline void close_stack(NormPlacement placement, const LayerNormWeights& ln, Mat& x, LayerNormTrace* tr) {
  if (placement != NormPlacement::Pre) return;
  Mat y;  // (n, d)
  layer_norm_forward(x, ln, y, tr);
  x = std::move(y);
}

}  // namespace sf
