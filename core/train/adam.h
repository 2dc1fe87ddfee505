// adam.h — Adam (Kingma & Ba 2015) with the lectures' β₁ 0.9, β₂ 0.98, ε 1e-9 (Vaswani §5.3), with
// bias correction, as torch.optim.Adam:
//   m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  p ← p − lr · (m / (1−β₁ᵗ)) / (√(v / (1−β₂ᵗ)) + ε)
// The moments are two Weights of the model's shape, walked with param_table like the parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "model/weights.h"

namespace sf {

// A batch's gradient as its shards left it, one Weights per shard (at least one): the gradient is their sum,
// taken in shard order (((g₀ + g₁) + g₂) …), times `scale` (a clip's factor; 1 without clip).
struct GradientSum {
  std::vector<Weights*> parts;
  float scale = 1.0f;
  // The next backward writes the Matrix tensors' gradients over the parts (model_backward with
  // matrices = Overwrite): the update leaves those as it found them and clears only the rest.
  bool matrices_overwritten = false;
};

struct Adam {
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  Weights m;      // first moment, same shape as the parameters
  Weights v;      // second moment
  int64_t t = 0;  // updates done

  void init(const Config& c);  // zero moments, t = 0
  // One update by the gradient, summed, measured and applied in one pass per tensor (the sum is
  // never stored), which leaves the parts zero, ready for the next step's backward to accumulate
  // into (no pass of its own to clear them) — but for the matrices when grads.matrices_overwritten. Returns Σ g² of
  // each tensor of param_table, for the unscaled sum: the same numbers as squared_norms. The tensors are shared between
  // n_threads cores (the same result on any count).
  std::vector<double> step(Weights& params, const GradientSum& grads, const Config& c, double lr, int n_threads = 1);
};

// Σ g² of every tensor of param_table of the unscaled sum, in its order, without storing the sum
// (a clip needs the norm before the update); tensors shared between n_threads cores.
std::vector<double> squared_norms(const GradientSum& grads, const Config& c, int n_threads = 1);
// Sets every gradient to zero (keeps the allocation).
void zero_grads(Weights& grads, const Config& c);

}  // namespace sf
