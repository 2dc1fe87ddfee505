#include "reference/gated_feed_forward.h"

#include "reference/feed_forward.h"
#include "reference/linear.h"

namespace sf::ref {

Mat gated_feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x) {
  const Mat gate = activation(a, linear(x, w.gate));  // (n, d_ff)
  const Mat up = linear(x, w.fc1);                    // (n, d_ff)
  return linear(gate.cwiseProduct(up), w.fc2);        // (n, d)
}

}  // namespace sf::ref
