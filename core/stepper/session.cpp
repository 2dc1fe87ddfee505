#include "stepper/session.h"
#include "io/trace_export.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "model/encoder.h"

namespace sf {

// The hypotheses being decoded. Only the frontier lives here; everything already shown is in the
// immutable history (steps_), so moving the cursor never touches this.
struct Session::Live {
  std::vector<Hypothesis> hyps;  // [b] for beams[b] (greedy/sample/forced: one)
  std::vector<Beam> beams;       // the current list (single-hypothesis strategies: one entry)
  Rng rng;                       // Sample: one draw per step, so the seed fixes the run
  bool finished = false;
  std::string finish_reason;
};

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The decoder prefix: <s> for encoder-decoder models, <s> + prompt for decoder-only ones.
std::vector<int> decoder_prefix(const Model& m, const PreparedInput& in) {
  return with_bos(m.config.tgt_vocab, m.config.has_encoder() ? std::vector<int>{} : in.src.ids);
}

// Forced decoding follows the target, then ends it with </s> (the label sequence of training).
std::vector<int> forced_tokens(const Model& m, const PreparedInput& in) {
  std::vector<int> out = in.tgt.ids;
  const int eos = m.config.tgt_vocab.eos();
  if (out.empty() || out.back() != eos) out.push_back(eos);
  return out;
}

// Row r of a decoder with a prefix of p tokens came in at step max(0, r − (p − 1)): the prefix at
// step 0, then one row per step. The same for every hypothesis, cached or not.
std::vector<int> row_steps(int rows, int prefix_len) {
  std::vector<int> out(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) out[static_cast<size_t>(r)] = std::max(0, r - (prefix_len - 1));
  return out;
}

RowVec last_row(const Mat& m) { return m.bottomRows(1); }

}  // namespace

// ---- creation -----------------------------------------------------------------------------------

Result<Session> Session::create(std::shared_ptr<const Model> model, const std::string& src, const std::string& tgt,
                                const DecodeSettings& settings, bool use_cache) {
  if (!model) return Error{"model: expected a loaded model, found none"};
  if (auto ok = validate(settings, *model); !ok) return Error{ok.error()};
  auto in = prepare_input(*model, src, tgt);
  if (!in) return Error{in.error()};
  if (settings.strategy == Strategy::Forced && in->tgt.ids.empty())
    return Error{"forced decoding: expected a target to follow (--tgt), found an empty one"};

  Session s;
  s.model_ = std::move(model);
  s.src_text_ = src;
  s.tgt_text_ = tgt;
  s.input_ = std::move(*in);
  s.settings_ = settings;
  s.use_cache_ = use_cache;
  const int prefix = static_cast<int>(decoder_prefix(*s.model_, s.input_).size());
  DecodeSettings unlimited = settings;
  unlimited.max_len = 0;
  const int most = generation_limit(*s.model_, prefix, unlimited);
  if (settings.max_len > most)
    return Error{"max length: expected at most " + std::to_string(most) + " tokens (the model's max_len " +
                 std::to_string(s.model_->config.max_len) + " after a decoder prefix of " + std::to_string(prefix) +
                 (prefix == 1 ? " token" : " tokens") + "), found " + std::to_string(settings.max_len)};
  s.limit_ = generation_limit(*s.model_, prefix, settings);
  if (auto ok = s.restart(); !ok) return Error{ok.error()};
  return s;
}

Result<bool> Session::restart() {
  const Model& m = *model_;
  steps_.clear();
  cursor_ = 0;
  encoder_.reset();
  if (m.config.has_encoder()) {
    auto rec = std::make_shared<EncoderRecord>();
    rec->src_ids = input_.src_ids;
    rec->memory = encode(m, rec->src_ids, 1, &rec->trace, settings_.run);
    encoder_ = std::move(rec);
  }
  live_ = std::make_shared<Live>();
  live_->rng.reseed(settings_.seed);
  live_->hyps.resize(1);
  start_hypothesis(m, decoder_prefix(m, input_), use_cache_, live_->hyps[0]);
  live_->beams.resize(1);
  // A decoder-only model has no encoder stage: its first stage is the prefill's, so compute it.
  if (encoder_stage_count(m.config) == 0) compute_next_step();
  return true;
}

void Session::own_live() {
  if (live_.use_count() > 1) live_ = std::make_shared<Live>(*live_);
}

// ---- computing one step -------------------------------------------------------------------------

