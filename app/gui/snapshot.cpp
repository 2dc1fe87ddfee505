// snapshot.cpp — assembling the panels' views out of the Session's recording.
//
// [SECTION] names
// [SECTION] decoder rows: which recorded rows make up "the sequence so far"
// [SECTION] attention views
// [SECTION] residual / LayerNorm statistics
// [SECTION] build_views
// [SECTION] demos (order without PE, leak without the causal mask)
#include "snapshot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "model/decoder.h"
#include "model/encoder.h"
#include "model/mask.h"
#include "text/token_display.h"

namespace sf::gui {

// [SECTION] names

namespace {

// [kind] = {what the panels call it, the short name scripts and file names use}
constexpr const char* kAttnNames[kAttnKinds][2] = {{"encoder self-attention", "enc-self"},
                                                   {"decoder masked self-attention", "dec-self"},
                                                   {"cross-attention", "cross"}};

const char* attn_name(AttnKind k, int which) {
  const int i = static_cast<int>(k);
  return i >= 0 && i < kAttnKinds ? kAttnNames[i][which] : "?";
}

}  // namespace

const char* to_string(AttnKind k) { return attn_name(k, 0); }
const char* short_name(AttnKind k) { return attn_name(k, 1); }

namespace {

// Whitespace made visible: ␣ ↵ ⇥ ␍, and ∅ for an empty label.
std::string visible_whitespace(const std::string& t) {
  std::string out;
  for (char ch : t) {
    switch (ch) {
      case ' ':
        out += "\u2423";
        break;  // ␣
      case '\n':
        out += "\u21B5";
        break;  // ↵
      case '\t':
        out += "\u21E5";
        break;  // ⇥
      case '\r':
        out += "\u240D";
        break;  // ␍
      default:
        out += ch;
    }
  }
  return out.empty() ? "\u2205" : out;  // ∅ for an empty entry
}

}  // namespace

std::string display_token(const Vocab& v, int id) { return visible_whitespace(v.display(id)); }

std::vector<std::string> display_tokens_visible(const Vocab& v, const std::vector<int>& ids) {
  std::vector<std::string> out = display_tokens(v, ids);
  for (std::string& t : out) t = visible_whitespace(t);
  return out;
}

std::vector<AttnKind> attention_kinds(const Config& c) {
  std::vector<AttnKind> out;
  if (c.has_encoder()) out.push_back(AttnKind::EncoderSelf);
  if (c.has_decoder()) out.push_back(AttnKind::DecoderSelf);
  if (c.has_cross_attention()) out.push_back(AttnKind::Cross);
  return out;
}

bool has_kind(const Config& c, AttnKind k) {
  const std::vector<AttnKind> all = attention_kinds(c);
  return std::find(all.begin(), all.end(), k) != all.end();
}

int kind_layers(const Config& c, AttnKind k) {
  return k == AttnKind::EncoderSelf ? c.n_encoder_layers : c.n_decoder_layers;
}

int kind_heads(const Config& c, AttnKind k) { return k == AttnKind::EncoderSelf ? c.encoder_heads() : c.n_heads; }

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// [SECTION] decoder rows

// One query row of the decoded sequence: a row of some step's recording.
struct RowRef {
  std::shared_ptr<const DecoderTrace> trace;
  int row = 0;       // row in trace
  int position = 0;  // absolute position
  int id = 0;        // token fed
  int step = 0;
};

// The rows of steps 0..last along the focused hypothesis's lineage (beam search: its ancestors).
std::vector<RowRef> lineage_rows(const Session& s, int last) {
  const auto& steps = s.steps();
  std::vector<std::shared_ptr<const DecoderTrace>> traces(static_cast<size_t>(last + 1));
  int beam = -1;  // index into steps[t]->beams_before of the hypothesis followed
  for (int t = last; t >= 0; --t) {
    const StepRecord& r = *steps[static_cast<size_t>(t)];
    std::shared_ptr<const DecoderTrace> tr = r.trace;
    if (!r.beam_traces.empty()) {
      if (beam < 0) beam = r.focus;
      if (beam >= 0 && beam < static_cast<int>(r.beam_traces.size()) && r.beam_traces[static_cast<size_t>(beam)])
        tr = r.beam_traces[static_cast<size_t>(beam)];
      beam = (beam >= 0 && beam < static_cast<int>(r.beams_before.size()))
                 ? r.beams_before[static_cast<size_t>(beam)].parent
                 : -1;
    }
    traces[static_cast<size_t>(t)] = tr;
  }
  std::vector<RowRef> rows;
  for (int t = 0; t <= last; ++t) {
    const StepRecord& r = *steps[static_cast<size_t>(t)];
    const auto& tr = traces[static_cast<size_t>(t)];
    if (!tr) continue;
    for (size_t i = 0; i < r.fed.size(); ++i) {
      RowRef ref;
      ref.trace = tr;
      ref.row = r.query_row0 + static_cast<int>(i);
      ref.position = r.position0 + static_cast<int>(i);
      ref.id = r.fed[i];
      ref.step = t;
      if (ref.row < tr->output.rows()) rows.push_back(ref);
    }
  }
  return rows;
}

// Stage index by (side, kind, layer, step).
struct StageIndex {
  std::map<std::tuple<int, int, int, int>, int> at;
  int find(Side side, StageKind k, int layer, int step) const {
    auto it = at.find({static_cast<int>(side), static_cast<int>(k), layer, step});
    return it == at.end() ? -1 : it->second;
  }
};

// [SECTION] attention views

std::shared_ptr<AttnView> encoder_view(const Session& s, int layer) {
  const EncoderRecord& e = *s.encoder();
  auto v = std::make_shared<AttnView>();
  v->kind = AttnKind::EncoderSelf;
  v->layer = layer;
  v->trace = e.trace.layers[static_cast<size_t>(layer)].self_attn;
  const Vocab& voc = s.model().config.src_vocab;
  for (int id : e.src_ids) v->q_labels.push_back(display_token(voc, id));
  v->k_labels = v->q_labels;
  v->k_ids = e.src_ids;
  v->q_step.assign(e.src_ids.size(), -1);
  return v;
}

// Stacks the given rows of decoder self- or cross-attention for one layer.
std::shared_ptr<AttnView> decoder_view(const Session& s, const std::vector<RowRef>& rows, int layer, bool cross) {
  const Config& c = s.model().config;
  const int h = c.n_heads, d = c.d_attn();  // Q and the heads' concat: h·dk columns
  auto v = std::make_shared<AttnView>();
  v->kind = cross ? AttnKind::Cross : AttnKind::DecoderSelf;
  v->layer = layer;
  const auto pick = [&](const DecoderTrace& t) -> const AttentionTrace& {
    const auto& l = t.layers[static_cast<size_t>(layer)];
    return cross ? l.cross_attn : l.self_attn;
  };
  Session::Kv kv = s.attended_kv(rows.back().step, layer, cross);
  const int nq = static_cast<int>(rows.size());
  const int nk = static_cast<int>(kv.k.rows());
  AttentionTrace& a = v->trace;
  a.n_heads = h;
  a.n_kv_heads = cross ? h : c.kv_heads();
  a.batch = 1;
  a.scale = pick(*rows.back().trace).scale;
  a.q.resize(nq, d);
  a.k = std::move(kv.k);
  a.v = std::move(kv.v);
  a.concat.resize(nq, d);
  a.out.resize(nq, c.d_model);
  a.masks.assign(1, Mat::Constant(nq, nk, kMasked));
  a.raw_scores.assign(static_cast<size_t>(h), Mat::Constant(nq, nk, kNaN));
  a.weights.assign(static_cast<size_t>(h), Mat::Zero(nq, nk));
  for (int i = 0; i < nq; ++i) {
    const RowRef& r = rows[static_cast<size_t>(i)];
    const AttentionTrace& t = pick(*r.trace);
    const int cols = std::min(nk, static_cast<int>(t.masks[0].cols()));
    a.q.row(i) = t.q.row(r.row);
    a.concat.row(i) = t.concat.row(r.row);
    a.out.row(i) = t.out.row(r.row);
    a.masks[0].row(i).head(cols) = t.masks[0].row(r.row).head(cols);
    for (int hh = 0; hh < h; ++hh) {
      // Q_h K_hᵀ for this row over the keys it saw (a kept step stores no raw scores; the
      // Session's whole_trace recomputes them the same way, so equal within float rounding).
      const int dk = d / h, kvh = a.kv_head(hh);  // the K/V head query head hh reads
      a.raw_scores[static_cast<size_t>(hh)].row(i).head(cols).noalias() =
          t.q.row(r.row).segment(hh * dk, dk) * a.k.topRows(cols).middleCols(kvh * dk, dk).transpose();
      a.weights[static_cast<size_t>(hh)].row(i).head(cols) = t.weights[static_cast<size_t>(hh)].row(r.row).head(cols);
    }
    v->q_labels.push_back(display_token(c.tgt_vocab, r.id));
    v->q_step.push_back(r.step);
  }
  if (cross) {
    for (int id : s.encoder()->src_ids) v->k_labels.push_back(display_token(c.src_vocab, id));
    v->k_ids = s.encoder()->src_ids;
  } else {
    for (int j = 0; j < nk; ++j) {
      v->k_labels.push_back(j < nq ? v->q_labels[static_cast<size_t>(j)] : "?");
      v->k_ids.push_back(j < nq ? rows[static_cast<size_t>(j)].id : -2);  // -2: not fed yet, no pad key
    }
  }
  return v;
}

// [SECTION] residual / LayerNorm statistics

BlockStats encoder_block(Block blk, const ResidualTrace& r, const std::string& label, int layer,
                         const std::vector<std::string>& toks) {
  BlockStats b;
  b.label = label;
  b.encoder = true;
  b.layer = layer;
  b.tokens = toks;
  b.stat = block_stat(blk, r, nullptr);
  return b;
}

// The rows of the sequence so far come from several recordings (one per step, beam ancestors).
BlockStats decoder_block(const std::vector<RowRef>& rows, int layer, Block blk, const std::string& label,
                         const Vocab& voc) {
  BlockStats b;
  b.label = label;
  b.encoder = false;
  b.layer = layer;
  b.stat.block = blk;
  for (const RowRef& r : rows) {
    const DecoderLayerTrace& l = r.trace->layers[static_cast<size_t>(layer)];
    const ResidualTrace& rt = blk == Block::SelfAttention    ? l.self_block
                              : blk == Block::CrossAttention ? l.cross_block
                                                             : l.ffn_block;
    b.tokens.push_back(display_token(voc, r.id));
    append_block_rows(b.stat, rt, nullptr, {r.row});
  }
  return b;
}

}  // namespace

