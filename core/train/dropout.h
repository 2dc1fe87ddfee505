// dropout.h — dropout masks for training (Srivastava et al. 2014; Vaswani §5.4 applies it to each
// sublayer's output before the residual add and to the embedding sums).
#pragma once

#include <cstdint>

#include "model/config.h"
#include "model/trace.h"

namespace sf {

// Dropout (training only): draws residual and embedding dropout masks (keep with probability
// 1 − p, scaled by 1/(1 − p)) into a trace before its forward run, for B sequences of n source and
// m target tokens. The forward applies them and the backward reads them from the trace.
void draw_dropout_masks(Trace& t, const Config& c, int batch, int n, int m, float p, uint64_t seed);

}  // namespace sf
