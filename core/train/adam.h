// adam.h — Adam (Kingma & Ba 2015) with the seeds' β₁ 0.9, β₂ 0.98, ε 1e-9 (Vaswani §5.3), with
// bias correction, as torch.optim.Adam:
//   m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  p ← p − lr · (m / (1−β₁ᵗ)) / (√(v / (1−β₂ᵗ)) + ε)
// The moments are two Weights of the model's shape, walked with param_table like the parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "model/weights.h"

namespace sf {

struct Adam {
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  Weights m;      // first moment, same shape as the parameters
  Weights v;      // second moment
  int64_t t = 0;  // updates done

  void init(const Config& c);  // zero moments, t = 0
  // One update; the tensors are shared between n_threads cores (the same result on any count).
  void step(Weights& params, const Weights& grads, const Config& c, double lr, int n_threads = 1);
};

// Σ x² over n floats, summed in double.
double squared_norm(const float* data, int64_t n);
// Σ g² of every tensor of param_table(grads, c), in its order (tensors shared between n_threads cores).
std::vector<double> squared_norms(const Weights& grads, const Config& c, int n_threads = 1);
// √(Σ g²) over every parameter gradient.
double grad_norm(const Weights& grads, const Config& c);
// Scales every gradient by `factor`.
void scale_grads(Weights& grads, const Config& c, float factor);
// Sets every gradient to zero (keeps the allocation).
void zero_grads(Weights& grads, const Config& c);
// a += b over every parameter (tensors shared between n_threads cores).
void add_grads(Weights& a, const Weights& b, const Config& c, int n_threads = 1);

}  // namespace sf