// [SECTION] build_views

void build_views(Snapshot& s) {
  for (auto& v : s.attn) v.clear();
  s.blocks.clear();
  if (!s.session) return;
  const Session& se = *s.session;
  const Config& c = se.model().config;
  s.stages = se.stages();
  s.cursor = se.cursor();
  s.stage = se.current();
  s.kv = se.cache();
  s.cost = se.cost();
  s.masked = se.masked_predictions(10);

  StageIndex idx;
  for (const Stage& st : s.stages)
    idx.at[{static_cast<int>(st.side), static_cast<int>(st.kind), st.layer, st.step}] = st.index;
  const int cur = s.cursor;

  // Encoder: a layer's map exists once its self-attention stage is reached.
  s.attn[0].assign(static_cast<size_t>(c.n_encoder_layers), nullptr);
  if (se.encoder()) {
    std::vector<std::string> toks;
    for (int id : se.encoder()->src_ids) toks.push_back(display_token(c.src_vocab, id));
    for (int l = 0; l < c.n_encoder_layers; ++l) {
      const int at = idx.find(Side::Encoder, StageKind::SelfAttention, l, -1);
      if (at < 0 || cur < at) continue;
      auto v = encoder_view(se, l);
      v->stage = at;
      v->live = cur == at;
      if (v->live) v->new_row0 = 0, v->new_rows = static_cast<int>(toks.size());
      s.attn[0][static_cast<size_t>(l)] = v;
      const auto& L = se.encoder()->trace.layers[static_cast<size_t>(l)];
      s.blocks.push_back(
          encoder_block(Block::SelfAttention, L.self_block, "enc " + std::to_string(l) + " · self-attn", l, toks));
      const int ff = idx.find(Side::Encoder, StageKind::FeedForward, l, -1);
      if (ff >= 0 && cur >= ff)
        s.blocks.push_back(
            encoder_block(Block::FeedForward, L.ffn_block, "enc " + std::to_string(l) + " · ffn", l, toks));
    }
  }

  // Decoder: rows of completed steps, plus the current step's rows for layers already reached.
  s.attn[1].assign(static_cast<size_t>(c.n_decoder_layers), nullptr);
  s.attn[2].assign(static_cast<size_t>(c.has_encoder() ? c.n_decoder_layers : 0), nullptr);
  const int step = se.current_step();
  if (step < 0 || se.steps().empty()) return;
  const std::vector<RowRef> all = lineage_rows(se, std::min(step, static_cast<int>(se.steps().size()) - 1));
  struct Kind {
    StageKind stage;
    int which;  // 0 self, 1 cross, 2 ffn
    Block block;
    const char* name;
  };
  std::vector<Kind> kinds = {{StageKind::SelfAttention, 0, Block::SelfAttention, "self-attn"}};
  if (c.has_encoder()) kinds.push_back({StageKind::CrossAttention, 1, Block::CrossAttention, "cross-attn"});
  kinds.push_back({StageKind::FeedForward, 2, Block::FeedForward, "ffn"});
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    for (const Kind& k : kinds) {
      const int at = idx.find(Side::Decoder, k.stage, l, step);
      std::vector<RowRef> rows;
      for (const RowRef& r : all)
        if (r.step < step || (at >= 0 && cur >= at)) rows.push_back(r);
      if (rows.empty()) continue;
      const std::string label = "dec " + std::to_string(l) + " · " + k.name;
      s.blocks.push_back(decoder_block(rows, l, k.block, label, c.tgt_vocab));
      if (k.which == 2) continue;
      auto v = decoder_view(se, rows, l, k.which == 1);
      const bool has_new = rows.back().step == step;
      v->live = at >= 0 && cur == at;
      v->stage = has_new ? at : idx.find(Side::Decoder, k.stage, l, rows.back().step);
      if (has_new) {
        int first = static_cast<int>(rows.size());
        while (first > 0 && rows[static_cast<size_t>(first - 1)].step == step) --first;
        v->new_row0 = first;
        v->new_rows = static_cast<int>(rows.size()) - first;
      }
      s.attn[k.which == 0 ? 1 : 2][static_cast<size_t>(l)] = v;
    }
  }
}

