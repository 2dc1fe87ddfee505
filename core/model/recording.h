// recording.h — how much a run records: one choice per recording, set on the encoder's or the
// decoder's trace before the run and read by each sublayer's recording (spread_kind, trace.h).
#pragma once

#include <cstdint>

namespace sf {

enum class Recording : uint8_t {
  // Everything a view shows.
  Full,
  // A stepper Session's kept decoding steps, which Session::whole_trace restores: attentions
  // without raw scores or weights (Q, K and the mask give them back: head_attention), the
  // feed-forward only its output, logits only the last row, no
  // distributions. A long prefill then never holds what it would drop afterwards, even for a
  // moment.
  Compact,
  // A training step the probes skip: what the backward reads, not what only the views and the
  // probes show — no raw scores, attention or feed-forward outputs, sublayer outputs, residual
  // sums, LayerNorm outputs, post-LN block inputs (each repeats another matrix), ReLU's
  // pre-activation (its derivative reads the output) or distributions; block outputs only at the
  // end of a stack. A step then copies ~20 MB less, and its recording stays in L3 for the backward.
  Training,
};

}  // namespace sf
