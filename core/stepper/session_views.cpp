// session_views.cpp — reading a Session as of its cursor: the stage descriptions (with the
// Choose stage's formula), the tokens so far, the KV cache view, the cost report, and any recorded
// tensor by name (the export naming of io/trace_export).
#include "stepper/session.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <tuple>
#include <utility>

#include "io/trace_export.h"
#include "model/attention.h"
#include "model/feed_forward.h"
#include "model/linear.h"

namespace sf {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

// ---- reading ------------------------------------------------------------------------------------

Stage Session::stage(int index) const {
  const Config& c = model_->config;
  const int E = encoder_stage_count(c), D = decoder_stage_count(c);
  const int n_src = static_cast<int>(input_.src_ids.size());
  if (index < E) return describe_encoder_stage(c, index, n_src);
  const int step = (index - E) / D;
  const StepRecord& r = *steps_[static_cast<size_t>(step)];
  StepDims dims;
  dims.step = step;
  dims.fed = static_cast<int>(r.fed.size());
  dims.position0 = r.position0;
  dims.rows = r.cached ? dims.fed : r.position0 + dims.fed;
  dims.cached = r.cached;
  dims.n_src = c.has_encoder() ? n_src : 0;
  Stage s = describe_decoder_stage(c, (index - E) % D, dims);
  s.index = index;
  if (s.kind != StageKind::Choose) return s;

  const Vocab& v = c.tgt_vocab;
  auto tok = [&](int id) { return "'" + v.token(id) + "'"; };
  switch (settings_.strategy) {
    case Strategy::Greedy:
      s.formula = r.kept && r.chosen != r.argmax
                      ? "greedy from here on; " + tok(r.chosen) + fmt(" (p = %.3f)", r.chosen_prob) +
                            " was kept from before the settings changed (argmax: " + tok(r.argmax) + ")"
                      : "greedy: argmax_v p(v) = " + tok(r.chosen) + fmt(" (p = %.3f)", r.chosen_prob);
      break;
    case Strategy::Sample: {
      // Both probabilities, named: p' is what the draw used (tempered, narrowed, renormalised);
      // p is the model's own softmax at T = 1 (what greedy and the Output panel's bars show).
      const std::string which = fmt("p' = %.3f", r.sample.prob) + " tempered and renormalised over the kept tokens" +
                                fmt("; the model's p = %.3f", r.chosen_prob);
      s.formula = "sample from softmax(logits / " + fmt("%g", settings_.temperature) + ")" +
                  (settings_.top_k > 0 ? ", top-k " + std::to_string(settings_.top_k) : "") +
                  (settings_.top_p < 1 ? ", top-p " + fmt("%g", settings_.top_p) : "") + ": kept " +
                  std::to_string(r.sample.kept) + fmt(" tokens (mass %.3f)", r.sample.kept_mass) +
                  (r.kept ? ", kept " + tok(r.chosen) + " from before the settings changed (no new draw; " + which + ")"
                          : fmt(", u = %.4f", r.sample.u) + " → " + tok(r.chosen) + " (" + which + ")");
      break;
    }
    case Strategy::Beam: {
      int kept = 0;
      for (const BeamCandidate& bc : r.candidates) kept += bc.kept;
      s.formula = "beam search, width " + std::to_string(settings_.beam_width) + ": " +
                  std::to_string(r.candidates.size()) + " candidates (score = parent score + log p), " +
                  std::to_string(kept) + " kept, " + std::to_string(r.candidates.size() - static_cast<size_t>(kept)) +
                  " pruned; best: " + v.detokenize(r.beams[0].tokens) + fmt(" (score %.3f)", r.beams[0].score);
      break;
    }
    case Strategy::Forced:
      s.formula =
          "forced: the target's next token " + tok(r.chosen) + fmt(" (p = %.3f", r.chosen_prob) +
          (r.argmax == r.chosen ? "; also the model's argmax)" : "; the model's argmax is " + tok(r.argmax) + ")");
      break;
  }
  if (r.finished) s.formula += " — decoding ends: " + r.finish_reason;
  s.writes = {{"token", "", {1}}};
  return s;
}

std::vector<Stage> Session::stages() const {
  std::vector<Stage> out;
  const int n = stage_count();
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(stage(i));
  return out;
}

std::vector<int> Session::tokens() const {
  const int s = current_step();
  if (s < 0) return {};
  const bool chosen = cursor_ == step_first_stage(s + 1) - 1;
  if (chosen) return steps_[static_cast<size_t>(s)]->tokens;
  return s > 0 ? steps_[static_cast<size_t>(s - 1)]->tokens : std::vector<int>{};
}

std::string Session::text() const {
  std::vector<int> t = tokens();
  if (!t.empty() && t.back() == model_->config.tgt_vocab.eos()) t.pop_back();
  return model_->config.tgt_vocab.detokenize(t);
}

Session::Kv Session::attended_kv(int step, int layer, bool cross) const {
  const auto pick = [&](const DecoderTrace& t) -> const AttentionTrace& {
    const DecoderLayerTrace& l = t.layers[static_cast<size_t>(layer)];
    return cross ? l.cross_attn : l.self_attn;
  };
  const AttentionTrace& a = pick(*steps_[static_cast<size_t>(step)]->trace);
  if (a.kv_row0 == 0) return {a.k, a.v};
  // Rows [0, kv_row0) were written by earlier steps of the same (single) hypothesis, each holding
  // its own rows [kv_row0_s, kv_row0_s + rows_s): lay them out in order.
  const Eigen::Index rows = a.kv_row0 + a.k.rows();
  Kv out{Mat(rows, a.k.cols()), Mat(rows, a.v.cols())};
  for (int s = 0; s <= step; ++s) {
    const AttentionTrace& e = pick(*steps_[static_cast<size_t>(s)]->trace);
    const Eigen::Index n = std::min<Eigen::Index>(e.k.rows(), rows - e.kv_row0);
    if (n <= 0) continue;
    out.k.middleRows(e.kv_row0, n) = e.k.topRows(n);
    out.v.middleRows(e.kv_row0, n) = e.v.topRows(n);
  }
  return out;
}

std::shared_ptr<const DecoderTrace> Session::whole_trace(int step) const {
  const auto& stored = steps_[static_cast<size_t>(step)]->trace;
  if (stored->kind != Recording::Compact) return stored;
  const Model& m = *model_;
  auto t = std::make_shared<DecoderTrace>(*stored);
  for (size_t l = 0; l < t->layers.size(); ++l) {
    DecoderLayerTrace& lt = t->layers[l];
    for (bool cross : {false, true}) {
      AttentionTrace& a = cross ? lt.cross_attn : lt.self_attn;
      if (a.masks.empty()) continue;  // no such sublayer (cross-attention of a decoder-only model)
      Kv kv = attended_kv(step, static_cast<int>(l), cross);
      // The raw scores and weights as the forward computed them: the same attend() on the same Q, K, V.
      AttentionTrace again;
      Mat concat;
      attend(a.q, kv.k, kv.v, Heads(a.n_heads, a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads), a.masks, concat, &again);
      a.raw_scores = std::move(again.raw_scores);
      a.weights = std::move(again.weights);
      a.k = std::move(kv.k);
      a.v = std::move(kv.v);
      a.kv_row0 = 0;
    }
    if (!m.config.has_ffn()) continue;  // an attention-only layer
    FeedForwardTrace ffn;
    Mat out;
    const DecoderLayerWeights& w = m.weights.decoder[l];
    feed_forward(w.ffn, m.config.activation, lt.ffn_block.sublayer_in, out, &ffn);
    lt.ffn.hidden_pre = std::move(ffn.hidden_pre);
    lt.ffn.hidden = std::move(ffn.hidden);
    lt.ffn.gate_pre = std::move(ffn.gate_pre);
    lt.ffn.gate = std::move(ffn.gate);
    lt.ffn.up = std::move(ffn.up);
  }
  restore_block_copies(*t, m.config.norm);
  // Every row's logits, by the decoder's generator (a compact step computed the last row's only).
  Mat logits;
  generator_forward(m.weights, m.config, t->output, logits);
  record_logits(logits, t->logits, t->log_probs, t->probs);
  t->kind = Recording::Full;
  return t;
}

std::vector<Mat> Session::attention_weights(int step, int layer, bool cross, const Mat* keys) const {
  const DecoderLayerTrace& l = steps_[static_cast<size_t>(step)]->trace->layers[static_cast<size_t>(layer)];
  const AttentionTrace& a = cross ? l.cross_attn : l.self_attn;
  if (!a.weights.empty() || a.masks.empty()) return a.weights;
  const Mat& mask = a.masks[0];
  Mat gathered;
  if (!keys || keys->rows() < mask.cols()) {
    gathered = attended_kv(step, layer, cross).k;
    keys = &gathered;
  }
  const Heads heads(a.n_heads, a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads);
  std::vector<Mat> out(static_cast<size_t>(a.n_heads));
  for (int h = 0; h < a.n_heads; ++h)
    head_attention(a.q, keys->topRows(mask.cols()), heads, h, mask, out[static_cast<size_t>(h)]);
  return out;
}

namespace {

int64_t bytes_of(const Mat& m) { return static_cast<int64_t>(m.size()) * static_cast<int64_t>(sizeof(float)); }
int64_t bytes_of(const std::vector<Mat>& v) {
  int64_t b = 0;
  for (const Mat& m : v) b += bytes_of(m);
  return b;
}
int64_t bytes_of(const ColVec& v) { return static_cast<int64_t>(v.size()) * static_cast<int64_t>(sizeof(float)); }
int64_t bytes_of(const LayerNormTrace& t) {
  return bytes_of(t.mean) + bytes_of(t.var) + bytes_of(t.rms) + bytes_of(t.out);
}
int64_t bytes_of(const ResidualTrace& t) {
  return bytes_of(t.input) + bytes_of(t.sublayer_in) + bytes_of(t.sublayer_out) + bytes_of(t.sum) + bytes_of(t.output) +
         bytes_of(t.norm) + bytes_of(t.dropout_mask);
}
// A mask list shared between layers counts once: `seen` collects the storage counted.
int64_t bytes_of(const MaskList& m, std::vector<const void*>& seen) {
  if (m.empty() || std::find(seen.begin(), seen.end(), m.storage()) != seen.end()) return 0;
  seen.push_back(m.storage());
  return bytes_of(m.list());
}
int64_t bytes_of(const AttentionTrace& t, std::vector<const void*>& seen) {
  return bytes_of(t.q) + bytes_of(t.k) + bytes_of(t.v) + bytes_of(t.q_unrotated) + bytes_of(t.k_unrotated) +
         bytes_of(t.raw_scores) + bytes_of(t.masks, seen) + bytes_of(t.weights) + bytes_of(t.concat) + bytes_of(t.out);
}
int64_t bytes_of(const FeedForwardTrace& t) {
  return bytes_of(t.hidden_pre) + bytes_of(t.hidden) + bytes_of(t.gate_pre) + bytes_of(t.gate) + bytes_of(t.up) +
         bytes_of(t.out);
}
int64_t bytes_of(const EmbeddingTrace& t) {
  return bytes_of(t.scaled) + bytes_of(t.pe) + bytes_of(t.types) + bytes_of(t.pre_norm) + bytes_of(t.norm) +
         bytes_of(t.sum) + bytes_of(t.dropout_mask);
}

}  // namespace

int64_t Session::retained_bytes() const {
  int64_t total = 0;
  std::vector<const void*> masks;  // mask lists counted
  if (encoder_) {
    const EncoderTrace& t = encoder_->trace;
    total += bytes_of(encoder_->memory) + bytes_of(t.embed) + bytes_of(t.final_norm) + bytes_of(t.output);
    total += bytes_of(t.mlm_hidden_pre) + bytes_of(t.mlm_norm) + bytes_of(t.mlm_hidden) + bytes_of(t.logits) +
             bytes_of(t.log_probs) + bytes_of(t.probs);
    for (const EncoderLayerTrace& l : t.layers)
      total += bytes_of(l.self_block) + bytes_of(l.self_attn, masks) + bytes_of(l.ffn_block) + bytes_of(l.ffn);
  }
  std::vector<const DecoderTrace*> seen;
  const auto add = [&](const std::shared_ptr<const DecoderTrace>& p) {
    if (!p || std::find(seen.begin(), seen.end(), p.get()) != seen.end()) return;
    seen.push_back(p.get());
    const DecoderTrace& t = *p;
    total += bytes_of(t.embed) + bytes_of(t.final_norm) + bytes_of(t.output) + bytes_of(t.logits) +
             bytes_of(t.log_probs) + bytes_of(t.probs);
    for (const DecoderLayerTrace& l : t.layers)
      total += bytes_of(l.self_block) + bytes_of(l.self_attn, masks) + bytes_of(l.cross_block) +
               bytes_of(l.cross_attn, masks) + bytes_of(l.ffn_block) + bytes_of(l.ffn);
  };
  for (const auto& st : steps_) {
    add(st->trace);
    for (const auto& b : st->beam_traces) add(b);
  }
  return total;
}

KvCacheView Session::cache(const std::vector<GatheredKv>& self, const std::vector<GatheredKv>& cross) const {
  const Config& c = model_->config;
  KvCacheView view;
  view.enabled = use_cache_;
  view.layers.resize(static_cast<size_t>(c.n_decoder_layers));
  const int s = current_step();
  view.step = s;
  if (s < 0) return view;
  const auto rec = steps_[static_cast<size_t>(s)];
  // The view's matrices: the K/V each layer attended over, shared with their holder when given
  // (see cache()'s note), else gathered once here.
  struct Held {
    std::shared_ptr<const StepRecord> rec;
    std::vector<std::shared_ptr<const void>> shared;
    std::vector<std::unique_ptr<const Kv>> gathered;
  };
  auto held = std::make_shared<Held>();
  held->rec = rec;
  // A cached recording's K/V rows never change: an earlier step's gathered rows are this step's.
  const bool extends = rec->trace && rec->trace->kind == Recording::Compact;
  const auto kv_of = [&](const std::vector<GatheredKv>& given, int l, bool x, Eigen::Index rows) {
    if (l < static_cast<int>(given.size())) {
      const GatheredKv& g = given[static_cast<size_t>(l)];
      if (g.k && g.v && g.k->rows() >= rows && g.v->rows() >= rows && (g.step == s || (extends && g.step >= 0))) {
        held->shared.push_back(g.owner);
        return std::make_pair(g.k, g.v);
      }
    }
    held->gathered.push_back(std::make_unique<const Kv>(attended_kv(s, l, x)));
    return std::make_pair(&held->gathered.back()->k, &held->gathered.back()->v);
  };
  view.sequences = settings_.strategy == Strategy::Beam ? static_cast<int>(rec->beams_before.size()) : 1;
  const int j = cursor_ - step_first_stage(s);  // stage within the step
  const std::vector<StageKey> layout = decoder_layout(c);
  const int m = static_cast<int>(rec->fed.size());
  const int n_src = static_cast<int>(input_.src_ids.size());
  int fullest = rec->position0;
  std::vector<int> rows;  // (L_dec) rows each layer holds
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    int self_at = 0, cross_at = 0;  // stage index (within the step) of this layer's attentions
    for (int k = 0; k < static_cast<int>(layout.size()); ++k) {
      if (layout[static_cast<size_t>(k)].layer != l) continue;
      if (layout[static_cast<size_t>(k)].kind == StageKind::SelfAttention) self_at = k;
      if (layout[static_cast<size_t>(k)].kind == StageKind::CrossAttention) cross_at = k;
    }
    KvLayerView& lv = view.layers[static_cast<size_t>(l)];
    lv.new_rows = j >= self_at ? m : 0;
    lv.self_rows = rec->position0 + lv.new_rows;
    std::tie(lv.self_k, lv.self_v) = kv_of(self, l, false, lv.self_rows);
    fullest = std::max(fullest, lv.self_rows);
    if (c.has_encoder() && (s > 0 || j >= cross_at)) {
      std::tie(lv.cross_k, lv.cross_v) = kv_of(cross, l, true, n_src);
      lv.cross_new = s == 0 || !use_cache_;
    }
    rows.push_back(lv.self_rows);
    if (use_cache_ && lv.cross_k) view.cross_bytes += 2LL * n_src * c.d_model * kKvBytesPerElement * view.sequences;
  }
  view.table = kv_cache_table(c, rows, view.sequences);
  if (use_cache_) view.self_bytes = view.table.bytes;
  view.hold = std::move(held);
  view.row_step.assign(rec->row_step.begin(), rec->row_step.begin() + fullest);
  return view;
}

