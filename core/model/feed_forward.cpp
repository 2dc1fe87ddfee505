#include "model/feed_forward.h"

#include <cmath>

#include "base/elementwise.h"
#include "base/threads.h"
#include "model/linear.h"

namespace sf {

namespace {

constexpr float kSqrt2OverPi = 0.79788456080286536f;  // √(2/π)
constexpr float kGeluCubic = 0.044715f;

// The derivative of GPT-2's "gelu_new" 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
float gelu_tanh_grad(float v) {
  const float t = std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
  return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
}
float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// y[0..n) = the activation of x[0..n) (y may be x), both aligned to a SIMD register's size (an
// aligned start runs the same floats through Eigen's vector path and its scalar tail as a whole
// matrix does).
void activate(Activation a, const float* x, float* y, Eigen::Index n) {
  const Eigen::Map<const Eigen::ArrayXf, Eigen::AlignedMax> v(x, n);
  Eigen::Map<Eigen::ArrayXf, Eigen::AlignedMax> out(y, n);
  switch (a) {
    case Activation::Relu:
      out = v.max(0.0f);
      break;
    case Activation::Gelu:
      // std::erf per element: exact to float rounding, like torch's erf-based GELU.
      out = v.unaryExpr([](float e) { return 0.5f * e * (1.0f + std::erf(e * 0.70710678118654752f)); });
      break;
    case Activation::GeluTanh:
      // Eigen's vectorised tanh and exp (a few ulp from std::tanh/std::exp) instead of one libm
      // call per element: the activation of a GPT-2 layer is 128 × 3072 of them.
      out = 0.5f * v * (1.0f + (kSqrt2OverPi * (v + kGeluCubic * v.cube())).tanh());
      break;
    case Activation::Swish:
      out = v / (1.0f + (-v).exp());
      break;
  }
}

}  // namespace

void activation_forward(Activation a, const Mat& x, Mat& y) {
  // A large block is split between the cores in runs of whole 64-float lines: each run starts
  // aligned and all but the last are whole registers long, so every float takes the same path
  // (vector or scalar tail) as on one core: the same bits. (The exact GELU's erf runs per element:
  // a 1,024-token GPT-2 layer's is 3 M of them.)
  y.resize(x.rows(), x.cols());  // (nothing to do when y is x)
  split_pass(x.size(), 1, 64, [&](int64_t i0, int64_t i1) { activate(a, x.data() + i0, y.data() + i0, i1 - i0); });
}

void activation_forward(Activation a, Mat& x) { activation_forward(a, x, x); }

namespace {

// down(act(gate(x)) ⊙ up(x)), forward only.
void gated_feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x, Mat& out, FeedForwardTrace* tr) {
  Mat g;                                    // (n, dff)
  if (tr && tr->kind == Recording::Full) {  // the recording's matrices are the products' own outputs
    linear_forward_same_input(x, {{&w.gate, &tr->gate_pre}, {&w.fc1, &tr->up}});
    activation_forward(a, tr->gate_pre, tr->gate);
    multiply(tr->gate, tr->up, g);
  } else {
    Mat u;  // (n, dff)
    linear_forward_same_input(x, {{&w.gate, &g}, {&w.fc1, &u}});
    activation_forward(a, g);
    multiply(g, u, g);
  }
  linear_forward(g, w.fc2, out);  // (n, d)
  if (tr) {
    if (tr->kind != Recording::Compact) tr->hidden = std::move(g);
    tr->out = out;
  }
}

}  // namespace

void feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x, Mat& out, FeedForwardTrace* tr) {
  if (w.kind == Mlp::Gated) return gated_feed_forward(w, a, x, out, tr);
  Mat h;  // (n, dff)
  // A full recording keeps the pre-activation (a training one, ReLU's derivative reading its
  // output instead); without it a ReLU runs in fc1's product, as each tile is stored.
  const bool keep_pre =
      tr && (tr->kind == Recording::Full || (tr->kind == Recording::Training && a != Activation::Relu));
  const bool fused = a == Activation::Relu && !keep_pre;
  if (keep_pre) {  // fc1's product straight into the recording, the activation out of place
    linear_forward(x, w.fc1, tr->hidden_pre);
    activation_forward(a, tr->hidden_pre, h);
  } else {
    linear_forward(x, w.fc1, h, fused ? Epilogue::relu() : Epilogue{});
    if (!fused) activation_forward(a, h);
  }
  linear_forward(h, w.fc2, out);  // (n, d)
  if (tr) {
    if (tr->kind != Recording::Compact) tr->hidden = std::move(h);
    if (tr->kind != Recording::Training) tr->out = out;
  }
}

void activation_backward(Activation a, const Mat& hidden_pre, Mat& d_hidden) {
  switch (a) {
    case Activation::Relu:
      d_hidden = (hidden_pre.array() > 0.0f).select(d_hidden, 0.0f);
      break;
    case Activation::Gelu:
      d_hidden.array() *= hidden_pre.array().unaryExpr([](float v) {
        const float cdf = 0.5f * (1.0f + std::erf(v * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * std::exp(-0.5f * v * v);
        return cdf + v * pdf;
      });
      break;
    case Activation::GeluTanh:
      d_hidden.array() *= hidden_pre.array().unaryExpr([](float v) { return gelu_tanh_grad(v); });
      break;
    case Activation::Swish:
      d_hidden.array() *= hidden_pre.array().unaryExpr([](float v) {
        const float s = sigmoid(v);
        return s + v * s * (1.0f - s);
      });
      break;
  }
}

void feed_forward_backward(const FeedForwardWeights& w, Activation a, const Mat& x, const FeedForwardTrace& tr,
                           const Mat& dout, FeedForwardWeights& g, Mat& dx, GemmOut dw_out) {
  Mat dh;  // (n, dff)
  // ReLU's derivative is 1 where fc1(x) > 0, which is where ReLU(fc1(x)) > 0 (a training
  // recording keeps only the latter): a gate on dh as its product stores it.
  if (a == Activation::Relu) {
    linear_backward(tr.hidden, w.fc2, dout, g.fc2, &dh, GemmOut::Overwrite, Epilogue::relu_gate(tr.hidden), dw_out);
  } else {
    linear_backward(tr.hidden, w.fc2, dout, g.fc2, &dh, GemmOut::Overwrite, {}, dw_out);
    activation_backward(a, tr.hidden_pre, dh);
  }
  linear_backward(x, w.fc1, dh, g.fc1, &dx, GemmOut::Overwrite, {}, dw_out);
}

}  // namespace sf
