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

// An attention sublayer as the views show it.
struct StackedAttention {
  AttentionTrace trace;     // B = 1; rows: the queries; columns: every key attended
  std::vector<int> q_ids;   // (n_q) token of each query row
  std::vector<int> q_step;  // (n_q) decoder step that computed each row; −1 on the encoder
  std::vector<int> k_ids;   // (n_k) token of each key; −2: a position not fed yet
};

// Encoder self-attention of one layer (every row computed at once).
StackedAttention encoder_attention(const Session& s, int layer);

// Decoder self- or cross-attention of one layer over `rows` (non-empty, position order, ending
// with the newest row): the keys are those the last row's step attended over.
StackedAttention decoder_attention(const Session& s, const std::vector<DecodedRow>& rows, int layer, bool cross);

}  // namespace sf
