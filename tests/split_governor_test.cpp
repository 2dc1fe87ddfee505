// The split governor (base/split_governor.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "base/split_governor.h"

namespace sf {
namespace {

constexpr double kBusy = 10e-6;  // a split that starts 10 µs after the previous one: judged
constexpr double kIdle = 5e-3;   // one that starts 5 ms after: its threads were asleep

// Calls should_split n times and counts the splits it allows.
int splits_in(SplitGovernor& g, int n) {
  int splits = 0;
  for (int i = 0; i < n; ++i) splits += g.should_split() ? 1 : 0;
  return splits;
}

// Two slow splits in a row: the other thread waited 3 ms for a core each time.
void record_slow_pair(SplitGovernor& g) {
  g.record(kBusy, 3e-3, 40e-6, 2);
  g.record(kBusy, 3e-3, 40e-6, 2);
}

TEST(SplitGovernor, SplitsWhileSplitsPay) {
  SplitGovernor g;
  EXPECT_TRUE(g.should_split());
  // Two threads, 40 µs of work on the calling thread, the region 45 µs (the other half ran alongside).
  g.record(kBusy, 45e-6, 40e-6, 2);
  // A region that took the whole product's time plus a wake-up from a spin is not slow either.
  g.record(kBusy, 2 * 40e-6 + 150e-6, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 0);
  EXPECT_FALSE(g.backing_off());
  EXPECT_EQ(splits_in(g, 1000), 1000);
}

TEST(SplitGovernor, ASlowSplitAloneIsForgiven) {
  SplitGovernor g;
  for (int i = 0; i < 100; ++i) {
    g.record(kBusy, 3e-3, 40e-6, 2);   // slow
    g.record(kBusy, 45e-6, 40e-6, 2);  // paid
  }
  EXPECT_EQ(g.backoffs(), 0);
  EXPECT_EQ(splits_in(g, 1000), 1000);
}

TEST(SplitGovernor, BacksOffAfterSlowSplitsInARowAndTriesAgain) {
  SplitGovernor g;
  g.record(kBusy, 3e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 0);
  g.record(kBusy, 3e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 1);
  EXPECT_TRUE(g.backing_off());
  EXPECT_EQ(splits_in(g, SplitGovernor::kBackoff - 1), 0);  // the next kBackoff run on one thread
  EXPECT_TRUE(g.backing_off());
  EXPECT_FALSE(g.should_split());
  EXPECT_FALSE(g.backing_off());
  EXPECT_TRUE(g.should_split());  // then probes
}

TEST(SplitGovernor, BackOffsWithoutAPayingSplitDoubleTheWaitUpToTheMostAndAGoodOneResetsIt) {
  SplitGovernor g;
  int wait = SplitGovernor::kBackoff;
  for (int i = 0; i < 10; ++i) {
    record_slow_pair(g);
    EXPECT_EQ(g.backoffs(), i + 1);
    EXPECT_EQ(splits_in(g, wait), 0) << "back-off " << i;
    EXPECT_TRUE(g.should_split()) << "back-off " << i;
    wait = std::min(2 * wait, SplitGovernor::kMaxBackoff);
  }
  EXPECT_EQ(wait, SplitGovernor::kMaxBackoff);
  g.record(kBusy, 110e-6, 100e-6, 2);  // a split that paid
  record_slow_pair(g);                 // the next back-off waits kBackoff again
  EXPECT_EQ(splits_in(g, SplitGovernor::kBackoff), 0);
  EXPECT_TRUE(g.should_split());
}

TEST(SplitGovernor, ASplitAfterAnIdleSpellIsNotJudged) {
  SplitGovernor g;
  // Every step's first split waits for sleeping threads to wake: never a back-off.
  for (int i = 0; i < 100; ++i) g.record(kIdle, 12e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 0);
  // Nor does it break a row: a slow split, an unjudged one, a slow one make two in a row.
  g.record(kBusy, 3e-3, 40e-6, 2);
  g.record(kIdle, 12e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 0);
  g.record(kBusy, 3e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 1);
  // Just at the limit a split is still judged.
  SplitGovernor h;
  h.record(SplitGovernor::kIdleSeconds, 3e-3, 40e-6, 2);
  h.record(SplitGovernor::kIdleSeconds, 3e-3, 40e-6, 2);
  EXPECT_EQ(h.backoffs(), 1);
}

TEST(SplitGovernor, MoreThreadsAllowProportionallyLongerRegions) {
  SplitGovernor g;
  for (int i = 0; i < 2; ++i) g.record(kBusy, 3.5 * 100e-6, 100e-6, 4);  // one alone: 400 µs
  EXPECT_EQ(g.backoffs(), 0);
  for (int i = 0; i < 2; ++i) g.record(kBusy, 3.5 * 100e-6, 100e-6, 2);  // 200 µs + slack 400
  EXPECT_EQ(g.backoffs(), 0);
  for (int i = 0; i < 2; ++i) g.record(kBusy, 700e-6, 100e-6, 2);
  EXPECT_EQ(g.backoffs(), 1);
}

// record_split measures the gap from the end of the previous split it saw: slow splits back to
// back back off (the first, long after the clock's epoch, is not judged); slow splits 5 ms apart
// never do.
TEST(SplitGovernor, RecordSplitTakesTheGapFromThePreviousSplitsEnd) {
  using Clock = std::chrono::steady_clock;
  using std::chrono::microseconds;
  const Clock::time_point start{std::chrono::seconds(100)};
  SplitGovernor back_to_back, apart;
  Clock::time_point t = start;
  for (int i = 0; i < 3; ++i, t += microseconds(3010)) back_to_back.record_split(t, t + microseconds(3000), 40e-6, 2);
  EXPECT_EQ(back_to_back.backoffs(), 1);  // the second and third judged, both slow
  t = start;
  for (int i = 0; i < 10; ++i, t += microseconds(8000)) apart.record_split(t, t + microseconds(3000), 40e-6, 2);
  EXPECT_EQ(apart.backoffs(), 0);
}

}  // namespace
}  // namespace sf
