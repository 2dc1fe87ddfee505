// session.cpp — creating a Session and computing its decoder steps (the one place that runs the
// model); moving the cursor is in session_cursor.cpp, reading the history in session_views.cpp.
#include "stepper/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

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

// What a kept step's recording holds, so that a long run's history grows by about one step's new
// rows per step instead of the whole prefix (a 1024-token GPT-2 run fits in 2 GB):
//  - self-attention K/V: only the `fed` rows the step added (from position0 on); cross-attention
//    K/V: nothing after step 0 (the source's K/V never change). Without this every step would copy
//    the whole cache: ~40 GB of K/V for 1024 GPT-2 tokens instead of ~75 MB;
//  - no attention weights or raw scores: a head's map is n_q × n_k, and a 1024-token prefill's
//    would hold 12 × 12 × 1024² floats (600 MB) against its Q and K's 2 × 12 × 1024 × 768 (75 MB);
//    Session::attention_weights computes a step's maps again from the kept Q, K and mask with the
//    forward's own head_attention;
//  - no FFN hidden activations, log_probs or probs (~1 MB per GPT-2 step): each is recomputed from
//    what is kept, by the same code, in Session::whole_trace;
//  - no second copy of a matrix a residual block holds twice (drop_block_copies, model/trace.h),
//    its input included (the previous block's output): 8 of a GPT-2 layer's ~20 (n, d) matrices,
//    about 300 MB of a 1,020-token prefill;
//  - one attention mask per kind, which every layer's recording shares (MaskList).
// Beam search keeps its recordings whole: its hypotheses' rows come from different parents.
void compact(DecoderTrace& tr, int step, int position0, int fed, NormPlacement norm) {
  for (DecoderLayerTrace& l : tr.layers) {
    AttentionTrace& self = l.self_attn;
    self.k = self.k.bottomRows(fed).eval();
    self.v = self.v.bottomRows(fed).eval();
    self.kv_row0 = position0;
    self.raw_scores.clear();
    self.weights.clear();
    if (!l.cross_attn.masks.empty()) {
      l.cross_attn.raw_scores.clear();
      l.cross_attn.weights.clear();
      if (step > 0) {
        l.cross_attn.kv_row0 = static_cast<int>(l.cross_attn.k.rows());
        l.cross_attn.k.resize(0, l.cross_attn.k.cols());
        l.cross_attn.v.resize(0, l.cross_attn.v.cols());
      }
    }
    l.ffn.hidden_pre.resize(0, 0);
    l.ffn.hidden.resize(0, 0);
  }
  drop_block_copies(tr, norm);
  tr.log_probs.resize(0, 0);
  tr.probs.resize(0, 0);
  tr.kind = Recording::Compact;
}

// What a step reads of the Session.
struct StepContext {
  const Model& m;
  const EncoderContext& enc;
  const DecodeSettings& settings;
  const PreparedInput& input;
  const std::vector<int>& keep;  // tokens the first steps keep instead of deciding
  bool use_cache;
  int limit;  // most steps
};

// Greedy, sampling and forced decoding: the one hypothesis runs, and a token is chosen (drawn,
// forced, or kept from before a settings change).
void step_one_hypothesis(const StepContext& x, int t, int fed, Hypothesis& hyp, Beam& beam, Rng& rng, StepRecord& rec) {
  const Model& m = x.m;
  const EncoderContext& enc = x.enc;
  const int eos = m.config.tgt_vocab.eos();
  auto tr = std::make_shared<DecoderTrace>();
  tr->kind = x.use_cache ? Recording::Compact : Recording::Full;  // see compact() above
  const RowVec logits = next_logits(m, enc, hyp, x.use_cache, tr.get(), x.settings.run);
  rec.top = top_alternatives(logits, 10);
  rec.argmax = argmax(logits);
  int chosen = rec.argmax;
  rec.kept = t < static_cast<int>(x.keep.size());
  if (rec.kept) {
    chosen = x.keep[static_cast<size_t>(t)];  // no draw: the random stream starts at the first new step
  } else if (x.settings.strategy == Strategy::Sample) {
    chosen = sample_token(logits, x.settings, rng, &rec.sample);
  } else if (x.settings.strategy == Strategy::Forced) {
    chosen = forced_tokens(m, x.input)[static_cast<size_t>(t)];
  }
  if (x.settings.strategy == Strategy::Sample) {
    rec.sampling = sampling_table(logits, x.settings, 10, chosen);
    if (rec.kept)
      for (const SamplingRow& r : rec.sampling.rows)
        if (r.id == chosen) rec.sample = {rec.sampling.kept, rec.sampling.kept_mass, -1.0f, r.p_kept};
  }
  const float log_p = log_softmax_rows(logits)(0, chosen);
  rec.chosen = chosen;
  rec.chosen_prob = std::exp(log_p);
  // Beam search is left whole: its hypotheses' rows come from different parents at each step.
  if (x.use_cache) compact(*tr, t, rec.position0, fed, m.config.norm);
  rec.trace = std::move(tr);
  hyp.ids.push_back(chosen);
  Beam& b = beam;
  b.tokens.push_back(chosen);
  b.score += log_p;
  b.finished = chosen == eos;
  rec.tokens = b.tokens;
  if (chosen == eos) {
    rec.finish_reason = "</s>";
  } else if (static_cast<int>(b.tokens.size()) >= x.limit) {
    rec.finish_reason = "max length " + std::to_string(x.limit);
  }
}

