// residual_points.h — the residual stream of a recorded run, read after the embedding and after
// every sublayer: the points the logit lens reads and the order `trace --lens` writes them in.
//
//   decoder:      embedding, layer 0 attention, [layer 0 cross-attention,] layer 0 MLP, layer 1 …
//   encoder-only: embedding, layer 0 attention, layer 0 MLP, …   (BERT: the MLM head reads them)
//
// A point is the stream leaving its block: x + Sublayer(LN(x)) for pre-LN, LN(x + Sublayer(x)) for
// post-LN. The last point is the stack's output before a pre-LN model's final LayerNorm.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "model/trace.h"
#include "stepper/stage.h"

namespace sf {

struct ResidualPoint {
  int layer = -1;               // -1 for the embedding
  Block block = Block::None;    // None for the embedding; SelfAttention, CrossAttention, FeedForward
  const Mat* stream = nullptr;  // (n, d) the stream at this point, in the recording
};

// Short label: "embedding", "L0 attn", "L0 cross", "L0 MLP".
std::string point_label(const ResidualPoint& p);

// The points of a decoder recording (Recording::Full). Empty when the recording lacks them
// (a compact or training recording): record the run in full first.
std::vector<ResidualPoint> decoder_points(const Config& c, const DecoderTrace& t);
// The points of an encoder recording (encoder-only models).
std::vector<ResidualPoint> encoder_points(const Config& c, const EncoderTrace& t);

}  // namespace sf
