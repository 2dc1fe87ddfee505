// feed_forward.h — the position-wise feed-forward network fc2(act(fc1(x))) (Vaswani §3.3).
#pragma once

#include "config.h"
#include "tensor.h"
#include "weights.h"

namespace sf {

struct FeedForwardTrace {
  Mat hidden_pre;  // (n, dff) fc1(x)
  Mat hidden;      // (n, dff) act(fc1(x))
  Mat out;         // (n, d)
};

// In place: ReLU, or GELU in its exact erf form 0.5·x·(1 + erf(x/√2)) (PyTorch's default).
void activation_forward(Activation a, Mat& x);

void feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x, Mat& out, FeedForwardTrace* tr);

}  // namespace sf
