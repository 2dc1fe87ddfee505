// trace.h — the recording of a run: every intermediate a viewer (or the backward pass) needs.
//
// A run fills a Trace only when given one; passing nullptr records nothing and pays nothing.
// Sequences of a batch are stacked as rows (B·n, d); the explorer always runs B = 1.
#pragma once

#include <string>
#include <vector>

#include "model/attention.h"
#include "model/embedding.h"
#include "model/feed_forward.h"
#include "model/layer_norm.h"
#include "model/recording.h"
#include "model/residual.h"

namespace sf {

struct Model;

struct EncoderLayerTrace {
  ResidualTrace self_block;  // norm1 around self-attention
  AttentionTrace self_attn;
  ResidualTrace ffn_block;  // norm2 around the feed-forward
  FeedForwardTrace ffn;

  // The block whose output is the layer's output (an encoder layer always has its feed-forward).
  const ResidualTrace& last_block(const Config&) const { return ffn_block; }
};

struct DecoderLayerTrace {
  ResidualTrace self_block;  // norm1 around masked self-attention
  AttentionTrace self_attn;
  ResidualTrace cross_block;  // norm2 around cross-attention (encoder-decoder only)
  AttentionTrace cross_attn;
  ResidualTrace ffn_block;  // norm3 (enc-dec) or norm2 (decoder-only) around the feed-forward
  FeedForwardTrace ffn;     // both empty in an attention-only decoder (Config::has_ffn)

  // The block whose output is the layer's output: the feed-forward's, or in an attention-only
  // decoder the self-attention's.
  const ResidualTrace& last_block(const Config& c) const { return c.has_ffn() ? ffn_block : self_block; }
  ResidualTrace& last_block(const Config& c) { return c.has_ffn() ? ffn_block : self_block; }
};

struct EncoderTrace {
  int batch = 0;
  Recording kind = Recording::Full;  // set before the run (model/recording.h)
  EmbeddingTrace embed;
  std::vector<EncoderLayerTrace> layers;
  LayerNormTrace final_norm;  // pre-LN only
  Mat output;                 // (B·n, d) the memory the decoder attends to
  // Encoder-only models with an MLM head: the per-position predictions.
  Mat mlm_hidden_pre;       // (B·n, d) dense(output)
  LayerNormTrace mlm_norm;  // statistics of LN(act(dense(output)))
  Mat mlm_hidden;           // (B·n, d) LN(act(dense(output))): the decoder's input
  Mat logits;               // (B·n, V) mlm_hidden E^T + bias
  Mat log_probs;            // (B·n, V)
  Mat probs;                // (B·n, V)
};

struct DecoderTrace {
  int batch = 0;
  // Set before the run (model/recording.h). Compact: a stepper Session's kept steps, whose
  // attentions it then trims to the K/V rows the step added (log_probs_of/probs_of compute the
  // distributions). Training: the trainer's steps that the probes skip.
  Recording kind = Recording::Full;
  int pos0 = 0;     // absolute position of the first row (a cached step: the step index)
  bool ffn = true;  // the layers have feed-forward sublayers (set before the run from Config::has_ffn)
  EmbeddingTrace embed;
  std::vector<DecoderLayerTrace> layers;
  LayerNormTrace final_norm;  // pre-LN only
  Mat output;                 // (B·m, d) generator input
  Mat logits;                 // (B·m, V)
  Mat log_probs;              // (B·m, V) log_softmax(logits)
  Mat probs;                  // (B·m, V) softmax(logits)
};

struct Trace {
  EncoderTrace encoder;
  DecoderTrace decoder;
};

// Sets the recording kind of every sublayer of the trace's layers (and final LayerNorm) to the
// trace's own, marking each stack's last block: encode() and decode() call them before a run.
void spread_kind(EncoderTrace& t);
void spread_kind(DecoderTrace& t);

// The matrices a decoder recording's residual blocks hold twice, bit for bit: the sum x + f(x) of a
// pre-LN block (its output), the LayerNorm's output (pre-LN: the sublayer's input; post-LN: the
// block's output), the sublayer's output (the attention's or feed-forward's own `out`) and a
// block's input (the output of the block before it, the residual stream passed on).
// drop_block_copies empties each one that equals its twin (a kept step of a long input: 8 of a
// GPT-2 layer's ~20 (n, d) matrices); restore_block_copies copies the twins back, so the recording
// is again the one the run made. `norm` is the model's placement (Config::norm).
void drop_block_copies(DecoderTrace& t, NormPlacement norm);
void restore_block_copies(DecoderTrace& t, NormPlacement norm);
// A block of t's (one of its layers' self_block, cross_block, ffn_block) as the run fed it: its
// own `input`, or when drop_block_copies emptied it, the output of the block before it it equals.
const Mat& block_input(const DecoderTrace& t, const ResidualTrace& block);

// Row-wise log-softmax and softmax, computed in a numerically safe way (max subtracted).
Mat log_softmax_rows(const Mat& logits);
Mat softmax_rows(const Mat& logits);
// Records logits (n, V) with their log_softmax and softmax (a decoder's or an MLM head's).
void record_logits(const Mat& logits, Mat& logits_out, Mat& log_probs, Mat& probs);
// (n, V) a decoder recording's log_probs / probs: the stored ones, or (compact recording) the
// same numbers computed from its logits as record_logits does.
Mat log_probs_of(const DecoderTrace& t);
Mat probs_of(const DecoderTrace& t);

}  // namespace sf
