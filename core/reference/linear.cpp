#include "reference/linear.h"

namespace sf::ref {

Mat linear(const Mat& x, const Linear& l) {
  Mat y = x * l.weight.transpose();  // (n, out)
  y.rowwise() += l.bias;             // + b on every token
  return y;
}

}  // namespace sf::ref
