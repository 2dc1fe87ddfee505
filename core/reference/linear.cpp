#include "reference/linear.h"

#include "reference/half_linear.h"

namespace sf::ref {

Mat linear(const Mat& x, const Linear& l) {
  if (l.storage() != WeightStorage::F32) return half_linear(x, l.half, l.bias);  // a 16-bit checkpoint's weight
  Mat y = x * weight(l).transpose();                                             // (n, out)
  y.rowwise() += l.bias;                                                         // + b on every token
  return y;
}

}  // namespace sf::ref
