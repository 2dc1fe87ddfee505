// ablation.h — the model with some of its heads or feed-forward sublayers taken out (head and MLP
// ablation: "what does the model do without this head?"). The forward pass of transformer.h, with
// a head's output — its columns of concat(head_1 … head_h), before W_O — or a feed-forward
// sublayer's output replaced before it joins the residual stream:
//   zero:  X ← 0
//   mean:  X ← 1 · mean_t X[t]   (each column's mean over the sequence's positions, in every row)
// A mean-ablated head keeps its average output and loses what depends on the token.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"
#include "reference/attention.h"
#include "reference/transformer.h"

namespace sf::ref {

enum class Ablate { Zero, Mean };

// X (n, w) -> (n, w): zeros, or every row its column means.
Mat ablate(Ablate mode, const Mat& x);

struct LayerHead {
  int layer = 0;
  int head = 0;
};

// What to take out of the decoder (a decoder-only or encoder-decoder model).
struct DecoderAblation {
  Ablate mode = Ablate::Zero;
  std::vector<LayerHead> self_heads;   // heads of masked self-attention
  std::vector<LayerHead> cross_heads;  // heads of cross-attention
  std::vector<int> mlps;               // layers whose feed-forward output is taken out
};

// multi_head_attention (attention.h) with the heads in `removed` ablated before W_O:
//   MultiHead = concat(head_1 … ablate(head_i) … head_h) W_O
// The weights returned are every head's, ablated or not (ablation acts after the softmax).
MultiHeadAttention ablated_multi_head_attention(const AttentionWeights& w, int n_heads, const Mat& x_q, const Mat& x_kv,
                                                const Mat& mask, const std::vector<int>& removed,
                                                Ablate mode);  // x_q (n_q, d), x_kv (n_k, d), mask (n_q, n_k)

// forward (transformer.h) with the decoder's heads and feed-forward sublayers ablated; the encoder
// runs intact. Output's memory, logits and decoder maps are filled.
Output ablated_forward(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& tgt_ids,
                       const DecoderAblation& a);

}  // namespace sf::ref
