// phase_timer.h — where a training step's time goes, by phase (the products by kind, softmax,
// LayerNorm, Adam, recording copies, allocation, …).
//
// The code marks a phase with a ScopedPhase; a phase nested in another pauses it, so every
// moment of a counting thread goes to the innermost phase it is in (exclusive times), and time
// outside every scope is not counted at all. Off (the default) a scope costs one relaxed load and
// a branch; on, a time-stamp counter read (~20 ns) at entry and exit: the thread's CPU clock
// would cost a system call (~1 µs), too much for the ~10,000 scopes of a training step. On a
// shared machine a preempted thread's wall time goes to the phase it was in; preemptions land in
// proportion to the time spent in each phase, so the fractions stay meaningful, and a caller
// scales them to the thread's CPU time (tests/bench/train_breakdown_bench.cpp).
//
// Counts are per thread (up to kMaxThreads threads; more count nothing) and summed by totals().
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace sf {

enum class Phase : uint8_t {
  Rest,               // inside a step, in none of the phases below
  ProjectionForward,  // y = x Wᵀ + b: Q, K, V, O, fc1, fc2, the generator
  HeadsForward,       // an attention head's Q_h K_hᵀ and P V_h
  InputGradient,      // dx = dy W
  WeightGradient,     // dW = dyᵀ x
  HeadsBackward,      // an attention head's dP, dV, dQ and dK
  Transpose,          // K (forward) and V (backward) transposed once per attention layer
  Softmax,            // masked softmax of the scores
  SoftmaxBackward,    // dS = P ⊙ (dP − Σ dP ⊙ P)
  LayerNorm,          // LayerNorm forward
  LayerNormBackward,  // LayerNorm backward, its parameter gradients included
  BiasGradient,       // a linear layer's bias gradient (sums of dy's rows)
  Loss,               // cross-entropy and its gradient
  Embedding,          // embeddings and their gradients, attention masks
  RecordingCopy,      // copies a training recording keeps (masks, stack outputs, logits)
  Adam,               // the shards' gradients summed, their norms, the Adam update
  Batch,              // sampling the batch and splitting it into shards
  Allocation,         // malloc and free (counted when the program wraps them)
  Count,
};
constexpr int kPhaseCount = static_cast<int>(Phase::Count);

// A phase's name as the breakdown prints it ("softmax backward").
const char* phase_name(Phase p);

namespace phase_detail {
extern std::atomic<bool> on;
// The calling thread enters p; returns the phase it leaves (kPhaseCount: outside every phase).
int enter(Phase p);
void leave(int previous);
}  // namespace phase_detail

// Whether phases are being counted.
inline bool phases_on() { return phase_detail::on.load(std::memory_order_relaxed); }

// Clears every thread's counts and starts counting; stop() stops. Call both between steps, with
// no thread inside a scope.
void start_phases();
void stop_phases();

struct PhaseTotals {
  std::array<double, kPhaseCount> seconds{};  // summed over threads (wall time inside the phase)
  std::array<uint64_t, kPhaseCount> entries{};
  int threads = 0;  // threads that counted
};
// The counts since start_phases().
PhaseTotals phase_totals();

// Counts the enclosing scope's time to phase p (nothing when counting is off).
class ScopedPhase {
 public:
  explicit ScopedPhase(Phase p) {
    if (phases_on()) previous_ = phase_detail::enter(p);
  }
  ~ScopedPhase() {
    if (previous_ >= 0) phase_detail::leave(previous_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace sf
