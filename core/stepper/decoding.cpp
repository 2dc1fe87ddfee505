#include "stepper/decoding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "model/encoder.h"

namespace sf {

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::Greedy:
      return "greedy";
    case Strategy::Sample:
      return "sample";
    case Strategy::Beam:
      return "beam";
    case Strategy::Forced:
      return "forced";
  }
  return "?";
}

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Token order used everywhere a ranking is made: larger value first, lower id on a tie, so every
// choice is deterministic.
std::vector<int> ranked(const RowVec& values) {
  std::vector<int> ids(static_cast<size_t>(values.size()));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return values(a) > values(b); });
  return ids;
}

RowVec log_softmax(const RowVec& logits) {
  const float mx = logits.maxCoeff();
  const float lse = mx + std::log((logits.array() - mx).exp().sum());
  return (logits.array() - lse).matrix();
}

}  // namespace

Result<bool> validate(const DecodeSettings& s, const Model& m) {
  const int V = m.config.tgt_vocab.size();
  if (s.max_len < 0)
    return Error{"max length: expected a count ≥ 0 (0 = as many as the model allows), found " +
                 std::to_string(s.max_len)};
  switch (s.strategy) {
    case Strategy::Sample:
      if (!(s.temperature > 0) || !std::isfinite(s.temperature))
        return Error{"temperature: expected a finite value > 0 (use greedy decoding for the argmax), found " +
                     num(s.temperature)};
      if (s.top_k < 0 || s.top_k > V)
        return Error{"top-k: expected 0 (keep all) .. " + std::to_string(V) + " (the vocabulary size), found " +
                     std::to_string(s.top_k)};
      if (!(s.top_p > 0) || s.top_p > 1)
        return Error{"top-p: expected a probability mass in (0, 1], found " + num(s.top_p)};
      break;
    case Strategy::Beam: {
      const int most = std::min(kMaxBeamWidth, V);
      if (s.beam_width < 1 || s.beam_width > most)
        return Error{"beam width: expected 1 .. " + std::to_string(most) + " (at most " +
                     std::to_string(kMaxBeamWidth) + " and at most the vocabulary size " + std::to_string(V) +
                     "), found " + std::to_string(s.beam_width)};
      break;
    }
    case Strategy::Greedy:
    case Strategy::Forced:
      break;
  }
  return true;
}

int generation_limit(const Model& m, int prefix_len, const DecodeSettings& s) {
  const int by_positions = std::max(0, m.config.max_len - prefix_len + 1);
  return s.max_len > 0 ? std::min(s.max_len, by_positions) : by_positions;
}

std::vector<Alternative> top_alternatives(const RowVec& logits, int n) {
  const RowVec lp = log_softmax(logits);
  const std::vector<int> order = ranked(logits);
  std::vector<Alternative> out;
  for (int i = 0; i < std::min<int>(n, static_cast<int>(order.size())); ++i) {
    const int id = order[static_cast<size_t>(i)];
    out.push_back({id, std::exp(lp(id)), lp(id)});
  }
  return out;
}

std::vector<MaskedPrediction> masked_predictions(const std::vector<int>& ids, const Mat& logits, int mask, int k,
                                                 int also) {
  std::vector<MaskedPrediction> out;
  for (int i = 0; i < static_cast<int>(ids.size()) && i < logits.rows(); ++i) {
    const int id = ids[static_cast<size_t>(i)];
    if (id != mask && i != also) continue;
    out.push_back({i, id, id == mask, top_alternatives(logits.row(i), k)});
  }
  return out;
}

int argmax(const RowVec& logits) {
  int best = 0;
  for (int i = 1; i < logits.size(); ++i)
    if (logits(i) > logits(best)) best = i;
  return best;
}

namespace {

// softmax(logits / T) in ranked order and what top-k then top-p keep of it: the distribution
// sample_token draws from and sampling_table shows.
struct Narrowed {
  std::vector<int> order;  // token ids, most likely first
  std::vector<double> p;   // (V) softmax(logits / T) in that order
  size_t kept = 0;         // order[0 .. kept) survive top-k and top-p
  double mass = 0;         // their mass under p (before renormalising)
};

Narrowed narrow(const RowVec& logits, const DecodeSettings& s) {
  Narrowed n;
  n.order = ranked(logits);
  const size_t V = n.order.size();
  // In double so the cut-offs do not depend on summation noise.
  const double mx = logits(n.order[0]);
  n.p.resize(V);
  double total = 0;
  for (size_t i = 0; i < V; ++i) total += n.p[i] = std::exp((logits(n.order[i]) - mx) / s.temperature);
  for (double& x : n.p) x /= total;

  // top-k, then top-p on the top-k distribution renormalised (the order Hugging Face applies).
  size_t kept = s.top_k > 0 ? std::min(V, static_cast<size_t>(s.top_k)) : V;
  const double k_mass = std::accumulate(n.p.begin(), n.p.begin() + static_cast<std::ptrdiff_t>(kept), 0.0);
  if (s.top_p < 1) {
    double cum = 0;
    size_t m = 0;
    while (m < kept) {
      cum += n.p[m++] / k_mass;
      if (cum >= s.top_p) break;
    }
    kept = std::max<size_t>(m, 1);
  }
  n.kept = kept;
  n.mass = std::accumulate(n.p.begin(), n.p.begin() + static_cast<std::ptrdiff_t>(kept), 0.0);
  return n;
}

}  // namespace