bool Session::compute_next_step() {
  if (live_->finished) return false;
  own_live();
  Live& L = *live_;
  const Model& m = *model_;
  const int eos = m.config.tgt_vocab.eos();
  const int t = static_cast<int>(steps_.size());
  const auto t0 = std::chrono::steady_clock::now();

  auto rec = std::make_shared<StepRecord>();
  rec->step = t;
  rec->cached = use_cache_;
  const std::vector<int>& ids0 = L.hyps[0].ids;  // every hypothesis has the same length
  const int fed = t == 0 ? static_cast<int>(ids0.size()) : 1;
  rec->fed.assign(ids0.end() - fed, ids0.end());
  rec->position0 = static_cast<int>(ids0.size()) - fed;
  rec->query_row0 = use_cache_ ? 0 : rec->position0;

  EncoderContext enc;
  if (encoder_) enc = {&encoder_->memory, &encoder_->src_ids};

  if (settings_.strategy != Strategy::Beam) {
    auto tr = std::make_shared<DecoderTrace>();
    const RowVec logits = next_logits(m, enc, L.hyps[0], use_cache_, tr.get(), settings_.run);
    rec->top = top_alternatives(logits, 10);
    rec->argmax = argmax(logits);
    int chosen = rec->argmax;
    if (settings_.strategy == Strategy::Sample) chosen = sample_token(logits, settings_, L.rng, &rec->sample);
    if (settings_.strategy == Strategy::Forced) chosen = forced_tokens(m, input_)[static_cast<size_t>(t)];
    const float log_p = tr->log_probs(tr->log_probs.rows() - 1, chosen);
    rec->chosen = chosen;
    rec->chosen_prob = std::exp(log_p);
    rec->trace = std::move(tr);
    L.hyps[0].ids.push_back(chosen);
    Beam& b = L.beams[0];
    b.tokens.push_back(chosen);
    b.score += log_p;
    b.finished = chosen == eos;
    rec->tokens = b.tokens;
    if (chosen == eos) {
      rec->finish_reason = "</s>";
    } else if (static_cast<int>(b.tokens.size()) >= limit_) {
      rec->finish_reason = "max length " + std::to_string(limit_);
    }
  } else {
    const size_t B = L.beams.size();
    rec->beams_before = L.beams;
    rec->beam_traces.resize(B);
    std::vector<RowVec> log_probs(B);
    for (size_t b = 0; b < B; ++b) {
      if (L.beams[b].finished) continue;
      auto tr = std::make_shared<DecoderTrace>();
      next_logits(m, enc, L.hyps[b], use_cache_, tr.get(), settings_.run);
      log_probs[b] = last_row(tr->log_probs);
      rec->beam_traces[b] = std::move(tr);
    }
    std::vector<Beam> next = beam_step(L.beams, log_probs, settings_.beam_width, eos, &rec->candidates);

    // Each new beam takes its parent's hypothesis: moved for the last child, copied before that.
    std::vector<int> children(B, 0);
    for (const Beam& nb : next) ++children[static_cast<size_t>(nb.parent)];
    std::vector<Hypothesis> hyps;
    hyps.reserve(next.size());
    for (const Beam& nb : next) {
      const size_t p = static_cast<size_t>(nb.parent);
      hyps.push_back(--children[p] == 0 ? std::move(L.hyps[p]) : L.hyps[p]);
      if (nb.tokens.size() > rec->beams_before[p].tokens.size()) hyps.back().ids.push_back(nb.tokens.back());
    }
    // The focus: the best beam extended at this step (a finished beam carried forward was not run).
    size_t best = 0;
    while (next[best].tokens.size() == rec->beams_before[static_cast<size_t>(next[best].parent)].tokens.size()) ++best;
    rec->focus = next[best].parent;
    rec->trace = rec->beam_traces[static_cast<size_t>(rec->focus)];
    const RowVec& lp = log_probs[static_cast<size_t>(rec->focus)];
    rec->top = top_alternatives(lp, 10);
    rec->argmax = argmax(lp);
    rec->chosen = next[best].tokens.back();
    rec->chosen_prob = std::exp(lp(rec->chosen));
    rec->tokens = next[0].tokens;
    bool all_finished = true;
    for (const Beam& nb : next) all_finished = all_finished && nb.finished;
    // Scores are sums of log-probabilities, so they only fall: once the best beam has ended, no
    // live beam can overtake it.
    if (next[0].finished) {
      rec->finish_reason = all_finished ? "all beams finished" : "best beam ended with </s>";
    } else if (t + 1 >= limit_) {
      rec->finish_reason = "max length " + std::to_string(limit_);
    }
    rec->beams = next;
    L.beams = std::move(next);
    L.hyps = std::move(hyps);
  }

  const int prefix = static_cast<int>(decoder_prefix(m, input_).size());
  rec->row_step = row_steps(rec->position0 + fed, prefix);
  if (use_cache_)
    for (const Hypothesis& h : L.hyps) rec->cache_bytes += h.cache.bytes();
  rec->finished = !rec->finish_reason.empty();
  if (rec->finished) {
    L.finished = true;
    L.finish_reason = rec->finish_reason;
  }
  rec->millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  steps_.push_back(std::move(rec));
  return true;
}

