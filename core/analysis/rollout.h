// rollout.h — attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in
// Transformers", §3): how much each input token reaches each position through a stack, counting
// the residual connection as attention to oneself.
//
//   Â_l = ½ · mean_h A_l,h + ½ · I         (n, n), each row then divided by its sum
//   R_1 = Â_1,   R_l = Â_l · R_{l−1}          R_L[i, j]: share of position i's stream that comes from token j
//
// Masked keys have weight 0 in every A, so they stay at 0 in R. Cross-attention is not rolled out:
// it reads another sequence.
#pragma once

#include <vector>

#include "model/trace.h"

namespace sf {

// The formula as the UI shows it.
const char* rollout_formula();

// [layer] (n, n) R_l for the self-attention of one stack, sequence 0 of a full recording: the
// attention of layer l is `self_attn[l]`, with its heads. Empty when a layer has no weights, its
// map is not square (n, n), or the layers' sizes differ.
std::vector<Mat> attention_rollout(const std::vector<const AttentionTrace*>& self_attn);
// The same from each layer's heads' weights, [layer][head] (n, n): a view that computes a head's map
// on demand (analysis/head_maps.h) gives them without a recording that holds them all.
std::vector<Mat> attention_rollout(const std::vector<std::vector<const Mat*>>& heads);

// The self-attentions of each stack of a recording, in layer order.
std::vector<const AttentionTrace*> encoder_self_attention(const EncoderTrace& t);
std::vector<const AttentionTrace*> decoder_self_attention(const DecoderTrace& t);

}  // namespace sf
