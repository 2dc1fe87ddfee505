// attention_view.h — one attention sublayer of the decoded sequence as a single recording: the
// rows of every step decoded so far stacked into one AttentionTrace with B = 1, what a heatmap of
// "the whole sequence" shows.
//
// A cached decoding step records only its own query rows and the key rows it added, and no raw
// scores or weights (DecoderTrace::compact); the view gathers the keys from the steps that wrote
// them (Session::attended_kv) and computes each row's raw scores Q_h K_hᵀ and weights again with
// the forward's own attend() over the keys that row saw, as Session::whole_trace does. Keys a row did not see (a
// later position, not fed yet when the row ran) hold mask −inf, weight 0 and raw score NaN.
#pragma once

#include <memory>
#include <vector>

#include "model/attention.h"
#include "stepper/session.h"

namespace sf {

// One query row of the decoded sequence: a row of some step's recording.
struct DecodedRow {
  std::shared_ptr<const DecoderTrace> trace;
  int row = 0;       // row in trace
  int position = 0;  // absolute position
  int id = 0;        // token fed
  int step = 0;      // the step that computed it
};

// The rows of steps 0 .. last along the focused hypothesis's lineage (beam search: the hypothesis
// followed back through its ancestors), in position order.
std::vector<DecodedRow> lineage_rows(const Session& s, int last);

// Rows [row0, row0 + rows) of a view, computed together by one step over its first `cols` keys.
struct RowRun {
  int row0 = 0, rows = 0, cols = 0;
};

// An attention sublayer as the views show it.
struct StackedAttention {
  AttentionTrace trace;      // B = 1; rows: the queries; columns: every key attended
  std::vector<int> q_ids;    // (n_q) token of each query row
  std::vector<int> q_step;   // (n_q) decoder step that computed each row; −1 on the encoder
  std::vector<int> k_ids;    // (n_k) token of each key; −2: a position not fed yet
  std::vector<RowRun> runs;  // the rows in runs computed together, in order
};

// Head h's raw scores and weights (n_q, n_k) of a view from its Q, K and mask (a.q, a.k,
// a.masks[0]): per run, the forward's head_attention over the keys that run saw, so the numbers
// are the ones the forward computed; keys a row did not see hold raw NaN and weight 0.
void stacked_head_maps(const AttentionTrace& a, const std::vector<RowRun>& runs, int head, Mat& raw, Mat& weights);

// Encoder self-attention of one layer (every row computed at once).
StackedAttention encoder_attention(const Session& s, int layer);

// Decoder self- or cross-attention of one layer over `rows` (non-empty, position order, ending
// with the newest row): the keys are those the last row's step attended over.
// `maps` false gives what a viewer of the maps reads — Q, K, V and the mask — and leaves
// trace.raw_scores and trace.weights empty (stacked_head_maps gives any head's on demand) and
// trace.concat and trace.out too: a long input's view then holds O(n·d) numbers and one mask, not
// O(n²·heads). `like`: masks the view shares instead of holding its own when they are the same,
// bit for bit (another layer's view over the same rows: every layer of a step has the same mask).
StackedAttention decoder_attention(const Session& s, const std::vector<DecodedRow>& rows, int layer, bool cross,
                                   bool maps = true, const MaskList* like = nullptr);

}  // namespace sf
