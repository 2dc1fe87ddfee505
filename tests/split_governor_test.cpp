// The split governor (base/split_governor.h) and the executable's OpenMP wait setting
// (base/threads.h tune_openmp_wait).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/split_governor.h"
#include "base/threads.h"
#include "test_util.h"

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

// `stepformer --version` with libgomp's settings displayed (OMP_DISPLAY_ENV) and `env` before it;
// stderr in err.
int version_with_env(const std::string& env, std::string& out, std::string& err) {
  const std::string outf = test::temp_path("omp_out.txt"), errf = test::temp_path("omp_err.txt");
  const int rc = std::system(("env " + env + " OMP_DISPLAY_ENV=verbose " + std::string(STEPFORMER_BINARY) +
                              " --version >" + outf + " 2>" + errf)
                                 .c_str());
  out = test::read_text(outf);
  err = test::read_text(errf);
  std::remove(outf.c_str());
  std::remove(errf.c_str());
  return rc;
}

TEST(OpenmpWait, TheExecutableRunsWithAShortSpinUnlessTheUserChoseOne) {
  std::string out, err;
  ASSERT_EQ(version_with_env("-u GOMP_SPINCOUNT -u OMP_WAIT_POLICY", out, err), 0);
  if (err.find("OPENMP DISPLAY ENVIRONMENT") == std::string::npos) GTEST_SKIP() << "stepformer built without OpenMP";
  // libgomp lists its GOMP_* settings; LLVM's runtime (clang's sanitizer build) has no spin count.
  if (err.find("GOMP_") == std::string::npos) GTEST_SKIP() << "the OpenMP runtime is not GCC's libgomp";
  const std::string ours = std::string("GOMP_SPINCOUNT = '") + kSpinCount + "'";
  EXPECT_NE(err.find(ours), std::string::npos) << err;
  EXPECT_EQ(out.find("stepformer"), out.rfind("stepformer")) << "printed once, by the program started again: " << out;

  ASSERT_EQ(version_with_env("-u OMP_WAIT_POLICY GOMP_SPINCOUNT=777", out, err), 0);
  EXPECT_NE(err.find("GOMP_SPINCOUNT = '777'"), std::string::npos) << err;
  EXPECT_EQ(err.find(ours), std::string::npos) << err;

  ASSERT_EQ(version_with_env("-u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive", out, err), 0);
  EXPECT_EQ(err.find(ours), std::string::npos) << err;
  EXPECT_NE(out.find("stepformer"), std::string::npos);
}

}  // namespace
}  // namespace sf
