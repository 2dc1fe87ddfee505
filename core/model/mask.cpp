#include "model/mask.h"

#include <algorithm>

namespace sf {

namespace {

// Query i at absolute position q_offset + i and key j: the three rules.
bool in_future(bool causal, int q_offset, int i, int j) { return causal && j > q_offset + i; }
bool before_window(int window, int q_offset, int i, int j) { return j < first_visible_key(q_offset + i, window); }

}  // namespace

int first_visible_key(int position, int window) { return window > 0 ? std::max(0, position - window + 1) : 0; }

Mat make_mask(int n_q, const std::vector<int>& key_ids, int pad, bool causal, int q_offset, int window) {
  const int n_k = static_cast<int>(key_ids.size());
  Mat m(n_q, n_k);
  // Row by row, as the matrix lies in memory (a 1,024-token prompt's mask is 4 MB).
  for (int i = 0; i < n_q; ++i) {
    float* row = m.row(i).data();
    for (int j = 0; j < n_k; ++j) {
      const bool padded = key_ids[static_cast<size_t>(j)] == pad;
      row[j] = padded || in_future(causal, q_offset, i, j) || before_window(window, q_offset, i, j) ? kMasked : 0.0f;
    }
  }
  return m;
}

MaskParts mask_parts(int n_q, const std::vector<int>& key_ids, int pad, bool causal, int q_offset, int window) {
  const int n_k = static_cast<int>(key_ids.size());
  MaskParts p;
  p.window = window;
  p.padding = p.future = p.outside_window = Mat::Zero(n_q, n_k);
  for (int j = 0; j < n_k; ++j)
    for (int i = 0; i < n_q; ++i) {
      if (key_ids[static_cast<size_t>(j)] == pad) p.padding(i, j) = kMasked;
      if (in_future(causal, q_offset, i, j)) p.future(i, j) = kMasked;
      if (before_window(window, q_offset, i, j) && !in_future(causal, q_offset, i, j)) p.outside_window(i, j) = kMasked;
    }
  p.combined = make_mask(n_q, key_ids, pad, causal, q_offset, window);
  return p;
}

int source_pad_key(const Config& c) { return c.src_vocab.pad(); }

int decoder_pad_key(const Config& c) { return c.decoder_pad_mask ? c.tgt_vocab.pad() : -1; }

}  // namespace sf
