#include "reference/layer_norm.h"

#include <cmath>

namespace sf::ref {

Mat layer_norm(const Mat& x, const LayerNormWeights& w) {
  Mat y(x.rows(), x.cols());  // (n, d)
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const float mean = x.row(t).mean();
    const float var = (x.row(t).array() - mean).square().mean();  // biased: ÷ d
    y.row(t) = (x.row(t).array() - mean) / std::sqrt(var + w.eps) * w.weight.array() + w.bias.array();
  }
  return y;
}

}  // namespace sf::ref
