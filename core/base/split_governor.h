// split_governor.h — whether splitting the next small product between the cores pays.
//
// A product split between two threads takes as long as its later half: when the host's other
// core is busy (the explorer's drawing thread, a browser, a build), the second thread can wait a
// scheduler slice for a core while the first, done with its own half, spins at OpenMP's barrier.
// A cached decoding step splits 70–200 such products (each 10 µs – 1 ms of work), so on a busy
// host it ran several times slower on two threads than on one (GPT-2 small: 52 ms against 22 ms,
// one busy process beside it). The governor watches each split: when the region took longer than
// the calling thread's own share would have taken for every thread's rows, and by more than a
// wake-up from sleep takes, the split cost time, and the next kBackoff products run on the calling
// thread alone; then a split is tried again, and each slow split in a row doubles the wait (to
// kMaxBackoff products), since a slow probe costs as much as a slice. On an idle host the other
// threads start within microseconds and every product splits. Which thread computes which rows
// never changes a value (model/linear.cpp).
#pragma once

namespace sf {

class SplitGovernor {
 public:
  // Products run unsplit after a slow split, and after the longest run of slow splits.
  static constexpr int kBackoff = 256;
  static constexpr int kMaxBackoff = 16384;
  // Slack beyond the unsplit time: a wake-up from sleep takes tens of microseconds, a wait for a
  // core a slice (a millisecond or more).
  static constexpr double kSlackSeconds = 200e-6;

  // Whether to split the next product (counts the products run unsplit while backing off).
  bool should_split() {
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }
  // After a split between n_threads threads: the region took `region` seconds, the calling thread
  // `first_share` of them on its own rows.
  void record(double region, double first_share, int n_threads) {
    if (region > n_threads * first_share + kSlackSeconds) {
      skip_ = backoff_;
      backoff_ = backoff_ < kMaxBackoff ? 2 * backoff_ : kMaxBackoff;
      ++backoffs_;
    } else {
      backoff_ = kBackoff;
    }
  }
  int backoffs() const { return backoffs_; }  // slow splits seen (diagnostics, tests)

 private:
  int skip_ = 0;            // products still to run unsplit
  int backoff_ = kBackoff;  // the next slow split's wait
  int backoffs_ = 0;
};

}  // namespace sf
