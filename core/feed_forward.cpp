#include "feed_forward.h"

#include <cmath>

#include "linear.h"

namespace sf {

void activation_forward(Activation a, Mat& x) {
  switch (a) {
    case Activation::Relu:
      x = x.cwiseMax(0.0f);
      break;
    case Activation::Gelu:
      // std::erf per element: exact to float rounding, like torch's erf-based GELU.
      x = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); });
      break;
  }
}

void feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x, Mat& out, FeedForwardTrace* tr) {
  Mat h;
  linear_forward(x, w.fc1, h);  // (n, dff)
  if (tr) tr->hidden_pre = h;
  activation_forward(a, h);
  linear_forward(h, w.fc2, out);  // (n, d)
  if (tr) {
    tr->hidden = std::move(h);
    tr->out = out;
  }
}

}  // namespace sf
