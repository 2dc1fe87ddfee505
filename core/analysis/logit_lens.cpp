#include "analysis/logit_lens.h"

#include <algorithm>
#include <numeric>

#include "model/encoder.h"
#include "model/layer_norm.h"
#include "model/linear.h"

namespace sf {

std::string lens_readout_description(const Config& c) {
  if (c.arch == Arch::EncoderOnly)
    return "Each point goes through the masked-LM head (dense, activation, LayerNorm, tied decoder), "
           "which is what the model applies to its last stream.";
  if (c.norm == NormPlacement::Pre)
    return "Each point goes through the decoder's final LayerNorm and the unembedding, as the last "
           "stream does.";
  return "Post-LN: no final norm — every block already ends in a LayerNorm, so the unembedding reads "
         "each point as it is.";
}

Mat lens_logits(const Model& m, const Mat& stream) {
  const Config& c = m.config;
  if (c.arch == Arch::EncoderOnly) return mlm_logits(m, stream, nullptr);
  Mat logits;  // (n, V)
  if (c.norm == NormPlacement::Pre) {
    Mat normed;  // (n, d)
    layer_norm_forward(stream, m.weights.decoder_norm, normed, nullptr);
    generator_forward(m.weights, c, normed, logits);
  } else {
    generator_forward(m.weights, c, stream, logits);
  }
  return logits;
}

LogitLens logit_lens(const Model& m, const Trace& t) {
  LogitLens out;
  out.points =
      m.config.arch == Arch::EncoderOnly ? encoder_points(m.config, t.encoder) : decoder_points(m.config, t.decoder);
  for (const ResidualPoint& p : out.points) out.logits.push_back(lens_logits(m, *p.stream));
  return out;
}

LensCell lens_top_k(const Mat& logits, int row, int k) {
  const auto r = logits.row(row);
  const int v = static_cast<int>(r.size());
  k = std::max(0, std::min(k, v));
  std::vector<int> order(static_cast<size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  // Ties go to the lower id, as argmax does.
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return r(a) > r(b) || (r(a) == r(b) && a < b); });
  const Mat p = softmax_rows(Mat(r));
  LensCell cell;
  for (int i = 0; i < k; ++i) {
    cell.ids.push_back(order[static_cast<size_t>(i)]);
    cell.probs.push_back(p(0, order[static_cast<size_t>(i)]));
  }
  return cell;
}

TokenRank lens_rank(const Mat& logits, int row, int token) {
  const auto r = logits.row(row);
  TokenRank out;
  const float x = r(token);
  for (Eigen::Index j = 0; j < r.size(); ++j)
    if (r(j) > x || (r(j) == x && j < token)) ++out.rank;
  out.prob = softmax_rows(Mat(r))(0, token);
  return out;
}

}  // namespace sf