// [SECTION] demos

std::shared_ptr<const OrderDemo> make_order_demo(const Model& m, const PreparedInput& in) {
  const Config& c = m.config;
  auto d = std::make_shared<OrderDemo>();
  // The sequence whose order is reversed: the source (enc-dec) or the prompt after <s> (dec-only).
  std::vector<int> ids = c.has_encoder() ? in.src_ids : in.tgt_ids;
  const int skip = c.has_encoder() ? 0 : 1;  // keep <s> first for decoder-only models
  std::vector<int> rev = ids;
  std::reverse(rev.begin() + skip, rev.end());
  const Vocab& voc = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  for (int id : ids) d->tokens.push_back(display_token(voc, id));
  for (int id : rev) d->reversed.push_back(display_token(voc, id));
  const int n = static_cast<int>(ids.size());
  d->per_token_pe.assign(static_cast<size_t>(n), 0);
  d->per_token_no_pe.assign(static_cast<size_t>(n), 0);
  for (int pe = 1; pe >= 0; --pe) {
    RunOptions opt;
    opt.positional_encoding = pe == 1;
    Mat a, b;  // (n, d) the stack's output for the original and the reversed order
    std::string next_a, next_b;
    const auto greedy_first = [&](const Mat* memory, const std::vector<int>& src) {
      EncoderContext enc;
      if (memory) enc = {memory, &src};
      const std::vector<int> bos{c.tgt_vocab.bos()};
      const std::vector<int>& dec_in = c.has_encoder() ? bos : src;
      Mat logits = decode(m, dec_in, 1, enc, nullptr, nullptr, opt);
      Eigen::Index best;
      logits.row(logits.rows() - 1).maxCoeff(&best);
      return display_token(c.tgt_vocab, static_cast<int>(best));
    };
    if (!c.has_decoder()) {
      // Encoder-only: no output token to generate; with an MLM head, the top prediction at the
      // first [MASK] (position 0 without one), which the reversal moves to n − 1 − p.
      a = encode(m, ids, 1, nullptr, opt);
      b = encode(m, rev, 1, nullptr, opt);
      if (c.mlm_head) {
        const auto at = std::find(ids.begin(), ids.end(), mask_token(c.src_vocab));
        const int p = at == ids.end() ? 0 : static_cast<int>(at - ids.begin());
        const auto top1 = [&](const Mat& x, int row) {
          Eigen::Index best;
          mlm_logits(m, x.row(row), nullptr).row(0).maxCoeff(&best);
          return display_token(c.src_vocab, static_cast<int>(best));
        };
        next_a = top1(a, p);
        next_b = top1(b, n - 1 - p);
      }
    } else if (c.has_encoder()) {
      a = encode(m, ids, 1, nullptr, opt);
      b = encode(m, rev, 1, nullptr, opt);
      next_a = greedy_first(&a, ids);
      next_b = greedy_first(&b, rev);
    } else {
      DecoderTrace ta, tb;
      decode(m, ids, 1, {}, nullptr, &ta, opt);
      decode(m, rev, 1, {}, nullptr, &tb, opt);
      a = ta.output;
      b = tb.output;
      next_a = greedy_first(nullptr, ids);
      next_b = greedy_first(nullptr, rev);
    }
    float mx = 0;
    auto& per = pe ? d->per_token_pe : d->per_token_no_pe;
    for (int i = 0; i < n; ++i) {
      const int j = i < skip ? i : n - 1 - (i - skip);
      const float diff = (a.row(i) - b.row(j)).cwiseAbs().maxCoeff();
      per[static_cast<size_t>(i)] = diff;
      mx = std::max(mx, diff);
    }
    (pe ? d->max_diff_pe : d->max_diff_no_pe) = mx;
    (pe ? d->next_pe : d->next_no_pe) = next_a;
    (pe ? d->next_rev_pe : d->next_rev_no_pe) = next_b;
  }
  return d;
}

