#include "reference/sliding_window.h"

#include <limits>

namespace sf::ref {

Mat sliding_window_mask(int n_q, int n_k, int window, int q_offset) {
  Mat m(n_q, n_k);  // (n_q, n_k)
  for (int i = 0; i < n_q; ++i)
    for (int j = 0; j < n_k; ++j) {
      const int p = q_offset + i;
      m(i, j) = (j <= p && j > p - window) ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  return m;
}

}  // namespace sf::ref
