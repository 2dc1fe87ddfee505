// rotary.h — rotary position embedding (Su et al. 2021, "RoFormer") in Hugging Face's layout.
//
// The sinusoidal encoding's rotation M(k, φ) ("Transformer Architecture", positional encoding),
// applied to queries and keys instead of added to the input: within each head, dimension i and
// dimension i + r/2 (r = the rotating dimensions, the first r of the head) form one pair, turned
// by the angle p·θ_i at position p:
//
//   x'_i       = x_i · cos(p·θ_i) − x_{i+r/2} · sin(p·θ_i)
//   x'_{i+r/2} = x_{i+r/2} · cos(p·θ_i) + x_i · sin(p·θ_i)          i < r/2,  θ_i = theta^(−2i/r)
//
// (transformers' rotate_half: the two halves of a head, not interleaved pairs 2i, 2i+1; the hub's
// q/k weights are stored permuted for it.) Dimensions [r, d_head) pass unchanged (GPT-NeoX's
// rotary_pct). Then q_m·k_n depends on the positions only through m − n.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/config.h"

namespace sf {

// (r/2) the frequencies θ_i of a rotary config after its rope_scaling (transformers'
// modeling_rope_utils: "default", "linear", "llama3").
RowVec rope_inv_freq(const Config& c);

// What one self-attention call rotates with: the frequencies, the rotating dimensions per head,
// and the positions of its rows (row r of sequence b is at pos0 + r, sequences stacked by rows of
// rows_per_seq).
struct Rotation {
  const RowVec* inv_freq = nullptr;  // (r/2)
  int rot_dim = 0;                   // r
  int d_head = 0;
  int pos0 = 0;
  int rows_per_seq = 0;
  // cos(p·θ_i) and sin(p·θ_i) of the rows' positions, (rows_per_seq, r/2) each, when tabulated
  // (tabulate_angles); empty: apply_rotary computes them row by row.
  std::vector<float> cos, sin;
};

// Fills rot.cos and rot.sin once for every call that turns rows with `rot`: a forward turns Q and
// K of every layer by the same angles (SmolLM2's 30 layers: 60 passes of cos and sin otherwise).
// The floats are those apply_rotary would compute.
void tabulate_angles(Rotation& rot);

// x (rows, heads·d_head), rotated in place head by head.
void apply_rotary(Mat& x, const Rotation& rot);

}  // namespace sf
