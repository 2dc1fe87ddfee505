// logit_lens.h — the logit lens: what the model would predict if the residual stream stopped at
// a given point. Each point's stream goes through the model's own final norm and unembedding:
//
//   lens_p = W_U · FinalNorm(x_p) + b_U                                            (n, V)
//
// "The final norm" is the norm the model applies to its last stream before the unembedding:
//   pre-LN decoders: the stack's final LayerNorm (decoder.norm; GPT-2's ln_f);
//   post-LN decoders (and an encoder-decoder's decoder): none — every block already ends in a
//     LayerNorm, so the unembedding reads the stream as it is;
//   encoder-only models with an MLM head (BERT): the whole head, dense + activation + LayerNorm +
//     decoder, which is what the model applies to its last stream.
// The last point is the stack's output, so its lens equals the model's logits exactly (the same
// functions on the same matrix).
#pragma once

#include <string>
#include <vector>

#include "analysis/residual_points.h"

namespace sf {

// One sentence that says what the lens applies to a stream for this model (shown in the UI).
std::string lens_readout_description(const Config& c);

// (n, V) the lens of one stream (n, d): the final norm (as above) and the unembedding.
Mat lens_logits(const Model& m, const Mat& stream);

// Every point of a full recording, in residual_points order.
struct LogitLens {
  std::vector<ResidualPoint> points;
  std::vector<Mat> logits;  // [point] (n, V)
};
// Decoder models read the decoder recording; encoder-only models the encoder's. Empty when the
// recording is not a full one.
LogitLens logit_lens(const Model& m, const Trace& t);

// The top-k tokens of one row of a lens, with their softmax probabilities.
struct LensCell {
  std::vector<int> ids;      // (k) best first
  std::vector<float> probs;  // (k)
};
LensCell lens_top_k(const Mat& logits, int row, int k);
// Rank (0 = top) and probability of `token` in one row of a lens: how a token rises through depth.
struct TokenRank {
  int rank = 0;
  float prob = 0;
};
TokenRank lens_rank(const Mat& logits, int row, int token);

}  // namespace sf