// Beam search: every live beam runs, beam_step keeps the best continuations, and each new beam
// takes its parent's hypothesis.
void step_beams(const StepContext& x, int t, std::vector<Hypothesis>& hyps, std::vector<Beam>& beams, StepRecord& rec) {
  const Model& m = x.m;
  const EncoderContext& enc = x.enc;
  const int eos = m.config.tgt_vocab.eos();
  const size_t B = beams.size();
  rec.beams_before = beams;
  rec.beam_traces.resize(B);
  std::vector<RowVec> log_probs(B);
  for (size_t b = 0; b < B; ++b) {
    if (beams[b].finished) continue;
    auto tr = std::make_shared<DecoderTrace>();
    next_logits(m, enc, hyps[b], x.use_cache, tr.get(), x.settings.run);
    log_probs[b] = last_row(tr->log_probs);
    rec.beam_traces[b] = std::move(tr);
  }
  std::vector<Beam> next = beam_step(beams, log_probs, x.settings.beam_width, eos, &rec.candidates);

  // Each new beam takes its parent's hypothesis: moved for the last child, copied before that.
  std::vector<int> children(B, 0);
  for (const Beam& nb : next) ++children[static_cast<size_t>(nb.parent)];
  std::vector<Hypothesis> next_hyps;
  next_hyps.reserve(next.size());
  for (const Beam& nb : next) {
    const size_t p = static_cast<size_t>(nb.parent);
    next_hyps.push_back(--children[p] == 0 ? std::move(hyps[p]) : hyps[p]);
    if (nb.tokens.size() > rec.beams_before[p].tokens.size()) next_hyps.back().ids.push_back(nb.tokens.back());
  }
  // The focus: the best beam extended at this step (a finished beam carried forward was not run).
  size_t best = 0;
  while (next[best].tokens.size() == rec.beams_before[static_cast<size_t>(next[best].parent)].tokens.size()) ++best;
  rec.focus = next[best].parent;
  rec.trace = rec.beam_traces[static_cast<size_t>(rec.focus)];
  const RowVec& lp = log_probs[static_cast<size_t>(rec.focus)];
  rec.top = top_alternatives(lp, 10);
  rec.argmax = argmax(lp);
  rec.chosen = next[best].tokens.back();
  rec.chosen_prob = std::exp(lp(rec.chosen));
  rec.tokens = next[0].tokens;
  bool all_finished = true;
  for (const Beam& nb : next) all_finished = all_finished && nb.finished;
  // Scores are sums of log-probabilities, so they only fall: once the best beam has ended, no
  // live beam can overtake it.
  if (next[0].finished) {
    rec.finish_reason = all_finished ? "all beams finished" : "best beam ended with </s>";
  } else if (t + 1 >= x.limit) {
    rec.finish_reason = "max length " + std::to_string(x.limit);
  }
  rec.beams = next;
  beams = std::move(next);
  hyps = std::move(next_hyps);
}

}  // namespace

// ---- creation -----------------------------------------------------------------------------------

Result<Session> Session::create(std::shared_ptr<const Model> model, const std::string& src, const std::string& tgt,
                                const DecodeSettings& settings, bool use_cache, std::vector<int> keep) {
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
  if (!s.model_->config.has_decoder()) {  // encoder-only: nothing to decode, no limits to check
    if (auto ok = s.restart(); !ok) return Error{ok.error()};
    return s;
  }
  const int prefix = static_cast<int>(decoder_prefix(*s.model_, s.input_).size());
  DecodeSettings unlimited = settings;
  unlimited.max_len = 0;
  const int most = generation_limit(*s.model_, prefix, unlimited);
  if (settings.max_len > most)
    return Error{"max length: expected at most " + std::to_string(most) + " tokens (the model's max_len " +
                 std::to_string(s.model_->config.max_len) + " after a decoder prefix of " + std::to_string(prefix) +
                 (prefix == 1 ? " token" : " tokens") + "), found " + std::to_string(settings.max_len)};
  s.limit_ = generation_limit(*s.model_, prefix, settings);
  const int V = s.model_->config.tgt_vocab.size();
  if (static_cast<int>(keep.size()) > s.limit_ ||
      std::any_of(keep.begin(), keep.end(), [V](int id) { return id < 0 || id >= V; }))
    return Error{"kept prefix: expected at most " + std::to_string(s.limit_) + " token ids below " + std::to_string(V) +
                 ", found " + std::to_string(keep.size()) + " tokens"};
  s.keep_ = std::move(keep);
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
  if (!m.config.has_decoder()) {
    live_->finished = true;
    live_->finish_reason = "encoder-only model: no decoder";
    return true;
  }
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

  const StepContext x{m, enc, settings_, input_, keep_, use_cache_, limit_};
  if (settings_.strategy == Strategy::Beam)
    step_beams(x, rec->step, L.hyps, L.beams, *rec);
  else
    step_one_hypothesis(x, rec->step, fed, L.hyps[0], L.beams[0], L.rng, *rec);

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

bool Session::finished() const { return live_->finished; }

const std::string& Session::finish_reason() const { return live_->finish_reason; }

std::vector<MaskedPrediction> Session::masked_predictions(int k, int also) const {
  if (!encoder_ || encoder_->trace.logits.size() == 0) return {};
  return sf::masked_predictions(encoder_->src_ids, encoder_->trace.logits, mask_token(model_->config.src_vocab), k,
                                also);
}

}  // namespace sf
