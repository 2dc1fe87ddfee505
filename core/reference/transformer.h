// transformer.h — the whole model on one input: where a reader of the reference path starts.
//
//   encoder-decoder (Vaswani et al. 2017, Figure 1): memory = Encoder(src); logits = Decoder(tgt, memory)
//   decoder-only (GPT-2):                             logits = Decoder(tgt)
//   encoder-only (BERT):                              logits = MlmHead(Encoder(src))
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"
#include "reference/encoder.h"

namespace sf::ref {

struct Output {
  Mat memory;                   // (n, d) the encoder's output; empty for a decoder-only model
  Mat logits;                   // (m, V) the decoder's next-token scores, or (n, V) BERT's masked-LM scores
  AttentionMaps encoder_self;   // [layer][head] (n, n)
  AttentionMaps decoder_self;   // [layer][head] (m, m)
  AttentionMaps decoder_cross;  // [layer][head] (m, n)
};

// src_ids (n): the encoder's input (ignored by a decoder-only model); tgt_ids (m): the decoder's
// input, starting with <s> (ignored by an encoder-only model). Ids must be in range and fit
// max_len (check_ids in model/model.h).
Output forward(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& tgt_ids);

}  // namespace sf::ref
