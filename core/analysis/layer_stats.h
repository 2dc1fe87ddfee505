// layer_stats.h — the per-layer numbers that tell pre-LN and post-LN apart on one input (Xiong et
// al. 2020, §3): how large the residual stream is after each block, what its LayerNorm saw, and
// how spread out each head's attention is. All of it is read out of a recording; nothing runs.
//
//   residual norm   ‖x_t‖₂ of the stream leaving a block, per token t, and its mean over tokens.
//                   Pre-LN never normalises the stream itself, so it grows with depth; post-LN's
//                   stream leaves every block through a LayerNorm (‖x‖ ≈ √d · gain).
//   LN mean / var   μ_t and the biased σ²_t that block's LayerNorm computed, per token: of the
//                   block's input for pre-LN, of x + Sublayer(x) for post-LN.
//   entropy         H = −Σ_j w_j ln w_j (nats) of one query row of one head's weights. Masked keys
//                   have weight exactly 0 (masked_softmax) and drop out of the sum; a fully masked
//                   row has H = 0. Per head: the mean over query rows. 0 = all weight on one key,
//                   ln(n_k) = uniform.
#pragma once

#include <vector>

#include "model/attention.h"
#include "model/residual.h"
#include "stepper/stage.h"
#include "model/trace.h"

namespace sf {

class Session;

// Entropy (nats) of row `row` of a weight matrix (n_q, n_k).
double row_entropy(const Mat& w, Eigen::Index row);
// Per head (h): the mean over `rows` (query rows of batch element 0) of row_entropy.
std::vector<double> head_entropy(const AttentionTrace& a, const std::vector<int>& rows);

// Every row of one head's weights (n_q, n_k) with its additive mask: the entropy, the keys the
// mask leaves visible and the largest entropy those allow, ln(visible) (0 with one key or none).
struct RowEntropies {
  std::vector<float> entropy;  // (n_q) nats
  std::vector<int> visible;    // (n_q) keys with a finite mask
  std::vector<float> max;      // (n_q) ln(visible)
  float mean = 0;              // mean of entropy over the rows (0 without rows)
};
RowEntropies row_entropies(const Mat& w, const Mat& mask);

// One sublayer connection (self-attention, cross-attention or feed-forward) of one layer.
struct BlockStat {
  Block block = Block::None;
  std::vector<float> norm_in;                    // (n) ‖x_t‖₂ entering the block
  std::vector<float> norm_out;                   // (n) ‖x_t‖₂ leaving it
  std::vector<float> ln_mean;                    // (n) μ_t of the block's LayerNorm
  std::vector<float> ln_var;                     // (n) σ²_t of the block's LayerNorm
  std::vector<float> ln_rms;                     // (n) √mean(x²)_t of the block's RMSNorm (instead of μ, σ²)
  std::vector<double> entropy;                   // (h) attention blocks: mean over query rows; empty for the FFN
  std::vector<std::vector<float>> entropy_rows;  // [h] (n) per query row; empty for the FFN

  int tokens() const { return static_cast<int>(norm_out.size()); }
  double mean_norm_in() const;  // mean over tokens (0 when there is none)
  double mean_norm_out() const;
  double mean_ln_mean() const;
  double mean_ln_var() const;
  double mean_ln_rms() const;
};

// One layer of one stack: its blocks in the order they run. A block appears once it has run (as
// of the stepper's cursor), so a layer can hold fewer blocks than the model has.
struct LayerStat {
  Side side = Side::Encoder;
  int layer = 0;
  std::vector<BlockStat> blocks;
  const BlockStat* find(Block b) const;
  // ‖x‖ leaving the layer: the last block's mean output norm (NaN before any block has run).
  double resid_norm() const;
};

struct ModelStats {
  std::vector<LayerStat> encoder;  // (L_enc) layers that have run
  std::vector<LayerStat> decoder;  // (L_dec) layers that have run for at least one token
  std::vector<int> decoder_steps;  // (tokens of the decoder rows) the step each row belongs to
};

// Statistics of one recorded block for the given rows (all rows when `rows` is empty).
BlockStat block_stat(Block b, const ResidualTrace& r, const AttentionTrace* attn, const std::vector<int>& rows = {});
// Appends the statistics of `rows` of a recorded block to `out` (entropy means recomputed), for a
// sequence whose rows come from several recordings (decoding steps, beam ancestors). `input`: the
// block's input when r refers to the previous block's output instead of holding it (block_input,
// model/trace.h); null: r.input.
void append_block_rows(BlockStat& out, const ResidualTrace& r, const AttentionTrace* attn, const std::vector<int>& rows,
                       const Mat* input = nullptr);

// Statistics of the whole encoder recording.
std::vector<LayerStat> encoder_stats(const EncoderTrace& t);

// The Session as of its cursor: the encoder's layers whose blocks have run, and the decoder rows
// of the steps decoded so far (the current step's row only in blocks the cursor has completed —
// post-LN: its AddNorm stage; pre-LN: the sublayer stage). Beam search: each step's focused
// recording.
ModelStats layer_stats(const Session& s);

}  // namespace sf
