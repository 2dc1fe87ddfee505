#include "model/mask.h"

namespace sf {

Mat make_mask(int n_q, const std::vector<int>& key_ids, int pad, bool causal, int q_offset, int window) {
  const int n_k = static_cast<int>(key_ids.size());
  Mat m = Mat::Zero(n_q, n_k);
  for (int j = 0; j < n_k; ++j) {
    const bool padded = key_ids[static_cast<size_t>(j)] == pad;
    for (int i = 0; i < n_q; ++i)
      if (padded || (causal && j > q_offset + i) || (window > 0 && j <= q_offset + i - window)) m(i, j) = kMasked;
  }
  return m;
}

int source_pad_key(const Config& c) { return c.src_vocab.pad(); }

int decoder_pad_key(const Config& c) { return c.decoder_pad_mask ? c.tgt_vocab.pad() : -1; }

}  // namespace sf
