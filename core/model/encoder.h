// encoder.h — the encoder stack: embed + PE, then per layer self-attention and feed-forward,
// each wrapped in the residual/LayerNorm connection of the model's norm placement.
#pragma once

#include <vector>

#include "model/model.h"
#include "model/trace.h"

namespace sf {

// src_ids (B·n): B sequences of n tokens (padded with <pad>). Returns the memory (B·n, d)
// (after the final LayerNorm for pre-LN models). A recorded run of a model with an MLM head also
// records its logits (mlm_logits).
Mat encode(const Model& m, const std::vector<int>& src_ids, int batch, EncoderTrace* tr, const RunOptions& opt = {});

// BERT's masked-LM head on the encoder output x (B·n, d): logits (B·n, V) =
// LN(act(x W_tᵀ + b_t)) Eᵀ + b, E the tied word embeddings. Records into tr when given.
Mat mlm_logits(const Model& m, const Mat& x, EncoderTrace* tr);

// The source padding masks, one (n_q, n) per sequence (keys equal to <pad> masked).
std::vector<Mat> source_masks(const Model& m, const std::vector<int>& src_ids, int batch, int n_q);

}  // namespace sf