int sample_token(const RowVec& logits, const DecodeSettings& s, Rng& rng, SampleInfo* info) {
  const Narrowed n = narrow(logits, s);
  const float u = rng.uniform();
  double cum = 0;
  size_t pick = n.kept - 1;  // rounding can leave u·mass just above the last partial sum
  for (size_t i = 0; i < n.kept; ++i) {
    cum += n.p[i];
    if (u * n.mass < cum) {
      pick = i;
      break;
    }
  }
  if (info) *info = {static_cast<int>(n.kept), static_cast<float>(n.mass), u, static_cast<float>(n.p[pick] / n.mass)};
  return n.order[pick];
}

SamplingTable sampling_table(const RowVec& logits, const DecodeSettings& s, int rows, int also) {
  const Narrowed n = narrow(logits, s);
  DecodeSettings plain = s;
  plain.temperature = 1;
  const Narrowed raw = narrow(logits, plain);  // the same ranking; softmax at T = 1
  SamplingTable t;
  t.kept = static_cast<int>(n.kept);
  t.kept_mass = static_cast<float>(n.mass);
  t.temperature = s.temperature;
  const auto row = [&](size_t i) {
    const bool kept = i < n.kept;
    return SamplingRow{n.order[i], static_cast<float>(raw.p[i]), static_cast<float>(n.p[i]),
                       kept ? static_cast<float>(n.p[i] / n.mass) : 0.0f, kept};
  };
  const size_t V = n.order.size();
  for (size_t i = 0; i < V && static_cast<int>(i) < std::max(0, rows); ++i) t.rows.push_back(row(i));
  if (also >= 0 && std::none_of(t.rows.begin(), t.rows.end(), [&](const SamplingRow& r) { return r.id == also; }))
    for (size_t i = 0; i < V; ++i)
      if (n.order[i] == also) t.rows.push_back(row(i));
  return t;
}

std::vector<Beam> beam_step(const std::vector<Beam>& beams, const std::vector<RowVec>& log_probs, int width, int eos,
                            std::vector<BeamCandidate>* candidates) {
  struct Entry {
    float score;
    int parent;
    int token;  // −1: a finished beam carried forward as is
    int candidate;
  };
  std::vector<Entry> pool;
  std::vector<BeamCandidate> cands;
  for (size_t b = 0; b < beams.size(); ++b) {
    if (beams[b].finished) {
      pool.push_back({beams[b].score, static_cast<int>(b), -1, -1});
      continue;
    }
    const RowVec& lp = log_probs[b];
    const std::vector<int> order = ranked(lp);
    for (int i = 0; i < std::min<int>(width, static_cast<int>(order.size())); ++i) {
      const int tok = order[static_cast<size_t>(i)];
      const float score = beams[b].score + lp(tok);
      pool.push_back({score, static_cast<int>(b), tok, static_cast<int>(cands.size())});
      cands.push_back({static_cast<int>(b), tok, score, false, tok == eos});
    }
  }
  std::stable_sort(pool.begin(), pool.end(), [](const Entry& a, const Entry& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.parent != b.parent) return a.parent < b.parent;
    return a.token < b.token;
  });
  std::vector<Beam> out;
  for (size_t i = 0; i < pool.size() && static_cast<int>(out.size()) < width; ++i) {
    const Entry& e = pool[i];
    Beam nb = beams[static_cast<size_t>(e.parent)];
    nb.parent = e.parent;
    if (e.token >= 0) {
      nb.tokens.push_back(e.token);
      nb.score = e.score;
      nb.finished = e.token == eos;
      cands[static_cast<size_t>(e.candidate)].kept = true;
    }
    out.push_back(std::move(nb));
  }
  if (candidates) *candidates = std::move(cands);
  return out;
}

void start_hypothesis(const Model& m, const std::vector<int>& prefix, bool use_cache, Hypothesis& h) {
  h.ids = prefix;
  if (use_cache)
    h.cache.reset(m.config.n_decoder_layers, m.config.max_len, m.config.d_kv());
  else
    h.cache = KvCache{};
}

