// encoder.h — the encoder stack: embed + PE, then per layer self-attention and feed-forward,
// each wrapped in the residual/LayerNorm connection of the model's norm placement.
#pragma once

#include <vector>

#include "model/model.h"
#include "model/trace.h"

namespace sf {

// src_ids (B·n): B sequences of n tokens (padded with <pad>). Returns the memory (B·n, d)
// (after the final LayerNorm for pre-LN models).
Mat encode(const Model& m, const std::vector<int>& src_ids, int batch, EncoderTrace* tr,
           const RunOptions& opt = {});

// The source padding masks, one (n_q, n) per sequence (keys equal to <pad> masked).
std::vector<Mat> source_masks(const Model& m, const std::vector<int>& src_ids, int batch, int n_q);

}  // namespace sf
