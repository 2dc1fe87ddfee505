// embedding.h — token embedding × √d plus positional encoding (Vaswani §3.4–3.5).
#pragma once

#include <vector>

#include "model/config.h"
#include "base/tensor.h"
#include "model/weights.h"

namespace sf {

struct EmbeddingTrace {
  std::vector<int> ids;  // (B·n) token ids read
  std::vector<int> positions;  // (B·n) position of each row
  Mat scaled;            // (B·n, d) E[id] · √d
  Mat pe;                // (B·n, d) p_t (zeros when positional encoding is switched off)
  Mat sum;               // (B·n, d) scaled + pe: the stream entering layer 0 (after dropout, if any)
  // Embedding dropout, training only: (B·n, d) entries 0 or 1/(1−p), drawn by the trainer before
  // the run and applied to scaled + pe. Empty = none (every inference run).
  Mat dropout_mask;
};

// ids (B·n) laid out as B sequences of n; row r has position pos0 + r % n.
// `table` is (V, d), `positions` is (max_len, d) (the sinusoid table or the learned pos_embed);
// ids and positions must be in range (checked by the caller at the boundary).
void embed(const Mat& table, const Mat& positions, const std::vector<int>& ids, int batch, int pos0,
           bool use_positional, Mat& x, EmbeddingTrace* tr);

// Backward: dx (B·n, d) the grad of the stream entering layer 0 (times the dropout mask, if the
// run had one). Accumulates (+=)
// dtable.row(id_r) += √d · dx.row(r) and, for learned positions, dpos->row(position_r) += dx.row(r)
// (pass nullptr for sinusoidal or switched-off positions, which have no parameters).
void embed_backward(const EmbeddingTrace& tr, const Mat& dx, Mat& dtable, Mat* dpos);

}  // namespace sf
