// feed_forward.h — the position-wise feed-forward network fc2(act(fc1(x))) (Vaswani §3.3), or
// the gated one of Llama-style models (SwiGLU, Shazeer 2020): down(act(gate(x)) ⊙ up(x)), with
// up = fc1 and down = fc2 (FeedForwardWeights::kind chooses).
#pragma once

#include "model/config.h"
#include "model/recording.h"
#include "base/tensor.h"
#include "model/weights.h"

namespace sf {

struct FeedForwardTrace {
  // Set before the run. Compact: only `out`. Training: only what the backward reads, `hidden`, and
  // `hidden_pre` unless the activation is ReLU, whose derivative `hidden` gives.
  Recording kind = Recording::Full;
  Mat hidden_pre;  // (n, dff) fc1(x) (standard MLP only)
  Mat hidden;      // (n, dff) act(fc1(x)); gated: act(gate(x)) ⊙ up(x)
  Mat gate_pre;    // (n, dff) gated MLP: gate(x)
  Mat gate;        // (n, dff) gated MLP: act(gate(x))
  Mat up;          // (n, dff) gated MLP: up(x) = fc1(x)
  Mat out;         // (n, d)
};

// y = act(x), elementwise: ReLU; GELU in its exact erf form 0.5·x·(1 + erf(x/√2)) (PyTorch's
// default); GPT-2's tanh GELU 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))); Swish x·σ(x). The same
// bits in place or not, on any thread count.
void activation_forward(Activation a, const Mat& x, Mat& y);
// The same in place.
void activation_forward(Activation a, Mat& x);

void feed_forward(const FeedForwardWeights& w, Activation a, const Mat& x, Mat& out, FeedForwardTrace* tr);

// In place: d_hidden (n, dff) ⊙= act'(hidden_pre). ReLU' = [x > 0]; GELU' = Φ(x) + x·φ(x);
// tanh-GELU' = ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²); Swish' = σ + xσ(1 − σ).
void activation_backward(Activation a, const Mat& hidden_pre, Mat& d_hidden);

// Backward: x (n, d) the input the forward read, tr its recording, dout (n, d). Parameter grads
// accumulate into g (+=), the weight matrices' written instead with dw_out = Overwrite (see
// linear_backward); dx (n, d) is written (=).
void feed_forward_backward(const FeedForwardWeights& w, Activation a, const Mat& x, const FeedForwardTrace& tr,
                           const Mat& dout, FeedForwardWeights& g, Mat& dx, GemmOut dw_out = GemmOut::Accumulate);

}  // namespace sf
