// snapshot.cpp — assembling the panels' views out of the Session's recording.
//
// [SECTION] names
// [SECTION] stage index
// [SECTION] attention views
// [SECTION] residual / LayerNorm statistics
// [SECTION] build_views
// [SECTION] demos (order without PE, leak without the causal mask)
#include "snapshot.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/causal_leak.h"
#include "analysis/word_order.h"
#include "stepper/attention_view.h"
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

int kind_d_k(const Config& c, AttnKind k) { return k == AttnKind::EncoderSelf ? c.encoder_d_k() : c.d_k(); }

namespace {

// [SECTION] stage index

// Stage index by (side, kind, layer, step).
struct StageIndex {
  std::map<std::tuple<int, int, int, int>, int> at;
  int find(Side side, StageKind k, int layer, int step) const {
    auto it = at.find({static_cast<int>(side), static_cast<int>(k), layer, step});
    return it == at.end() ? -1 : it->second;
  }
};

// [SECTION] attention views

// The attention views of the snapshot published before, to share with: a view whose rows are the
// same holds the same numbers (a recording never changes once made).
struct Reuse {
  const Snapshot* prev = nullptr;
  std::shared_ptr<const AttnData> find(AttnKind kind, int layer, const void* source,
                                       const std::vector<std::pair<const void*, int>>& rows) const {
    const AttnView* v = prev ? prev->attn_view(kind, layer) : nullptr;
    if (!v || !v->data || v->data->source.get() != source || v->data->rows != rows) return nullptr;
    return v->data;
  }
};

// The panels' view of core's stacked attention: the same recording, with the tokens as shown;
// heads' maps and thumbnails are computed when first asked for (analysis/head_maps.h).
std::shared_ptr<AttnData> attn_data(StackedAttention&& st, const Vocab& q_voc, const Vocab& k_voc) {
  std::vector<std::string> q_labels, k_labels;
  for (int id : st.q_ids) q_labels.push_back(display_token(q_voc, id));
  for (int id : st.k_ids) k_labels.push_back(id == -2 ? "?" : display_token(k_voc, id));
  auto d = std::make_shared<AttnData>(std::move(st), kThumbnailSide);
  d->q_labels = std::move(q_labels);
  d->k_labels = std::move(k_labels);
  return d;
}

std::shared_ptr<AttnView> encoder_view(const Session& s, int layer, const Reuse& reuse) {
  const Vocab& voc = s.model().config.src_vocab;
  auto v = std::make_shared<AttnView>();
  v->kind = AttnKind::EncoderSelf;
  v->layer = layer;
  const std::shared_ptr<const EncoderRecord> enc = s.encoder();
  v->data = reuse.find(v->kind, layer, enc.get(), {});
  if (!v->data) {
    auto d = attn_data(encoder_attention(s, layer), voc, voc);
    d->source = enc;
    v->data = std::move(d);
  }
  return v;
}

// like: the previous layer's view of the same kind (null for layer 0), whose mask this one shares
// when it is the same.
std::shared_ptr<AttnView> decoder_view(const Session& s, const std::vector<DecodedRow>& rows, int layer, bool cross,
                                       const Reuse& reuse, const AttnView* like) {
  const Config& c = s.model().config;
  auto v = std::make_shared<AttnView>();
  v->kind = cross ? AttnKind::Cross : AttnKind::DecoderSelf;
  v->layer = layer;
  std::vector<std::pair<const void*, int>> key;
  key.reserve(rows.size());
  for (const DecodedRow& r : rows) key.emplace_back(r.trace.get(), r.row);
  // The keys come from the steps up to the last row's and (cross-attention) from the encoder.
  const std::shared_ptr<const EncoderRecord> enc = s.encoder();
  v->data = reuse.find(v->kind, layer, enc.get(), key);
  if (!v->data) {
    auto d = attn_data(decoder_attention(s, rows, layer, cross, /*maps=*/false, like ? &like->trace().masks : nullptr),
                       c.tgt_vocab, cross ? c.src_vocab : c.tgt_vocab);
    d->source = enc;
    for (const DecodedRow& r : rows)
      if (d->traces.empty() || d->traces.back() != r.trace) d->traces.push_back(r.trace);
    d->rows = std::move(key);
    v->data = std::move(d);
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
BlockStats decoder_block(const std::vector<DecodedRow>& rows, int layer, Block blk, const std::string& label,
                         const Vocab& voc) {
  BlockStats b;
  b.label = label;
  b.encoder = false;
  b.layer = layer;
  b.stat.block = blk;
  for (const DecodedRow& r : rows) {
    const DecoderLayerTrace& l = r.trace->layers[static_cast<size_t>(layer)];
    const ResidualTrace& rt = blk == Block::SelfAttention    ? l.self_block
                              : blk == Block::CrossAttention ? l.cross_block
                                                             : l.ffn_block;
    b.tokens.push_back(display_token(voc, r.id));
    append_block_rows(b.stat, rt, nullptr, {r.row}, &block_input(*r.trace, rt));
  }
  return b;
}

}  // namespace

// [SECTION] build_views

void build_views(Snapshot& s, const Snapshot* prev) {
  for (auto& v : s.attn) v.clear();
  s.blocks.clear();
  if (!s.session) return;
  const Session& se = *s.session;
  const Config& c = se.model().config;
  const Reuse reuse{prev && prev->session && &prev->session->model() == &se.model() ? prev : nullptr};
  s.stages = se.stages();
  s.cursor = se.cursor();
  s.stage = se.current();
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
    const auto enc = se.encoder();  // held while its ids are read
    for (int id : enc->src_ids) toks.push_back(display_token(c.src_vocab, id));
    for (int l = 0; l < c.n_encoder_layers; ++l) {
      const int at = idx.find(Side::Encoder, StageKind::SelfAttention, l, -1);
      if (at < 0 || cur < at) continue;
      auto v = encoder_view(se, l, reuse);
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
  if (step < 0 || se.steps().empty()) {
    s.kv = se.cache();
    return;
  }
  const std::vector<DecodedRow> all = lineage_rows(se, std::min(step, static_cast<int>(se.steps().size()) - 1));
  struct Kind {
    StageKind stage;
    int which;  // 0 self, 1 cross, 2 ffn
    Block block;
    const char* name;
  };
  std::vector<Kind> kinds = {{StageKind::SelfAttention, 0, Block::SelfAttention, "self-attn"}};
  if (c.has_encoder()) kinds.push_back({StageKind::CrossAttention, 1, Block::CrossAttention, "cross-attn"});
  if (c.has_ffn()) kinds.push_back({StageKind::FeedForward, 2, Block::FeedForward, "ffn"});
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    for (const Kind& k : kinds) {
      const int at = idx.find(Side::Decoder, k.stage, l, step);
      std::vector<DecodedRow> rows;
      for (const DecodedRow& r : all)
        if (r.step < step || (at >= 0 && cur >= at)) rows.push_back(r);
      if (rows.empty()) continue;
      const std::string label = "dec " + std::to_string(l) + " · " + k.name;
      s.blocks.push_back(decoder_block(rows, l, k.block, label, c.tgt_vocab));
      if (k.which == 2) continue;
      const auto& kind_views = s.attn[k.which == 0 ? 1 : 2];
      auto v = decoder_view(se, rows, l, k.which == 1, reuse,
                            l > 0 ? kind_views[static_cast<size_t>(l - 1)].get() : nullptr);
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
  // The KV cache view points into the attention views' K and V: one copy of the gathered rows.
  std::vector<GatheredKv> kv[2];
  for (int which = 0; which < 2; ++which)
    for (const auto& v : s.attn[1 + which]) {
      GatheredKv g;
      if (v && !v->q_step().empty()) g = {v->q_step().back(), &v->trace().k, &v->trace().v, v->data};
      kv[which].push_back(std::move(g));
    }
  s.kv = se.cache(kv[0], kv[1]);
}

// [SECTION] demos

std::shared_ptr<const OrderDemo> make_order_demo(const Model& m, const PreparedInput& in) {
  const Config& c = m.config;
  const WordOrder w = word_order(m, in);
  auto d = std::make_shared<OrderDemo>();
  const Vocab& voc = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  const Vocab& out_voc = c.has_decoder() ? c.tgt_vocab : c.src_vocab;
  const auto token = [&](int id) { return id < 0 ? std::string() : display_token(out_voc, id); };
  for (int id : w.ids) d->tokens.push_back(display_token(voc, id));
  for (int id : w.reversed) d->reversed.push_back(display_token(voc, id));
  d->max_diff_pe = w.with_pe.max_diff;
  d->max_diff_no_pe = w.without_pe.max_diff;
  d->per_token_pe = w.with_pe.per_token;
  d->per_token_no_pe = w.without_pe.per_token;
  d->next_pe = token(w.with_pe.next);
  d->next_rev_pe = token(w.with_pe.next_reversed);
  d->next_no_pe = token(w.without_pe.next);
  d->next_rev_no_pe = token(w.without_pe.next_reversed);
  return d;
}

std::shared_ptr<const LeakDemo> make_leak_demo(const Model& m, const PreparedInput& in,
                                               const std::vector<int>& tgt_ids) {
  CausalLeak l = causal_leak(m, in, tgt_ids);
  auto d = std::make_shared<LeakDemo>();
  for (int id : tgt_ids) d->tokens.push_back(display_token(m.config.tgt_vocab, id));
  d->causal = std::move(l.causal);
  d->leaky = std::move(l.leaky);
  d->layer = l.layer;
  d->future_mass = std::move(l.future_mass);
  d->max_logit_diff = l.max_logit_diff;
  return d;
}

}  // namespace sf::gui
