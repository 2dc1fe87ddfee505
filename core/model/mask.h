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

// The key id each sublayer's padding mask hides, as the forward passes it to make_mask: the
// source's <pad> for encoder self-attention and cross-attention; the target's <pad> for decoder
// self-attention when the config masks it (decoder_pad_mask; GPT-2 and Marian do not), else −1,
// which no key has. A vocabulary without <pad> (GPT-2) gives −1 too.
int source_pad_key(const Config& c);
int decoder_pad_key(const Config& c);

}  // namespace sf
