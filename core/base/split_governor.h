// split_governor.h — whether splitting the next small product between the cores pays.
//
// A product split between two threads takes as long as its later half: when the host's other
// core is busy (the explorer's drawing thread, a browser, a build), the second thread can wait a
// scheduler slice for a core while the first, done with its own half, spins at OpenMP's barrier.
// A cached decoding step splits 70–200 such products (each 10 µs – 1 ms of work), so on a busy
// host it ran several times slower on two threads than on one (GPT-2 small: 52 ms against 22 ms,
// one busy process beside it). The governor watches each split: when the region took longer than
// the calling thread's own share would have taken for every thread's rows, and by more than a
// wake-up from sleep takes, the split cost time. After kSlowInARow such splits in a row the next
// kBackoff products run on the calling thread alone; then a split is tried again, and each back-off
// without a paying split between doubles the wait (to kMaxBackoff products), since a slow probe
// costs as much as a slice.
//
// Two kinds of slow split say nothing about the host's other core, and are not held against it:
// - one that starts more than kIdleSeconds after the calling thread's previous split ended (the
//   first product of a step, after the user's pause or a sampling pass): the other threads have
//   gone to sleep (they spin 1 ms at most, base/startup.h) and waking one takes the kernel's
//   scheduler, 6–15 ms on a virtual machine; the caller says so and the split is not judged;
// - a lone slow split among paying ones: on an idle two-core virtual machine about one split in
//   500–1000 waits a millisecond or more (the hypervisor's own work), and backing off for each
//   ran most of a decoding step's products on one core (docs/benchmarks.md, "Decoding on two
//   cores").
// A cached step's other short regions (its one-query attention) split only while the governor is
// not backing off (model/linear.h, small_splits_pay). On an idle host every product splits. Which
// thread computes which rows never changes a value (model/linear.cpp).
#pragma once

#include <chrono>

namespace sf {

class SplitGovernor {
 public:
  // Products run unsplit after a back-off, and after the longest run of back-offs.
  static constexpr int kBackoff = 256;
  static constexpr int kMaxBackoff = 16384;
  // Slack beyond the unsplit time: a wake-up from a spin takes microseconds, a wait for a core a
  // slice (a millisecond or more).
  static constexpr double kSlackSeconds = 200e-6;
  // A split that starts longer than this after the previous one ended is not judged.
  static constexpr double kIdleSeconds = 100e-6;
  // Slow splits in a row that make the governor back off.
  static constexpr int kSlowInARow = 2;

  // Whether to split the next product (counts the products run unsplit while backing off).
  bool should_split() {
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }
  // After a split between n_threads threads that started `gap` seconds after the calling thread's
  // previous split ended: the region took `region` seconds, the calling thread `first_share` of
  // them on its own rows.
  void record(double gap, double region, double first_share, int n_threads) {
    if (gap > kIdleSeconds) return;
    if (region <= n_threads * first_share + kSlackSeconds) {
      slow_in_a_row_ = 0;
      backoff_ = kBackoff;
      return;
    }
    if (++slow_in_a_row_ < kSlowInARow) return;
    slow_in_a_row_ = 0;
    skip_ = backoff_;
    backoff_ = backoff_ < kMaxBackoff ? 2 * backoff_ : kMaxBackoff;
    ++backoffs_;
  }
  // After a split that ran from t0 to t1, the calling thread `first_share` seconds of it on its own
  // rows: record() with the time since the previous split this governor saw ended.
  void record_split(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point t1,
                    double first_share, int n_threads) {
    record(seconds_between(last_end_, t0), seconds_between(t0, t1), first_share, n_threads);
    last_end_ = t1;
  }
  bool backing_off() const { return skip_ > 0; }  // the next product runs unsplit
  int backoffs() const { return backoffs_; }      // back-offs so far (diagnostics, tests)

 private:
  int skip_ = 0;            // products still to run unsplit
  int backoff_ = kBackoff;  // the next back-off's wait
  int slow_in_a_row_ = 0;   // judged slow splits since the last paying one or back-off
  int backoffs_ = 0;
  std::chrono::steady_clock::time_point last_end_;  // when the previous split ended (the epoch before the first)

  static double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
};

}  // namespace sf