// ---- movement -----------------------------------------------------------------------------------

int Session::step_first_stage(int step) const {
  return encoder_stage_count(model_->config) + step * decoder_stage_count(model_->config);
}

int Session::stage_count() const { return step_first_stage(static_cast<int>(steps_.size())); }

bool Session::finished() const { return live_->finished; }

bool Session::forward() {
  if (cursor_ + 1 >= stage_count() && !compute_next_step()) {
    message_ = "already at the last stage: decoding finished (" + live_->finish_reason + ")";
    return false;
  }
  ++cursor_;
  message_.clear();
  return true;
}

bool Session::back() {
  if (cursor_ == 0) {
    message_ = "already at the first stage";
    return false;
  }
  --cursor_;
  message_.clear();
  return true;
}

bool Session::next_token() {
  const int s = current_step();
  const int choose_here = s >= 0 ? step_first_stage(s + 1) - 1 : -1;
  const int target_step = cursor_ < choose_here ? s : s + 1;
  if (target_step >= static_cast<int>(steps_.size()) && !compute_next_step()) {
    message_ = "no next token: decoding finished (" + live_->finish_reason + ")";
    return false;
  }
  // One step at a time: the next token is at most one step away.
  cursor_ = step_first_stage(target_step + 1) - 1;
  message_.clear();
  return true;
}

bool Session::prev_token() {
  const int s = current_step();
  if (s < 0) {
    message_ = "no earlier token: still on the encoder side";
    return false;
  }
  // From anywhere in step s, back to the choice of step s − 1; before step 0 lies the memory.
  const int target = s > 0 ? step_first_stage(s) - 1 : step_first_stage(0) - 1;
  if (target < 0) {
    message_ = "no earlier token: this is the first decoding step";
    return false;
  }
  cursor_ = target;
  message_.clear();
  return true;
}

bool Session::jump(int stage) {
  if (stage < 0) {
    message_ = "stage " + std::to_string(stage) + " does not exist: expected 0 or more";
    return false;
  }
  while (stage >= stage_count() && compute_next_step()) {
  }
  const int target = std::min(stage, stage_count() - 1);
  message_ = target < stage ? "decoding finished (" + live_->finish_reason + ") at stage " + std::to_string(target) +
                                  "; stage " + std::to_string(stage) + " does not exist"
                            : "";
  const bool moved = target != cursor_;
  cursor_ = target;
  return moved;
}

bool Session::jump_to_step(int step) {
  if (step < 0) {
    message_ = "step " + std::to_string(step) + " does not exist: expected 0 or more";
    return false;
  }
  while (step >= static_cast<int>(steps_.size()) && compute_next_step()) {
  }
  if (step >= static_cast<int>(steps_.size())) {
    const bool moved = cursor_ != stage_count() - 1;
    cursor_ = stage_count() - 1;
    message_ = "decoding finished (" + live_->finish_reason + ") after step " + std::to_string(steps_.size() - 1) +
               "; step " + std::to_string(step) + " does not exist";
    return moved;
  }
  const int target = step_first_stage(step + 1) - 1;
  const bool moved = target != cursor_;
  cursor_ = target;
  message_.clear();
  return moved;
}

void Session::run_to_end() {
  while (compute_next_step()) {
  }
  cursor_ = stage_count() - 1;
  message_.clear();
}

void Session::reset() {
  restart();
  message_.clear();
}

// ---- changes ------------------------------------------------------------------------------------

Result<bool> Session::set_input(const std::string& src, const std::string& tgt) {
  auto s = create(model_, src, tgt, settings_, use_cache_);
  if (!s) return Error{s.error()};
  *this = std::move(*s);
  return true;
}

Result<bool> Session::set_settings(const DecodeSettings& settings) {
  auto s = create(model_, src_text_, tgt_text_, settings, use_cache_);
  if (!s) return Error{s.error()};
  *this = std::move(*s);
  return true;
}

void Session::set_use_cache(bool on) {
  if (on == use_cache_) return;
  const int target = cursor_;
  use_cache_ = on;
  restart();
  jump(target);
  message_ = std::string("cache ") + (on ? "on" : "off") + ": history recomputed up to the same stage";
}

// ---- reading ------------------------------------------------------------------------------------

