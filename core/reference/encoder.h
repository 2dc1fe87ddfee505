// encoder.h — the encoder stack: embedding, then N layers of self-attention and feed-forward.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"

namespace sf::ref {

using AttentionMaps = std::vector<std::vector<Mat>>;  // [layer][head] (n_q, n_k) attention weights

// The source padding mask: every query may see every key except <pad>.
Mat source_mask(const Model& m, const std::vector<int>& src_ids, int n_q);  // (n_q, n)

struct EncoderLayer {
  Mat out;                        // (n, d)
  std::vector<Mat> self_weights;  // [head] (n, n)
};

// "Transformer in details", Encoder Block:
//   y = Connection(x, MultiHead(x, x, x));  out = Connection(y, FFN(y))
// (Connection: post-LN or pre-LN, residual.h).
EncoderLayer encoder_layer(const Config& c, const EncoderLayerWeights& w, const Mat& x, const Mat& mask);

struct Encoder {
  Mat memory;                  // (n, d) what the decoder's cross-attention reads
  AttentionMaps self_weights;  // [layer][head] (n, n)
};

// The same lecture, Encoder: embed, N encoder blocks, and pre-LN's final LayerNorm.
Encoder encoder(const Model& m, const std::vector<int>& src_ids);  // src_ids (n)

}  // namespace sf::ref
