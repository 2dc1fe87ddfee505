// rotary_view.h — the numbers of the explorer's rotary tab (Positional encoding panel): for one
// self-attention layer and head of a rotary model, the two dimensions of one frequency as 2-D
// vectors turning with position, the score q_m·k_n recomputed from the recorded rotated rows, and
// the relative-position property in numbers.
//
// Rotary embedding is the sinusoidal encoding's rotation M(k, φ) ("Transformer in details",
// Positional Encoding: the rotation that maps p_t onto p_{t+φ}) applied to the queries and keys
// instead of added to the input (model/rotary.h): dimension i and i + r/2 of a head turn by p·θ_i
// at position p. Since R(m)ᵀR(n) = R(n − m), R(m)q̃ · R(n)k̃ = q̃ · R(n − m)k̃ depends on the
// positions only through m − n.
#pragma once

#include <vector>

#include "base/result.h"
#include "base/tensor.h"
#include "model/config.h"

namespace sf {

// Which dimensions of a head rotate: pairs (i, i + r/2) for i < r/2 turn by p·θ_i, dimensions
// [r, d_head) pass through unchanged (GPT-NeoX's rotary_pct < 1).
struct RotaryLayout {
  int d_head = 0;
  int rot_dim = 0;  // r
  RowVec theta;     // (r/2) θ_i after rope_scaling
  int pairs() const { return rot_dim / 2; }
  int pass_through() const { return d_head - rot_dim; }
};
RotaryLayout rotary_layout(const Config& c);

// The score of one fixed un-rotated pair (q̃, k̃) placed at positions m and n.
struct RelativeEntry {
  int m = 0, n = 0;
  float score = 0;  // R(m)q̃ · R(n)k̃ over the whole head (pass-through dimensions included)
};
struct RelativeRow {
  int offset = 0;  // m − n
  std::vector<RelativeEntry> at;
  float spread = 0;  // max − min of the row's scores
};

struct RotaryView {
  RotaryLayout layout;
  int head = 0, kv_head = 0;  // the query head and the K/V head it reads
  int pair = 0;               // frequency index i
  int dim_a = 0, dim_b = 0;   // the pair's dimensions within the head: i and i + r/2
  float theta = 0;            // θ_i (radians per position)
  float wavelength = 0;       // 2π / θ_i positions
  Mat q_pair, k_pair;         // (n_q, 2) / (n_k, 2) the recorded rotated q_m, k_n on (dim_a, dim_b)
  Mat q0_pair, k0_pair;       // the same rows turned back by −p·θ_i: the projections before rotation
  Mat q_fan;                  // (n_q, 2) query fix_q's un-rotated pair turned to every position p: R(p·θ_i)q̃
  Mat scores;                 // (n_q, n_k) q_m·k_n over the head from the recorded rotated rows (Q_h K_hᵀ)
  Mat pair_scores;            // (n_q, n_k) the chosen pair's share of it
  // The relative-position property: q̃ = un-rotated query row fix_q and k̃ = un-rotated key row
  // fix_k, placed at several (m, n) per offset m − n.
  int fix_q = 0, fix_k = 0;
  float unrotated_score = 0;  // q̃ · k̃ (what every offset 0 row shows)
  std::vector<RelativeRow> relative;
  float max_spread = 0;  // the largest row spread: rounding only
};

// q (n_q, h·d_head) and k (n_k, h_kv·d_head): the rotated queries and keys of one self-attention
// call as recorded, row t at position t. `offsets` and `starts` give the table's rows (m − n) and
// the key positions n of each row. Errors name what was expected and what was found.
Result<RotaryView> rotary_view(const Config& c, const Mat& q, const Mat& k, int head, int pair, int fix_q, int fix_k,
                               const std::vector<int>& offsets = {0, 1, 2, 5},
                               const std::vector<int>& starts = {0, 3, 10, 30});

// x (rows, heads·d_head) rotated in place by −p·θ (row t at position pos0 + t): the inverse of
// apply_rotary, which gives back the projections before the rotation.
void unrotate(Mat& x, const RotaryLayout& l, int pos0 = 0);

}  // namespace sf
