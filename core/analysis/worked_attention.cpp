// worked_attention.cpp — one query over a few keys, step by step (worked_attention.h).
#include "analysis/worked_attention.h"

#include <algorithm>
#include <cmath>

#include "base/tensor.h"
#include "model/attention.h"

namespace sf {

Result<WorkedAttention> worked_attention(const std::vector<float>& q, const std::vector<std::vector<float>>& keys,
                                         const std::vector<std::vector<float>>& values) {
  const size_t n = keys.size();
  if (q.empty()) return Error{"worked example: q is empty"};
  if (n == 0) return Error{"worked example: expected at least one key"};
  if (values.size() != n)
    return Error{"worked example: " + std::to_string(n) + " keys but " + std::to_string(values.size()) + " values"};
  for (size_t j = 0; j < n; ++j) {
    if (keys[j].size() != q.size())
      return Error{"worked example: k" + std::to_string(j + 1) + " has " + std::to_string(keys[j].size()) +
                   " components, q has " + std::to_string(q.size())};
    if (values[j].size() != values[0].size() || values[j].empty())
      return Error{"worked example: v" + std::to_string(j + 1) + " has " + std::to_string(values[j].size()) +
                   " components, v1 has " + std::to_string(values[0].size())};
  }
  WorkedAttention w;
  w.d_k = static_cast<int>(q.size());
  w.sqrt_dk = std::sqrt(static_cast<float>(w.d_k));
  Mat s(1, static_cast<Eigen::Index>(n));  // (1, n) the raw scores q·k_j
  for (size_t j = 0; j < n; ++j) {
    double d = 0;
    for (size_t c = 0; c < q.size(); ++c) d += static_cast<double>(q[c]) * keys[j][c];
    s(0, static_cast<Eigen::Index>(j)) = static_cast<float>(d);
    w.dots.push_back(static_cast<float>(d));
    w.scaled.push_back(static_cast<float>(d) / w.sqrt_dk);
  }
  w.max = *std::max_element(w.scaled.begin(), w.scaled.end());
  for (float x : w.scaled) {
    w.exps.push_back(std::exp(x - w.max));
    w.sum += w.exps.back();
  }
  // The weights come from the model's own softmax (scale folded in as in attention).
  masked_softmax(s, Mat::Zero(1, static_cast<Eigen::Index>(n)), 1.0f / w.sqrt_dk);
  w.out.assign(values[0].size(), 0.0f);
  for (size_t j = 0; j < n; ++j) {
    w.weights.push_back(s(0, static_cast<Eigen::Index>(j)));
    for (size_t c = 0; c < w.out.size(); ++c) w.out[c] += w.weights[j] * values[j][c];
  }
  return w;
}

AttentionCell attention_cell(const AttentionTrace& a, int head, int i, int j) {
  const size_t h = static_cast<size_t>(head);
  return attention_cell(a, a.raw_scores[h], a.weights[h], head, i, j);
}

AttentionCell attention_cell(const AttentionTrace& a, const Mat& raw, const Mat& weights, int head, int i, int j) {
  AttentionCell c;
  // raw × scale: the scaled score as the forward rounded it (AttentionTrace::score).
  const auto score = [&](Eigen::Index t) { return raw(i, t) * a.scale; };
  c.d_k = static_cast<int>(a.q.cols()) / a.n_heads;
  const int kvh = a.kv_head(head);
  for (int t = 0; t < c.d_k; ++t) {
    c.q.push_back(a.q(i, head * c.d_k + t));
    c.k.push_back(a.k(j, kvh * c.d_k + t));
    c.prod.push_back(c.q.back() * c.k.back());
    c.dot += c.prod.back();
  }
  c.raw = raw(i, j);
  c.sqrt_dk = std::sqrt(static_cast<float>(c.d_k));
  c.scaled = score(j);
  c.mask = a.masks[0](i, j);
  c.computed = !std::isnan(c.raw);
  c.masked = std::isinf(c.mask);
  c.weight = weights(i, j);
  // The softmax over the row: every key with a finite mask and a computed score.
  const Eigen::Index nk = weights.cols();
  const auto visible = [&](Eigen::Index t) { return std::isfinite(a.masks[0](i, t)) && std::isfinite(raw(i, t)); };
  c.row_max = -INFINITY;
  for (Eigen::Index t = 0; t < nk; ++t)
    if (visible(t)) c.row_max = std::max(c.row_max, score(t)), ++c.visible;
  for (Eigen::Index t = 0; t < nk; ++t)
    if (visible(t)) c.exp_sum += std::exp(score(t) - c.row_max);
  for (Eigen::Index t = 0; t < nk; ++t) c.row.push_back(std::isinf(a.masks[0](i, t)) ? a.masks[0](i, t) : score(t));
  if (c.computed && !c.masked && c.exp_sum > 0) {
    c.exp_cell = std::exp(c.scaled - c.row_max);
    c.softmax = c.exp_cell / c.exp_sum;
  }
  return c;
}

}  // namespace sf
