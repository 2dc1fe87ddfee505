// head_thumbnail.h — a head's attention map shrunk for a thumbnail (the explorer's model view shows
// every layer × head at once: 144 maps of 1024 × 1024 for a 1,024-token GPT-2 run, 600 MB as
// floats and more again as textures, where a thumbnail of at most `side` × `side` cells is all a
// screen shows).
#pragma once

#include "base/tensor.h"

namespace sf {

struct HeadThumbnail {
  Mat map;                 // (≤ side, ≤ side) each cell the largest weight of the block it covers
  float max = 0;           // the largest weight of the whole map (the thumbnail's colour scale)
  float mean_entropy = 0;  // mean over the rows of the row entropy, nats (row_entropies' mean)
  int rows = 0, cols = 0;  // the map's own size (the thumbnail keeps its aspect ratio)
};

// w (n_q, n_k) a head's weights and mask (n_q, n_k) its additive mask. A map no larger than side ×
// side is kept as it is; a larger one is cut into ⌈n/side⌉-row and -column blocks, each cell the
// largest value in its block: a head that puts all its weight on one token keeps that line
// visible, which an average over the block would fade to the background.
HeadThumbnail head_thumbnail(const Mat& w, const Mat& mask, int side);

}  // namespace sf
