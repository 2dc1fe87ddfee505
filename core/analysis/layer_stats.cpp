#include "analysis/layer_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "stepper/session.h"

namespace sf {

namespace {

double mean_of(const std::vector<float>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Appends the statistics of `rows` of a recorded block to `out` (rows of batch element 0); `input`
// is the block's input (r.input, or the previous block's output it refers to: block_input).
void append_rows(BlockStat& out, const ResidualTrace& r, const Mat& input, const AttentionTrace* attn,
                 const std::vector<int>& rows) {
  const int h = attn ? attn->n_heads : 0;
  if (attn && out.entropy_rows.empty()) out.entropy_rows.assign(static_cast<size_t>(h), {});
  for (int row : rows) {
    out.norm_in.push_back(input.row(row).norm());
    out.norm_out.push_back(r.output.row(row).norm());
    if (r.norm.mean.size() > row) {  // LayerNorm; RMSNorm has no mean or variance, only its RMS
      out.ln_mean.push_back(r.norm.mean(row));
      out.ln_var.push_back(r.norm.var(row));
    }
    if (r.norm.rms.size() > row) out.ln_rms.push_back(r.norm.rms(row));
    for (int k = 0; k < h; ++k)
      out.entropy_rows[static_cast<size_t>(k)].push_back(
          static_cast<float>(row_entropy(attn->head_weights(0, k), row)));
  }
}

// Per-head means of the per-row entropies.
void finish_entropy(BlockStat& b) {
  b.entropy.clear();
  for (const auto& rows : b.entropy_rows) b.entropy.push_back(mean_of(rows));
}

std::vector<int> all_rows(const Mat& m) {
  std::vector<int> r(static_cast<size_t>(m.rows()));
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int>(i);
  return r;
}

const ResidualTrace& enc_block(const EncoderLayerTrace& l, Block b) {
  return b == Block::SelfAttention ? l.self_block : l.ffn_block;
}
const AttentionTrace* enc_attn(const EncoderLayerTrace& l, Block b) {
  return b == Block::SelfAttention ? &l.self_attn : nullptr;
}
const ResidualTrace& dec_block(const DecoderLayerTrace& l, Block b) {
  return b == Block::SelfAttention ? l.self_block : b == Block::CrossAttention ? l.cross_block : l.ffn_block;
}
const AttentionTrace* dec_attn(const DecoderLayerTrace& l, Block b) {
  return b == Block::SelfAttention ? &l.self_attn : b == Block::CrossAttention ? &l.cross_attn : nullptr;
}

// For a stage layout: the index of the stage that completes each (layer, block) — post-LN's
// AddNorm, pre-LN's sublayer — in running order.
struct BlockEnd {
  int layer;
  Block block;
  int stage;  // index within the layout
};
std::vector<BlockEnd> block_ends(const std::vector<StageKey>& layout) {
  std::vector<BlockEnd> out;
  for (size_t j = 0; j < layout.size(); ++j) {
    const StageKey& k = layout[j];
    if (k.layer < 0 || k.block == Block::None) continue;
    if (!out.empty() && out.back().layer == k.layer && out.back().block == k.block)
      out.back().stage = static_cast<int>(j);
    else
      out.push_back({k.layer, k.block, static_cast<int>(j)});
  }
  return out;
}

LayerStat& layer_slot(std::vector<LayerStat>& v, Side side, int layer) {
  for (LayerStat& l : v)
    if (l.layer == layer) return l;
  v.push_back({side, layer, {}});
  return v.back();
}

BlockStat& block_slot(LayerStat& l, Block b) {
  for (BlockStat& s : l.blocks)
    if (s.block == b) return s;
  l.blocks.push_back({});
  l.blocks.back().block = b;
  return l.blocks.back();
}

}  // namespace

double row_entropy(const Mat& w, Eigen::Index row) {
  double e = 0;
  for (Eigen::Index j = 0; j < w.cols(); ++j) {
    const double p = w(row, j);
    if (p > 0) e -= p * std::log(p);
  }
  return e;
}

std::vector<double> head_entropy(const AttentionTrace& a, const std::vector<int>& rows) {
  std::vector<double> out(static_cast<size_t>(a.n_heads), 0.0);
  if (rows.empty()) return out;
  for (int k = 0; k < a.n_heads; ++k) {
    double s = 0;
    for (int r : rows) s += row_entropy(a.head_weights(0, k), r);
    out[static_cast<size_t>(k)] = s / static_cast<double>(rows.size());
  }
  return out;
}

RowEntropies row_entropies(const Mat& w, const Mat& mask) {
  RowEntropies out;
  const size_t n = static_cast<size_t>(w.rows());
  out.entropy.assign(n, 0);
  out.visible.assign(n, 0);
  out.max.assign(n, 0);
  double sum = 0;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    int visible = 0;
    for (Eigen::Index j = 0; j < mask.cols(); ++j)
      if (std::isfinite(mask(i, j))) ++visible;
    const size_t k = static_cast<size_t>(i);
    out.entropy[k] = static_cast<float>(row_entropy(w, i));
    out.visible[k] = visible;
    out.max[k] = visible > 1 ? std::log(static_cast<float>(visible)) : 0.0f;
    sum += out.entropy[k];
  }
  out.mean = n ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
  return out;
}

double BlockStat::mean_norm_in() const { return mean_of(norm_in); }
double BlockStat::mean_norm_out() const { return mean_of(norm_out); }
double BlockStat::mean_ln_mean() const { return mean_of(ln_mean); }
double BlockStat::mean_ln_var() const { return mean_of(ln_var); }
double BlockStat::mean_ln_rms() const { return mean_of(ln_rms); }

const BlockStat* LayerStat::find(Block b) const {
  for (const BlockStat& s : blocks)
    if (s.block == b) return &s;
  return nullptr;
}

double LayerStat::resid_norm() const {
  return blocks.empty() ? std::numeric_limits<double>::quiet_NaN() : blocks.back().mean_norm_out();
}

BlockStat block_stat(Block b, const ResidualTrace& r, const AttentionTrace* attn, const std::vector<int>& rows) {
  BlockStat s;
  s.block = b;
  append_rows(s, r, r.input, attn, rows.empty() ? all_rows(r.output) : rows);
  finish_entropy(s);
  return s;
}

void append_block_rows(BlockStat& out, const ResidualTrace& r, const AttentionTrace* attn, const std::vector<int>& rows,
                       const Mat* input) {
  append_rows(out, r, input ? *input : r.input, attn, rows);
  finish_entropy(out);
}

std::vector<LayerStat> encoder_stats(const EncoderTrace& t) {
  std::vector<LayerStat> out;
  for (size_t l = 0; l < t.layers.size(); ++l) {
    LayerStat ls{Side::Encoder, static_cast<int>(l), {}};
    for (Block b : {Block::SelfAttention, Block::FeedForward})
      ls.blocks.push_back(block_stat(b, enc_block(t.layers[l], b), enc_attn(t.layers[l], b)));
    out.push_back(std::move(ls));
  }
  return out;
}

ModelStats layer_stats(const Session& s) {
  ModelStats out;
  const Config& c = s.model().config;
  const int cursor = s.cursor();
  const int E = encoder_stage_count(c), D = decoder_stage_count(c);

  // Encoder: the blocks whose completing stage the cursor has reached.
  if (s.encoder()) {
    const EncoderTrace& t = s.encoder()->trace;
    for (const BlockEnd& e : block_ends(encoder_layout(c))) {
      if (cursor < e.stage) break;
      const EncoderLayerTrace& l = t.layers[static_cast<size_t>(e.layer)];
      layer_slot(out.encoder, Side::Encoder, e.layer)
          .blocks.push_back(block_stat(e.block, enc_block(l, e.block), enc_attn(l, e.block)));
    }
  }

  // Decoder: row by row, step by step.
  const int current = s.current_step();
  const std::vector<BlockEnd> ends = block_ends(decoder_layout(c));
  // A kept step holds Q, K and the mask, not the weights (Session::attention_weights computes
  // them): the keys of every step are the first rows of the last step's, gathered once per sublayer.
  const int last = std::min(current, static_cast<int>(s.steps().size()) - 1);
  std::map<std::pair<int, bool>, Mat> keys;
  const auto weights_of = [&](int t, int layer, Block b, const AttentionTrace* a, AttentionTrace& held) {
    if (!a || !a->weights.empty()) return a;
    const bool cross = b == Block::CrossAttention;
    auto it = keys.find({layer, cross});
    if (it == keys.end()) it = keys.emplace(std::make_pair(layer, cross), s.attended_kv(last, layer, cross).k).first;
    held.n_heads = a->n_heads;
    held.weights = s.attention_weights(t, layer, cross, &it->second);
    return static_cast<const AttentionTrace*>(&held);
  };
  for (int t = 0; t <= current && t < static_cast<int>(s.steps().size()); ++t) {
    const StepRecord& r = *s.steps()[static_cast<size_t>(t)];
    if (!r.trace) continue;
    std::vector<int> rows;
    for (size_t i = 0; i < r.fed.size(); ++i) rows.push_back(r.query_row0 + static_cast<int>(i));
    bool any = false;
    for (const BlockEnd& e : ends) {
      if (t == current && cursor < E + t * D + e.stage) break;
      const DecoderLayerTrace& l = r.trace->layers[static_cast<size_t>(e.layer)];
      AttentionTrace held;
      const ResidualTrace& blk = dec_block(l, e.block);
      append_rows(block_slot(layer_slot(out.decoder, Side::Decoder, e.layer), e.block), blk, block_input(*r.trace, blk),
                  weights_of(t, e.layer, e.block, dec_attn(l, e.block), held), rows);
      any = true;
    }
    if (any)
      for (size_t i = 0; i < rows.size(); ++i) out.decoder_steps.push_back(t);
  }
  for (LayerStat& l : out.decoder)
    for (BlockStat& b : l.blocks) finish_entropy(b);
  return out;
}

}  // namespace sf