std::shared_ptr<const LeakDemo> make_leak_demo(const Model& m, const PreparedInput& in,
                                               const std::vector<int>& tgt_ids) {
  const Config& c = m.config;
  auto d = std::make_shared<LeakDemo>();
  for (int id : tgt_ids) d->tokens.push_back(display_token(c.tgt_vocab, id));
  Mat memory;
  EncoderContext enc;
  if (c.has_encoder()) {
    memory = encode(m, in.src_ids, 1, nullptr, {});
    enc = {&memory, &in.src_ids};
  }
  DecoderTrace a, b;
  RunOptions leaky;
  leaky.causal_mask = false;
  const Mat la = decode(m, tgt_ids, 1, enc, nullptr, &a, {});
  const Mat lb = decode(m, tgt_ids, 1, enc, nullptr, &b, leaky);
  d->causal = a.layers[0].self_attn;
  d->leaky = b.layers[0].self_attn;
  const int n = static_cast<int>(tgt_ids.size());
  d->future_mass.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    float mass = 0;
    for (int h = 0; h < c.n_heads; ++h)
      for (int j = i + 1; j < n; ++j) mass += d->leaky.weights[static_cast<size_t>(h)](i, j);
    d->future_mass[static_cast<size_t>(i)] = mass / static_cast<float>(c.n_heads);
  }
  d->max_logit_diff = (la - lb).cwiseAbs().maxCoeff();
  return d;
}

}  // namespace sf::gui
