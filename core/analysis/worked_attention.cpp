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

}  // namespace sf
