// mask.h — the additive masks added to the scaled scores before softmax.
//
// A mask is an (n_q, n_k) matrix of 0 (may attend) and −inf (may not). Adding −inf makes
// exp() exactly 0, so a masked key's weight is exactly 0, as the "Transformer Architecture" lecture's Attention mask
// tables show.
#pragma once

#include <limits>
#include <vector>

#include "base/tensor.h"
#include "model/config.h"

namespace sf {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// key_ids: (n_k) token ids of the keys; keys equal to `pad` are masked for every query.
// causal: query i (at absolute position q_offset + i) may see key j only if j <= q_offset + i.
// window W > 0 (Mistral's sliding window): also only if j > q_offset + i − W, so a query sees its
// W most recent keys, itself included.
Mat make_mask(int n_q, const std::vector<int>& key_ids, int pad, bool causal, int q_offset = 0, int window = 0);

// The rules make_mask combines, each as an additive (n_q, n_k) mask of its own, for the views:
// `future` the causal rule (j > q_offset + i), `outside_window` the sliding window's cut of the
// past (j ≤ q_offset + i − W, a key the causal rule would let through and the window drops),
// `padding` the <pad> keys; `combined` is make_mask's result, −∞ wherever any rule says so.
// The first key a query at `position` sees under a sliding window W: max(0, position − W + 1),
// so token t sees tokens t − W + 1 … t; 0 without a window (W = 0).
int first_visible_key(int position, int window);

struct MaskParts {
  Mat padding, future, outside_window, combined;
  int window = 0;  // W, 0 = none
};
MaskParts mask_parts(int n_q, const std::vector<int>& key_ids, int pad, bool causal, int q_offset = 0, int window = 0);

// The key id each sublayer's padding mask hides, as the forward passes it to make_mask: the
// source's <pad> for encoder self-attention and cross-attention; the target's <pad> for decoder
// self-attention when the config masks it (decoder_pad_mask; GPT-2 and Marian do not), else −1,
// which no key has. A vocabulary without <pad> (GPT-2) gives −1 too.
int source_pad_key(const Config& c);
int decoder_pad_key(const Config& c);

}  // namespace sf
