// residual.h — the sublayer connection: the ONE place where pre-LN and post-LN differ.
//
//   post-LN (Vaswani et al. 2017):  y = LN(x + Sublayer(x))
//   pre-LN  (Xiong et al. 2020):    y = x + Sublayer(LN(x))
//
// The Annotated Transformer's code is pre-LN although the paper is post-LN; here the choice is
// the config's `norm` and nothing else.
#pragma once

#include <utility>

#include "base/elementwise.h"
#include "base/phase_timer.h"
#include "model/config.h"
#include "model/layer_norm.h"

namespace sf {

struct ResidualTrace {
  // Set before the run. Training: what residual_backward and the training probes read, not the
  // copies a view shows: no `input` for post-LN, no `sum` for pre-LN (a copy of `output`), no
  // `sublayer_out`, no LayerNorm output; and no `output` unless `stack_end` (the last block of a
  // stack, whose output the final LayerNorm's backward reads: every other block's output is the
  // next block's input). Full and Compact record the block whole.
  Recording kind = Recording::Full;
  bool stack_end = false;
  Mat input;            // (n, d) residual stream entering the block
  Mat sublayer_in;      // (n, d) what the sublayer read: LN(input) for pre-LN, input for post-LN
  Mat sublayer_out;     // (n, d)
  Mat sum;              // (n, d) input + sublayer_out (post-LN: before its LN; pre-LN: == output)
  LayerNormTrace norm;  // statistics of the LN of this block (of `input` for pre, of `sum` for post)
  Mat output;           // (n, d) residual stream leaving the block
  // Residual dropout (Vaswani §5.4), training only: (n, d) entries 0 or 1/(1−p), drawn by the
  // trainer into the trace *before* the run; the sublayer output is multiplied by it before the
  // residual add. Empty (every inference run) = no dropout. The backward reads the same mask.
  Mat dropout_mask;
};

// sublayer(const Mat& in, Mat& out) computes the block's function on `in`. The block consumes x
// (n, d), which its callers never read again (the residual stream moves on to y): a recording
// takes it over instead of copying it — the input the backward reads (pre-LN: `input`; post-LN:
// `sublayer_in`) — and x is left empty.
template <class Sublayer>
void residual_block(NormPlacement placement, const LayerNormWeights& ln, Mat& x, Sublayer&& sublayer, Mat& y,
                    ResidualTrace* tr) {
  Mat s;               // (n, d) sublayer output
  const Mat* in = &x;  // (n, d) the block's input, wherever it is kept
  const bool training = tr && tr->kind == Recording::Training;
  if (tr) {
    tr->norm.kind = tr->kind;
    Mat& kept = placement == NormPlacement::Pre ? tr->input : tr->sublayer_in;
    kept = std::move(x);
    in = &kept;
    if (!training && placement == NormPlacement::Post) tr->input = kept;
  }
  const bool drop = tr && tr->dropout_mask.rows() == in->rows() && tr->dropout_mask.cols() == in->cols();
  switch (placement) {
    case NormPlacement::Post: {
      sublayer(*in, s);
      if (drop) s.array() *= tr->dropout_mask.array();
      Mat sum;  // (n, d)
      add(*in, s, sum);
      layer_norm_forward(sum, ln, y, tr ? &tr->norm : nullptr);
      if (tr) tr->sum = std::move(sum);
      break;
    }
    case NormPlacement::Pre: {
      Mat normed;
      layer_norm_forward(*in, ln, normed, tr ? &tr->norm : nullptr);
      sublayer(normed, s);
      if (drop) s.array() *= tr->dropout_mask.array();
      if (training) {  // no copy of s to keep: the sum in place, in the lines the sublayer just wrote
        add(s, *in, s);
        y = std::move(s);
      } else {
        add(*in, s, y);
      }
      if (tr) {
        tr->sublayer_in = std::move(normed);
        if (!training) tr->sum = y;
      }
      break;
    }
  }
  if (tr) {
    if (!training) tr->sublayer_out = std::move(s);
    const ScopedPhase phase(Phase::RecordingCopy);
    if (!training || tr->stack_end) tr->output = y;
  }
}

// GPT-NeoX's parallel residual (use_parallel_residual; pre-LN only, forward only): both sublayers
// read the same input x (n, d), y = x + attn(LN1(x)) + mlp(LN2(x)), summed as transformers sums
// it, (mlp + attn) + x. attn(in, out) and mlp(in, out) compute the sublayers. x is consumed.
// Recording: `at` holds the attention branch (input x, LN1(x), attn, its sum x + attn as
// `sum` and `output`); `mt` the MLP branch (input x, LN2(x), mlp) with `sum` and `output` the
// layer's result y.
template <class Attn, class Mlp>
void parallel_residual_block(const LayerNormWeights& ln1, const LayerNormWeights& ln2, Mat& x, Attn&& attn, Mlp&& mlp,
                             Mat& y, ResidualTrace* at, ResidualTrace* mt) {
  Mat a_in, m_in, a, f;  // (n, d) each
  if (at) at->norm.kind = at->kind;
  if (mt) mt->norm.kind = mt->kind;
  layer_norm_forward(x, ln1, a_in, at ? &at->norm : nullptr);
  layer_norm_forward(x, ln2, m_in, mt ? &mt->norm : nullptr);
  attn(a_in, a);
  mlp(m_in, f);
  add(f, a, y);
  add(y, x, y);
  if (at) {
    at->input = x;
    at->sublayer_in = std::move(a_in);
    add(x, a, at->sum);
    at->output = at->sum;
    at->sublayer_out = std::move(a);
  }
  if (mt) {
    mt->input = std::move(x);
    mt->sublayer_in = std::move(m_in);
    mt->sublayer_out = std::move(f);
    mt->sum = y;
    mt->output = y;
  }
}

// Backward of residual_block, reading its recording. dy (n, d) is the grad of the block's output;
// sublayer_backward(const Mat& d_out, Mat& d_in) runs the sublayer's backward (d_in written).
// The LN's parameter grads accumulate into g_ln (+=); dx (n, d) is written (=).
//   post-LN: dsum = LN'(dy);  dx = dsum + Sublayer'(dsum ⊙ mask)
//   pre-LN:  dx = dy + LN'(Sublayer'(dy ⊙ mask))      — the identity path carries dy untouched
// (mask = the dropout mask, when the run had one).
template <class SublayerBackward>
void residual_backward(NormPlacement placement, const LayerNormWeights& ln, const ResidualTrace& tr, const Mat& dy,
                       SublayerBackward&& sublayer_backward, LayerNormWeights& g_ln, Mat& dx) {
  const bool drop = tr.dropout_mask.rows() == dy.rows() && tr.dropout_mask.cols() == dy.cols();
  switch (placement) {
    case NormPlacement::Post: {
      Mat dsum, din;
      layer_norm_backward(tr.sum, ln, tr.norm, dy, g_ln, dsum);
      if (drop)
        sublayer_backward(dsum.cwiseProduct(tr.dropout_mask), din);
      else
        sublayer_backward(dsum, din);
      dx = dsum + din;
      break;
    }
    case NormPlacement::Pre: {
      Mat dnormed;
      if (drop)
        sublayer_backward(dy.cwiseProduct(tr.dropout_mask), dnormed);
      else
        sublayer_backward(dy, dnormed);
      layer_norm_backward(tr.input, ln, tr.norm, dnormed, g_ln, dx, &dy);  // dx = dy + LN'(…)
      break;
    }
  }
}

}  // namespace sf