CostReport Session::cost() const {
  const auto rec = current_record();
  const int t = rec ? rec->position0 + static_cast<int>(rec->fed.size())
                    : static_cast<int>(decoder_prefix(*model_, input_).size());
  const int seq = settings_.strategy == Strategy::Beam && rec ? static_cast<int>(rec->beams_before.size()) : 1;
  CostReport r = cost_report(model_->config, static_cast<int>(input_.src_ids.size()), t, seq);
  if (model_->weights.matrix_storage() != WeightStorage::F32)  // matrices kept 16-bit: 2 bytes per value
    r.weight_bytes = held_bytes(model_->weights, model_->config);
  return r;
}

std::optional<Tensor> Session::tensor(const std::string& name) const {
  const Model& m = *model_;
  TensorFile f;
  if (name.rfind("steps.", 0) == 0) {
    const size_t dot = name.find('.', 6);
    if (dot == std::string::npos) return std::nullopt;
    const std::string num = name.substr(6, dot - 6);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 6) return std::nullopt;
    const size_t step = std::stoul(num);
    if (step >= steps_.size()) return std::nullopt;
    append_decoder_tensors(m, *whole_trace(static_cast<int>(step)), f, "steps." + num + ".");
  } else if (encoder_ && (name.rfind("encoder.", 0) == 0 || name.rfind("mlm.", 0) == 0 || name == "src_ids" ||
                          (!m.config.has_decoder() && (name == "logits" || name == "log_probs" || name == "probs")))) {
    append_encoder_tensors(m, encoder_->trace, f, "");
  }
  if (const Tensor* t = f.find(name)) return *t;
  for (const ParamRef& p : param_table(m.weights, m.config)) {
    if (p.name != name) continue;
    return Tensor::from_vec(p.values(), p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols});
  }
  return std::nullopt;
}

}  // namespace sf
