#include "analysis/head_detector.h"

#include <algorithm>

#include "analysis/rollout.h"
#include "base/rng.h"
#include "stepper/run.h"
#include "train/metrics.h"

namespace sf {

namespace {

// The scores of every head of one stack's self-attentions for every pattern.
StackScores score_stack(Side side, const std::vector<int>& ids, const std::vector<const AttentionTrace*>& attn) {
  StackScores s;
  s.side = side;
  s.ids = ids;
  s.score.resize(kHeadPatterns);
  for (int p = 0; p < kHeadPatterns; ++p) {
    const Mat pattern = detection_pattern(static_cast<HeadPattern>(p), ids);  // (n, n)
    for (const AttentionTrace* a : attn) {
      std::vector<double> heads;
      for (int h = 0; h < a->n_heads; ++h) heads.push_back(pattern_score(a->head_weights(0, h), pattern));
      s.score[static_cast<size_t>(p)].push_back(std::move(heads));
    }
  }
  return s;
}

}  // namespace

const char* to_string(HeadPattern p) {
  switch (p) {
    case HeadPattern::PreviousToken:
      return "previous token";
    case HeadPattern::DuplicateToken:
      return "duplicate token";
    case HeadPattern::Induction:
      return "induction";
    case HeadPattern::FirstToken:
      return "first token";
  }
  return "?";
}

const char* head_pattern_key(HeadPattern p) {
  switch (p) {
    case HeadPattern::PreviousToken:
      return "previous_token";
    case HeadPattern::DuplicateToken:
      return "duplicate_token";
    case HeadPattern::Induction:
      return "induction";
    case HeadPattern::FirstToken:
      return "first_token";
  }
  return "?";
}

Mat detection_pattern(HeadPattern p, const std::vector<int>& ids) {
  const int n = static_cast<int>(ids.size());
  Mat out = Mat::Zero(n, n);  // (n, n)
  for (int i = 0; i < n; ++i) {
    switch (p) {
      case HeadPattern::PreviousToken:
        if (i > 0) out(i, i - 1) = 1;
        break;
      case HeadPattern::DuplicateToken:
        for (int j = 0; j < i; ++j) out(i, j) = ids[static_cast<size_t>(j)] == ids[static_cast<size_t>(i)];
        break;
      case HeadPattern::Induction:
        for (int j = 1; j <= i; ++j) out(i, j) = ids[static_cast<size_t>(j - 1)] == ids[static_cast<size_t>(i)];
        break;
      case HeadPattern::FirstToken:
        out(i, 0) = 1;
        break;
    }
  }
  return out;
}

double pattern_score(const Mat& attention, const Mat& pattern) {
  const double total = attention.cast<double>().sum();
  if (total == 0) return 0;
  return attention.cast<double>().cwiseProduct(pattern.cast<double>()).sum() / total;
}

std::vector<int> repeated_random_tokens(const Model& m, int r, uint64_t seed) {
  const Config& c = m.config;
  const Vocab& v = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  std::vector<int> pool;
  for (int id = 0; id < v.size(); ++id)
    if (!v.is_special(id)) pool.push_back(id);
  r = std::max(1, std::min(r, (c.max_len - 1) / 2));
  Rng rng(seed);
  std::vector<int> half;
  for (int i = 0; i < r && !pool.empty(); ++i) half.push_back(pool[rng.below(pool.size())]);
  std::vector<int> out = half;
  out.insert(out.end(), half.begin(), half.end());
  return out;
}

Result<HeadDetection> detect_heads(const Model& m, int r, uint64_t seed) {
  const Config& c = m.config;
  HeadDetection d;
  d.tokens = repeated_random_tokens(m, r, seed);
  if (d.tokens.size() < 4)
    return Error{"head detectors: expected room for a repeated sequence of at least 2 tokens, found max_len " +
                 std::to_string(c.max_len)};
  PreparedInput in;
  if (c.has_encoder()) in.src_ids = d.tokens;
  if (c.has_decoder()) in.tgt_ids = with_bos(c.tgt_vocab, d.tokens);
  d.trace = run_forward(m, in);
  if (c.has_encoder())
    d.stacks.push_back(score_stack(Side::Encoder, in.src_ids, encoder_self_attention(d.trace.encoder)));
  if (c.has_decoder())
    d.stacks.push_back(score_stack(Side::Decoder, in.tgt_ids, decoder_self_attention(d.trace.decoder)));
  return d;
}

void record_head_scores(nlohmann::json& metrics, int64_t step, const Model& m) {
  using nlohmann::json;
  auto d = detect_heads(m, kHeadProbeLength, kHeadProbeSeed);
  if (!d || d->stacks.empty()) return;
  if (!metrics.contains("heads")) {
    json h = {{"every", metrics.contains("probes") ? metrics["probes"].value("every", json(0)) : json(0)},
              {"probe", "decoder self-attention on <s> r r, r = " + std::to_string(d->tokens.size() / 2) +
                            " random tokens (seed " + std::to_string(kHeadProbeSeed) + ")"},
              {"step", json::array()}};
    for (int p = 0; p < kHeadPatterns; ++p) h[head_pattern_key(static_cast<HeadPattern>(p))] = json::array();
    metrics["heads"] = std::move(h);
  }
  const StackScores& dec = d->stacks.back();
  json& h = metrics["heads"];
  h["step"].push_back(step);
  for (int p = 0; p < kHeadPatterns; ++p) {
    json layers = json::array();
    for (const auto& heads : dec.score[static_cast<size_t>(p)]) {
      json row = json::array();
      for (double v : heads) row.push_back(round5(v));  // as the rest of the metrics file
      layers.push_back(row);
    }
    h[head_pattern_key(static_cast<HeadPattern>(p))].push_back(layers);
  }
}

}  // namespace sf
