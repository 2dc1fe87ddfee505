#include "reference/rms_norm.h"

#include <cmath>

namespace sf::ref {

Mat rms_norm(const Mat& x, const LayerNormWeights& w) {
  Mat y(x.rows(), x.cols());  // (n, d)
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const float mean_square = x.row(t).squaredNorm() / static_cast<float>(x.cols());
    y.row(t) = x.row(t).cwiseProduct(w.weight) / std::sqrt(mean_square + w.eps);
  }
  return y;
}

}  // namespace sf::ref