Mat next_logits(const Model& m, const EncoderContext& enc, const std::vector<int>& ids, int batch, KvCache* cache,
                DecoderTrace* tr, const RunOptions& opt) {
  const int t = static_cast<int>(ids.size()) / batch;
  const int fed_len = cache ? t - cache->length : t;
  std::vector<int> fed;  // (B·fed_len) the rows not cached yet, sequence by sequence
  if (fed_len == t) {
    fed = ids;
  } else {
    for (int b = 0; b < batch; ++b)
      fed.insert(fed.end(), ids.begin() + static_cast<std::ptrdiff_t>(b * t + t - fed_len),
                 ids.begin() + static_cast<std::ptrdiff_t>((b + 1) * t));
  }
  // (B·fed_len, V), or a compact recording's last row only (decode)
  const Mat logits = decode(m, fed, batch, enc, cache, tr, opt);
  const Eigen::Index per = logits.rows() / batch;  // rows per sequence
  Mat last(batch, logits.cols());                  // (B, V)
  for (int b = 0; b < batch; ++b) last.row(b) = logits.row(b * per + per - 1);
  return last;
}

RowVec next_logits(const Model& m, const EncoderContext& enc, Hypothesis& h, bool use_cache, DecoderTrace* tr,
                   const RunOptions& opt) {
  return next_logits(m, enc, h.ids, 1, use_cache ? &h.cache : nullptr, tr, opt);
}

namespace {

// Greedy continuation of B decoder inputs of equal length (rows of `ids`, B·t ids).
std::vector<std::vector<int>> continue_greedy(const Model& m, const EncoderContext& enc, std::vector<int> ids,
                                              int batch, bool use_cache, int max_new) {
  const Config& c = m.config;
  KvCache cache;
  if (use_cache) cache.reset(c.n_decoder_layers, c.max_len, c.d_kv(), batch);
  std::vector<std::vector<int>> out(static_cast<size_t>(batch));
  std::vector<char> done(static_cast<size_t>(batch), 0);
  int len = static_cast<int>(ids.size()) / batch;
  // The last generated token is never fed, so positions allow one more token than max_len − len.
  for (int step = 0; step < max_new && len <= c.max_len; ++step, ++len) {
    const Mat logits = next_logits(m, enc, ids, batch, use_cache ? &cache : nullptr, nullptr);  // (B, V)
    std::vector<int> grown;  // (B·(len + 1)) every row extended by its argmax
    grown.reserve(static_cast<size_t>(batch * (len + 1)));
    bool all_done = true;
    for (int b = 0; b < batch; ++b) {
      const size_t bs = static_cast<size_t>(b);
      const int next = argmax(logits.row(b));
      if (!done[bs] && next == c.tgt_vocab.eos()) done[bs] = 1;
      if (!done[bs]) out[bs].push_back(next);
      all_done = all_done && done[bs];
      grown.insert(grown.end(), ids.begin() + b * len, ids.begin() + (b + 1) * len);
      grown.push_back(next);
    }
    if (all_done) break;
    ids = std::move(grown);
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> greedy_decode_batch(const Model& m, const std::vector<std::vector<int>>& inputs,
                                                  int max_new, bool use_cache) {
  const Config& c = m.config;
  std::vector<std::vector<int>> result(inputs.size());
  if (inputs.empty()) return result;
  if (c.has_encoder()) {
    size_t n = 0;
    for (auto& s : inputs) n = std::max(n, s.size());
    std::vector<int> src;  // (B·n) sources padded to the longest
    for (auto& s : inputs) {
      src.insert(src.end(), s.begin(), s.end());
      src.insert(src.end(), n - s.size(), c.src_vocab.pad());
    }
    const int B = static_cast<int>(inputs.size());
    const Mat memory = encode(m, src, B, nullptr);  // (B·n, d)
    return continue_greedy(m, {&memory, &src}, std::vector<int>(static_cast<size_t>(B), c.tgt_vocab.bos()), B,
                           use_cache, max_new);
  }
  // Decoder-only: prompts of different lengths would need left padding, which shifts positions;
  // decode each prompt length as its own batch instead.
  std::map<size_t, std::vector<size_t>> by_len;
  for (size_t i = 0; i < inputs.size(); ++i) by_len[inputs[i].size()].push_back(i);
  for (auto& [len, idx] : by_len) {
    std::vector<int> ids;  // (B·(len + 1)) <s> + prompt per sequence
    for (size_t i : idx) {
      const std::vector<int> prefix = with_bos(c.tgt_vocab, inputs[i]);
      ids.insert(ids.end(), prefix.begin(), prefix.end());
    }
    auto outs = continue_greedy(m, {}, std::move(ids), static_cast<int>(idx.size()), use_cache, max_new);
    for (size_t k = 0; k < idx.size(); ++k) result[idx[k]] = std::move(outs[k]);
  }
  return result;
}

}  // namespace sf