int Session::current_step() const {
  const int E = encoder_stage_count(model_->config);
  return cursor_ < E ? -1 : (cursor_ - E) / decoder_stage_count(model_->config);
}

std::shared_ptr<const StepRecord> Session::current_record() const {
  const int s = current_step();
  return s < 0 ? nullptr : steps_[static_cast<size_t>(s)];
}

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
      s.formula = "greedy: argmax_v p(v) = " + tok(r.chosen) + fmt(" (p = %.3f)", r.chosen_prob);
      break;
    case Strategy::Sample:
      s.formula = "sample from softmax(logits / " + fmt("%g", settings_.temperature) + ")" +
                  (settings_.top_k > 0 ? ", top-k " + std::to_string(settings_.top_k) : "") +
                  (settings_.top_p < 1 ? ", top-p " + fmt("%g", settings_.top_p) : "") + ": kept " +
                  std::to_string(r.sample.kept) + fmt(" tokens (mass %.3f)", r.sample.kept_mass) +
                  fmt(", u = %.4f", r.sample.u) + " → " + tok(r.chosen) + fmt(" (p = %.3f renormalised)", r.sample.prob);
      break;
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
      s.formula = "forced: the target's next token " + tok(r.chosen) + fmt(" (p = %.3f", r.chosen_prob) +
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

KvCacheView Session::cache() const {
  const Config& c = model_->config;
  KvCacheView view;
  view.enabled = use_cache_;
  view.layers.resize(static_cast<size_t>(c.n_decoder_layers));
  const int s = current_step();
  view.step = s;
  if (s < 0) return view;
  const auto rec = steps_[static_cast<size_t>(s)];
  view.hold = rec;
  view.sequences = settings_.strategy == Strategy::Beam ? static_cast<int>(rec->beams_before.size()) : 1;
  const int j = cursor_ - step_first_stage(s);  // stage within the step
  const std::vector<StageKey> layout = decoder_layout(c);
  const int m = static_cast<int>(rec->fed.size());
  const int n_src = static_cast<int>(input_.src_ids.size());
  int fullest = rec->position0;
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    int self_at = 0, cross_at = 0;  // stage index (within the step) of this layer's attentions
    for (int k = 0; k < static_cast<int>(layout.size()); ++k) {
      if (layout[static_cast<size_t>(k)].layer != l) continue;
      if (layout[static_cast<size_t>(k)].kind == StageKind::SelfAttention) self_at = k;
      if (layout[static_cast<size_t>(k)].kind == StageKind::CrossAttention) cross_at = k;
    }
    const DecoderLayerTrace& lt = rec->trace->layers[static_cast<size_t>(l)];
    KvLayerView& lv = view.layers[static_cast<size_t>(l)];
    lv.self_k = &lt.self_attn.k;
    lv.self_v = &lt.self_attn.v;
    lv.new_rows = j >= self_at ? m : 0;
    lv.self_rows = rec->position0 + lv.new_rows;
    fullest = std::max(fullest, lv.self_rows);
    if (c.has_encoder() && (s > 0 || j >= cross_at)) {
      lv.cross_k = &lt.cross_attn.k;
      lv.cross_v = &lt.cross_attn.v;
      lv.cross_new = s == 0 || !use_cache_;
    }
    if (use_cache_) {
      view.self_bytes += 2LL * lv.self_rows * c.d_model * 4 * view.sequences;
      if (lv.cross_k) view.cross_bytes += 2LL * n_src * c.d_model * 4 * view.sequences;
    }
  }
  view.row_step.assign(rec->row_step.begin(), rec->row_step.begin() + fullest);
  return view;
}

CostReport Session::cost() const {
  const auto rec = current_record();
  const int t = rec ? rec->position0 + static_cast<int>(rec->fed.size())
                    : static_cast<int>(decoder_prefix(*model_, input_).size());
  const int seq = settings_.strategy == Strategy::Beam && rec ? static_cast<int>(rec->beams_before.size()) : 1;
  return cost_report(model_->config, static_cast<int>(input_.src_ids.size()), t, seq);
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
    append_decoder_tensors(m, *steps_[step]->trace, f, "steps." + num + ".");
  } else if (encoder_ && (name.rfind("encoder.", 0) == 0 || name == "src_ids")) {
    append_encoder_tensors(m, encoder_->trace, f, "");
  }
  if (const Tensor* t = f.find(name)) return *t;
  for (const ParamRef& p : param_table(m.weights, m.config)) {
    if (p.name != name) continue;
    std::vector<float> data(p.data, p.data + p.numel());
    return Tensor::from_vec(data, p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols});
  }
  return std::nullopt;
}

}  // namespace sf
