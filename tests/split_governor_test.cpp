// The split governor (base/split_governor.h).
#include <gtest/gtest.h>

#include "base/split_governor.h"

namespace sf {
namespace {

// Calls should_split n times and counts the splits it allows.
int splits_in(SplitGovernor& g, int n) {
  int splits = 0;
  for (int i = 0; i < n; ++i) splits += g.should_split() ? 1 : 0;
  return splits;
}

TEST(SplitGovernor, SplitsWhileSplitsPay) {
  SplitGovernor g;
  EXPECT_TRUE(g.should_split());
  // Two threads, 40 µs of work on the calling thread, the region 45 µs (the other half ran alongside).
  g.record(45e-6, 40e-6, 2);
  // A region that took the whole product's time plus a wake-up from sleep is not slow either.
  g.record(2 * 40e-6 + 150e-6, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 0);
  EXPECT_EQ(splits_in(g, 1000), 1000);
}

TEST(SplitGovernor, BacksOffAfterASlowSplitAndTriesAgain) {
  SplitGovernor g;
  // The other thread waited 3 ms for a core: the region took far longer than 2 × the share.
  g.record(3e-3, 40e-6, 2);
  EXPECT_EQ(g.backoffs(), 1);
  EXPECT_EQ(splits_in(g, SplitGovernor::kBackoff), 0);  // the next kBackoff run on one thread
  EXPECT_TRUE(g.should_split());                        // then a probe
}

TEST(SplitGovernor, SlowProbesInARowDoubleTheWaitUpToTheMostAndAGoodOneResetsIt) {
  SplitGovernor g;
  int wait = SplitGovernor::kBackoff;
  for (int i = 0; i < 10; ++i) {
    g.record(5e-3, 100e-6, 2);
    EXPECT_EQ(splits_in(g, wait), 0) << "slow probe " << i;
    EXPECT_TRUE(g.should_split()) << "slow probe " << i;
    wait = std::min(2 * wait, SplitGovernor::kMaxBackoff);
  }
  EXPECT_EQ(wait, SplitGovernor::kMaxBackoff);
  g.record(110e-6, 100e-6, 2);  // a split that paid
  g.record(5e-3, 100e-6, 2);    // the next slow one waits kBackoff again
  EXPECT_EQ(splits_in(g, SplitGovernor::kBackoff), 0);
  EXPECT_TRUE(g.should_split());
}

TEST(SplitGovernor, MoreThreadsAllowProportionallyLongerRegions) {
  SplitGovernor g;
  g.record(3.5 * 100e-6, 100e-6, 4);  // four threads: one thread alone would take 400 µs
  EXPECT_EQ(g.backoffs(), 0);
  g.record(3.5 * 100e-6, 100e-6, 2);  // two: one alone would take 200 µs, plus the slack 400
  EXPECT_EQ(g.backoffs(), 0);
  g.record(700e-6, 100e-6, 2);
  EXPECT_EQ(g.backoffs(), 1);
}

}  // namespace
}  // namespace sf
