// stream_read.h — the host's streaming read rate: a plain float sum over a 512 MiB buffer (far
// larger than any L3 cache), `n` threads reading disjoint parts. host_limits_bench states it as a
// limit of the run; the cached decoding benchmarks measure it again between the steps of each of
// their runs (StreamBeside), since a step's floor is the rate the memory gives at the time the
// step runs, and a shared host's memory does not hold one rate: on the two-vCPU development host
// the two-thread rate moves between about 32 and 60 GB/s, within seconds.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sf {

constexpr int64_t kStreamFloats = int64_t{128} << 20;  // 512 MiB

// Runs body(thread index) on `n` threads (the calling thread is index 0) and waits for all.
template <class F>
void on_threads(int n, const F& body) {
  std::vector<std::thread> pool;
  for (int i = 1; i < n; ++i) pool.emplace_back([&body, i] { body(i); });
  body(0);
  for (std::thread& t : pool) t.join();
}

// The buffer, filled once (its pages faulted in before any pass is timed).
inline const std::vector<float>& stream_buffer() {
  static const std::vector<float> buf = [] {
    std::vector<float> b(static_cast<size_t>(kStreamFloats));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i & 1023) * 1e-3f;
    return b;
  }();
  return buf;
}

// One pass over the buffer on n threads; the partial sums land in sums (n of them).
inline void stream_pass(int n, std::vector<float>& sums) {
  const std::vector<float>& buf = stream_buffer();
  sums.resize(static_cast<size_t>(n));
  const int64_t part = kStreamFloats / n;
  on_threads(n, [&](int i) {
    const float* p = buf.data() + part * i;
    sums[static_cast<size_t>(i)] = Eigen::Map<const Eigen::VectorXf>(p, part).sum();
  });
}

// Bytes one pass reads (n threads read n equal parts).
inline int64_t stream_pass_bytes(int n) { return kStreamFloats / n * n * 4; }

// The streaming read between the steps of a run: after each step, one pass over the next 64 MiB
// of the buffer (twice the largest L3 this project meets) on the step's n threads — OpenMP's, so
// the step's next split finds them awake — timed apart from the step. Passes alternate between two
// ways of reading a thread's part: one sequential stream (a plain sum), and its four quarters side
// by side, the way the 16-bit matrix-vector product reads its rows (base/half.cpp), which one core
// reads up to a fifth faster on some hosts and slower on others. rate() is the faster way's bytes
// over its time: the memory's rate at the moments the steps ran, read as fast as either way reads.
class StreamBeside {
 public:
  explicit StreamBeside(int n) : n_(std::max(n, 1)) { stream_buffer(); }

  void pass() {
    static constexpr int64_t kFloats = int64_t{16} << 20;  // 64 MiB
    const float* from = stream_buffer().data() + next_;
    next_ = (next_ + kFloats) % kStreamFloats;
    const int64_t part = kFloats / n_, quarter = part / 4;
    const bool quarters = (passes_++ % 2) == 1;
    using Map = Eigen::Map<const Eigen::VectorXf>;
    float total = 0;
    const auto t0 = std::chrono::steady_clock::now();
#ifdef _OPENMP
#pragma omp parallel for num_threads(n_) schedule(static, 1) reduction(+ : total)
#endif
    for (int i = 0; i < n_; ++i) {
      const float* p = from + part * i;
      total += quarters ? (Map(p, quarter) + Map(p + quarter, quarter) + Map(p + 2 * quarter, quarter) +
                           Map(p + 3 * quarter, quarter))
                              .sum()
                        : Map(p, part).sum();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Way& w = quarters ? quarters_ : stream_;
    w.seconds += s;
    w.bytes += static_cast<double>((quarters ? 4 * quarter : part) * n_ * 4);
    sink_ += total;
  }
  // Bytes per second: the faster way's.
  double rate() const { return std::max(stream_.rate(), quarters_.rate()); }
  float sink() const { return sink_; }  // the sums, kept so that no pass is optimised away

 private:
  struct Way {
    double bytes = 0, seconds = 0;
    double rate() const { return seconds > 0 ? bytes / seconds : 0.0; }
  };
  int n_;
  int64_t next_ = 0;  // where the next pass starts, floats into the buffer
  int64_t passes_ = 0;
  Way stream_, quarters_;
  float sink_ = 0;
};

}  // namespace sf
