// threads.h — how many cores inference uses on the calling thread.
//
// The matrix products (base/gemm.h, model/linear.cpp) split over OpenMP threads when the build has
// OpenMP; the count is OpenMP's per-thread setting, so the CLI's main thread, the GUI's worker and
// each training shard choose their own without touching each other. A thread that has not chosen
// takes the process default at its first product: one core in the library (so tests running side
// by side do not oversubscribe the machine), every core in the stepformer executable (`--threads
// N`). A result does not depend on the thread count beyond float rounding (gemm's not at all:
// it accumulates every output element in one order whatever the count).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>

namespace sf {

// Logical cores of the machine (≥ 1).
int hardware_threads();

// Threads for the products the calling thread runs from now on; n ≤ 0 means every core.
// Without OpenMP in the build this does nothing and threads() stays 1.
void set_threads(int n);
// The calling thread's count; applies the process default first when the thread has not chosen.
// Every product entry point (gemm, matmul_transposed) calls it before it splits the work.
int threads();

// The process's choice (`--threads N`, 0 = every core): applied to the calling thread and taken by
// every thread that has not chosen (at its first product, or with apply_default_threads()).
void set_default_threads(int n);
void apply_default_threads();

// Parses a `--threads` value: an integer 0 .. 1024 (0: every core). Returns false on anything else.
bool parse_threads(const char* text, int& n);

// Sets the calling thread's count for a scope (a training shard runs single-threaded).
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : saved_(threads()) { set_threads(n); }
  ~ScopedThreads() { set_threads(saved_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

// Carries an exception out of an OpenMP region, where one thrown would end the process (a
// std::bad_alloc in a training shard, say): run(f) calls f and keeps the first exception any
// thread throws; rethrow() throws it on the thread that opened the region, after the region.
class RegionErrors {
 public:
  template <typename F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mu_;
  std::exception_ptr first_;
};

// A pass over memory (an element-wise operation, a normalisation row by row) splits between the
// cores from this many floats: a region costs a few microseconds, about what one core takes for a
// pass over 16,000 floats, so a pass splits when each core's half is several times that.
constexpr int64_t kSplitPassFloats = int64_t{1} << 16;

// Threads for such a pass over `floats` floats: the calling thread's count when the pass is large
// enough and the caller is outside any parallel region, else 1.
int pass_threads(int64_t floats);

// Splits [0, n) between T threads, one share each, every share but the last a whole number of
// `block`s (whole cache lines, panels or SIMD runs, so that no element's result depends on the
// split): body(t, i0, i1) runs on thread t for its share [i0, i1), which may be empty.
template <typename Body>
void for_each_share(int64_t n, int T, int64_t block, const Body& body) {
  const int64_t per_thread = (n / block + T - 1) / T * block;
#ifdef _OPENMP
#pragma omp parallel for num_threads(T) schedule(static, 1)
#endif
  for (int t = 0; t < T; ++t) {
    const int64_t i0 = std::min(n, t * per_thread);
    const int64_t i1 = t == T - 1 ? n : std::min(n, i0 + per_thread);
    body(t, i0, i1);
  }
}

// A pass over n items of `item_floats` floats each (rows, or single floats): body(i0, i1) runs for
// shares [i0, i1) of whole `block`s on pass_threads(n · item_floats) threads, or once for [0, n).
// Each item's result must not depend on the share it falls in (rows computed alone, element-wise
// operations on whole SIMD runs): then the split gives the one-core bits.
template <typename Body>
void split_pass(int64_t n, int64_t item_floats, int64_t block, const Body& body) {
  const int T = pass_threads(n * item_floats);
  if (T <= 1) return body(int64_t{0}, n);
  for_each_share(n, T, block, [&](int, int64_t i0, int64_t i1) {
    if (i1 > i0) body(i0, i1);
  });
}

}  // namespace sf
