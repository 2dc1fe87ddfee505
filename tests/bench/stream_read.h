// stream_read.h — the host's streaming read rate: a plain float sum over a 512 MiB buffer (far
// larger than any L3 cache), `n` threads reading disjoint parts. host_limits_bench states it as a
// limit of the run; the cached decoding benchmarks measure it again beside each of their runs,
// since a shared host's memory bandwidth drifts by a third within minutes and a step's floor is
// the rate the memory gives at the time the step runs.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

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

// The best rate (bytes per second) of `passes` passes on n threads.
inline double stream_read_rate(int n, int passes = 3) {
  stream_buffer();  // filled, its pages faulted in, before any pass is timed
  std::vector<float> sums;
  double best = 0;
  for (int i = 0; i < passes; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    stream_pass(n, sums);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(stream_pass_bytes(n)) / s);
  }
  return best;
}

}  // namespace sf
