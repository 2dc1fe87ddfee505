// batch.h — examples of a task as padded id blocks that the batched forward reads.
//
// B sequences are padded (with <pad>, at the end) to the longest of the batch and stacked:
//   encoder-decoder:  src    (B·n)  the source tokens as given
//                     tgt_in (B·m)  <s> y₁ … y_k <pad>…
//                     tgt_y  (B·m)  y₁ … y_k </s> <pad>…
//   decoder-only:     tgt_in (B·m)  <s> x₁ … x_n = y₁ … y_k <pad>…
//                     tgt_y  (B·m)  <pad> … <pad> y₁ … y_k </s> <pad>…  (the prompt is not scored)
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/config.h"
#include "train/tasks.h"

namespace sf {

struct Batch {
  int size = 0;             // B
  int n = 0;                // padded source length (0 for decoder-only)
  int m = 0;                // padded decoder length
  std::vector<int> src;     // (B·n)
  std::vector<int> tgt_in;  // (B·m)
  std::vector<int> tgt_y;   // (B·m) <pad> = not scored
  int target_tokens = 0;    // scored positions (non-pad tgt_y)

  // Sequences [b0, b0 + count) as a batch of their own (same padded lengths).
  Batch rows(int b0, int count, int pad) const;
};

// Token strings to ids (every symbol of a task is in its vocabulary; unknowns become <unk>).
std::vector<int> to_ids(const Vocab& v, const std::vector<std::string>& tokens);
Batch make_batch(const Config& c, const std::vector<Example>& examples);

// The attention masks of a padded batch, one per sequence, as the forward builds them (make_mask
// with source_pad_key / decoder_pad_key): 0 where a query may attend, −inf where not.
struct BatchMasks {
  std::vector<Mat> encoder;           // [b] (n, n) encoder self-attention: the source's <pad> keys
  std::vector<Mat> decoder;           // [b] (m, m) decoder self-attention: <pad> keys and j > i
  std::vector<Mat> cross;             // [b] (m, n) cross-attention: the source's <pad> keys
  std::vector<int> src_len, tgt_len;  // (B) tokens before the padding (source; decoder input)
};
BatchMasks batch_masks(const Config& c, const Batch& b);

}  // namespace sf
