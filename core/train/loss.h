// loss.h — token-level cross-entropy with label smoothing (Szegedy et al. 2016; Vaswani §5.4),
// exactly torch.nn.functional.cross_entropy(logits, y, ignore_index=<pad>, label_smoothing=ε,
// reduction='mean'):
//
//   per non-pad target row:  ℓ = (1 − ε)·(−log p_y) + ε · mean_j(−log p_j),   p = softmax(logits)
//   loss = Σ ℓ / (number of non-pad rows)
//   dℓ/dlogits = p − (1 − ε)·onehot(y) − ε/V      (then divided by the same count)
#pragma once

#include <vector>

#include "base/tensor.h"

namespace sf {

struct LossResult {
  double loss = 0;  // mean over counted rows (0 when none)
  double sum = 0;   // Σ ℓ over counted rows
  int count = 0;    // non-pad target rows
  int correct = 0;  // counted rows whose argmax equals the target (teacher-forced accuracy)
};

// logits (N, V), targets (N) with `pad` meaning "not counted". When dlogits is given it is
// written (=) as d(Σ ℓ / normaliser)/dlogits; normaliser 0 means "this call's own count" (pass the
// whole batch's count when a batch is split across threads). Pad rows get zero grad.
LossResult cross_entropy(const Mat& logits, const std::vector<int>& targets, int pad, float smoothing,
                         Mat* dlogits = nullptr, int normaliser = 0);

}  // namespace sf
