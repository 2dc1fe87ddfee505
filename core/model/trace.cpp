#include "model/trace.h"

#include <cmath>
#include <type_traits>
#include <vector>

namespace sf {

void spread_kind(EncoderTrace& t) {
  t.embed.kind = t.kind;
  for (EncoderLayerTrace& l : t.layers) {
    l.self_block.kind = l.self_attn.kind = l.ffn_block.kind = l.ffn.kind = t.kind;
    l.ffn_block.stack_end = &l == &t.layers.back();
  }
  t.final_norm.kind = t.kind;
}

void spread_kind(DecoderTrace& t) {
  t.embed.kind = t.kind;
  for (DecoderLayerTrace& l : t.layers) {
    l.self_block.kind = l.self_attn.kind = l.cross_block.kind = l.cross_attn.kind = t.kind;
    l.ffn_block.kind = l.ffn.kind = t.kind;
    l.ffn_block.stack_end = t.ffn && &l == &t.layers.back();
    l.self_block.stack_end = !t.ffn && &l == &t.layers.back();
  }
  t.final_norm.kind = t.kind;
}

namespace {

// Bit for bit: restore_if_dropped's copy of the twin is then the recording exactly.
void drop_if_same(Mat& copy, const Mat& twin) {
  if (copy.size() > 0 && same_bits(copy, twin)) copy.resize(0, 0);
}

void restore_if_dropped(Mat& copy, const Mat& twin) {
  if (copy.size() == 0 && twin.size() > 0) copy = twin;
}

// block: a residual block; out: its sublayer's own recorded output.
void drop_copies(ResidualTrace& block, const Mat& out, NormPlacement norm) {
  if (norm == NormPlacement::Pre) drop_if_same(block.sum, block.output);
  drop_if_same(block.norm.out, norm == NormPlacement::Pre ? block.sublayer_in : block.output);
  drop_if_same(block.sublayer_out, out);
}

void restore_copies(ResidualTrace& block, const Mat& out, NormPlacement norm) {
  if (norm == NormPlacement::Pre) restore_if_dropped(block.sum, block.output);
  restore_if_dropped(block.norm.out, norm == NormPlacement::Pre ? block.sublayer_in : block.output);
  restore_if_dropped(block.sublayer_out, out);
}

// The residual blocks a decoder recording ran, in running order (a layer's cross-attention block
// only in an encoder-decoder's, its feed-forward block only when it has one).
template <class Trace>
auto blocks_in_order(Trace& t) {
  using Block = std::conditional_t<std::is_const_v<Trace>, const ResidualTrace, ResidualTrace>;
  std::vector<Block*> out;
  for (auto& l : t.layers) {
    out.push_back(&l.self_block);
    if (!l.cross_attn.masks.empty()) out.push_back(&l.cross_block);
    if (t.ffn) out.push_back(&l.ffn_block);
  }
  return out;
}

}  // namespace

void drop_block_copies(DecoderTrace& t, NormPlacement norm) {
  for (DecoderLayerTrace& l : t.layers) {
    drop_copies(l.self_block, l.self_attn.out, norm);
    drop_copies(l.cross_block, l.cross_attn.out, norm);
    drop_copies(l.ffn_block, l.ffn.out, norm);
  }
  const std::vector<ResidualTrace*> blocks = blocks_in_order(t);
  for (size_t i = 1; i < blocks.size(); ++i) drop_if_same(blocks[i]->input, blocks[i - 1]->output);
}

void restore_block_copies(DecoderTrace& t, NormPlacement norm) {
  const std::vector<ResidualTrace*> blocks = blocks_in_order(t);
  for (size_t i = 1; i < blocks.size(); ++i) restore_if_dropped(blocks[i]->input, blocks[i - 1]->output);
  for (DecoderLayerTrace& l : t.layers) {
    restore_copies(l.self_block, l.self_attn.out, norm);
    restore_copies(l.cross_block, l.cross_attn.out, norm);
    restore_copies(l.ffn_block, l.ffn.out, norm);
  }
}

const Mat& block_input(const DecoderTrace& t, const ResidualTrace& block) {
  if (block.input.size() > 0) return block.input;
  const std::vector<const ResidualTrace*> blocks = blocks_in_order(t);
  for (size_t i = 1; i < blocks.size(); ++i)
    if (blocks[i] == &block) return blocks[i - 1]->output;
  return block.input;
}

Mat log_softmax_rows(const Mat& logits) {
  Mat out(logits.rows(), logits.cols());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const float mx = logits.row(i).maxCoeff();
    const float lse = mx + std::log((logits.row(i).array() - mx).exp().sum());
    out.row(i) = logits.row(i).array() - lse;
  }
  return out;
}

Mat softmax_rows(const Mat& logits) { return log_softmax_rows(logits).array().exp().matrix(); }

void record_logits(const Mat& logits, Mat& logits_out, Mat& log_probs, Mat& probs) {
  logits_out = logits;
  log_probs.resize(logits.rows(), logits.cols());
  probs.resize(logits.rows(), logits.cols());
  // One exp per entry, not two (log-softmax, then exp of it): probs = e / Σe with e = exp(l − max).
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const auto l = logits.row(i).array();
    const float mx = l.maxCoeff();
    probs.row(i).array() = (l - mx).exp();
    const float sum = probs.row(i).sum();
    probs.row(i) /= sum;
    log_probs.row(i).array() = l - (mx + std::log(sum));
  }
}

Mat log_probs_of(const DecoderTrace& t) {
  return t.log_probs.rows() == t.logits.rows() ? t.log_probs : log_softmax_rows(t.logits);
}

Mat probs_of(const DecoderTrace& t) {
  if (t.probs.rows() == t.logits.rows()) return t.probs;
  return log_softmax_rows(t.logits).array().exp().matrix();
}

}  // namespace sf
