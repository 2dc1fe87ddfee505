// embedding.h — token embedding × scale plus positional encoding (Vaswani §3.4–3.5), and the
// extras of BERT (Devlin et al. 2019, §3): a token-type (segment) row added to the sum and a
// LayerNorm of the sum before layer 0.
//
//   x = E[id]·s + p_t (+ T[type]);  x = LN(x) when the model has an embedding LayerNorm
//   s = √d (Vaswani, Marian) or 1 (GPT-2, BERT)
#pragma once

#include <vector>

#include "model/config.h"
#include "model/layer_norm.h"
#include "base/tensor.h"
#include "model/recording.h"
#include "model/weights.h"

namespace sf {

struct EmbeddingTrace {
  // Set before the run. Training: only what embed_backward reads (ids, positions, scale, the
  // dropout mask), not the (B·n, d) copies a view shows (scaled, pe, sum).
  Recording kind = Recording::Full;
  std::vector<int> ids;          // (B·n) token ids read
  std::vector<int> positions;    // (B·n) position of each row
  float scale = 1.0f;            // s: √d or 1
  Mat scaled;                    // (B·n, d) E[id] · s
  Mat pe;                        // (B·n, d) p_t (zeros when positional encoding is switched off)
  std::vector<int> token_types;  // (B·n) BERT segment ids; empty without a token-type table
  Mat types;                     // (B·n, d) T[type]; empty without a token-type table
  Mat pre_norm;                  // (B·n, d) the sum before the embedding LayerNorm; empty without one
  LayerNormTrace norm;           // the embedding LayerNorm's statistics (BERT)
  Mat sum;                       // (B·n, d) the stream entering layer 0 (after the LN and dropout, if any)
  // Embedding dropout, training only: (B·n, d) entries 0 or 1/(1−p), drawn by the trainer before
  // the run and applied to scaled + pe. Empty = none (every inference run).
  Mat dropout_mask;
};

// What one side's embedding reads; built by Model::embedding (model/model.h).
struct EmbeddingParams {
  const Mat* table = nullptr;              // (V, d)
  const HalfMat* table_half = nullptr;     // (V, d) the table kept 16-bit instead (rows widened as read)
  const Mat* positions = nullptr;          // (max_len, d) the sinusoid table or the learned pos_embed;
                                           // null for rotary models (nothing added)
  float scale = 1.0f;                      // s
  const Mat* token_types = nullptr;        // (T, d) BERT's segment table, or null
  const LayerNormWeights* norm = nullptr;  // BERT's embedding LayerNorm, or null
  int sep = -1;                            // [SEP]: segment ids count the [SEP]s before each position (BERT pairs)
  int pad = -1;                            // <pad>/[PAD] rows get segment 0
};

// BERT's segment ids for one sequence: 0 up to and including the first [SEP], then 1 (capped
// at n_types − 1), and 0 for padding — what the hub tokenizers produce for a pair "A [SEP] B [SEP]".
std::vector<int> segment_ids(const std::vector<int>& ids, int sep, int pad, int n_types);

// ids (B·n) laid out as B sequences of n; row r has position pos0 + r % n.
// ids and positions must be in range (checked by the caller at the boundary).
void embed(const EmbeddingParams& p, const std::vector<int>& ids, int batch, int pos0, bool use_positional, Mat& x,
           EmbeddingTrace* tr);

// Backward: dx (B·n, d) the grad of the stream entering layer 0 (times the dropout mask, if the
// run had one). Accumulates (+=)
// dtable.row(id_r) += s · dx.row(r) and, for learned positions, dpos->row(position_r) += dx.row(r)
// (pass nullptr for sinusoidal or switched-off positions, which have no parameters).
// Token types and the embedding LayerNorm (pretrained BERT) are not trained here.
void embed_backward(const EmbeddingTrace& tr, const Mat& dx, Mat& dtable, Mat* dpos);

}  // namespace sf
