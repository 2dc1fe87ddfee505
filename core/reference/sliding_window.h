// sliding_window.h — the banded causal mask of a sliding-window decoder (Mistral).
#pragma once

#include "base/tensor.h"

namespace sf::ref {

// Jiang et al. 2023, "Mistral 7B", sliding window attention: query i (at position q_offset + i)
// sees key j only if q_offset + i − W < j ≤ q_offset + i, its W most recent tokens itself
// included; everything else gets −∞.
Mat sliding_window_mask(int n_q, int n_k, int window, int q_offset = 0);  // (n_q, n_k)

}  // namespace sf::ref
