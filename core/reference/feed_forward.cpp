#include "reference/feed_forward.h"

#include <cmath>

#include "reference/linear.h"

namespace sf::ref {

Mat relu(const Mat& x) { return x.cwiseMax(0.0f); }

Mat gelu_erf(const Mat& x) {
  return x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))); });
}

Mat gelu_tanh(const Mat& x) {
  const float c = std::sqrt(2.0f / 3.14159265358979f);  // √(2/π)
  return x.unaryExpr([c](float v) { return 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v))); });
}

Mat swish(const Mat& x) {
  return x.unaryExpr([](float v) { return v / (1.0f + std::exp(-v)); });
}

Mat activation(Activation a, const Mat& x) {
  switch (a) {
    case Activation::Relu:
      return relu(x);
    case Activation::Gelu:
      return gelu_erf(x);
    case Activation::GeluTanh:
      return gelu_tanh(x);
    case Activation::Swish:
      return swish(x);
  }
  return x;
}

Mat feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x) {
  const Mat hidden = activation(a, linear(x, w.fc1));  // (n, d_ff)
  return linear(hidden, w.fc2);                        // (n, d)
}

}  // namespace sf::ref
