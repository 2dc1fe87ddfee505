#include "reference/mask.h"

#include <limits>

namespace sf::ref {

namespace {
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
}

Mat padding_mask(int n_q, const std::vector<int>& key_ids, int pad) {
  Mat m = Mat::Zero(n_q, static_cast<Eigen::Index>(key_ids.size()));  // (n_q, n_k)
  for (size_t j = 0; j < key_ids.size(); ++j)
    if (key_ids[j] == pad) m.col(static_cast<Eigen::Index>(j)).setConstant(kMinusInfinity);
  return m;
}

Mat causal_mask(int n_q, int n_k, int q_offset) {
  Mat m = Mat::Zero(n_q, n_k);  // (n_q, n_k)
  for (int i = 0; i < n_q; ++i)
    for (int j = q_offset + i + 1; j < n_k; ++j) m(i, j) = kMinusInfinity;
  return m;
}

}  // namespace sf::ref
