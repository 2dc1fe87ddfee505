// What the executable sets as it starts (base/startup.h): how long OpenMP's threads spin and glibc's
// heap on huge pages, each unless the user chose otherwise.
#include "base/startup.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_util.h"

namespace sf {
namespace {

TEST(HeapTunables, AddedToWhatTheUserSetUnlessTheUserChoseHugePages) {
  EXPECT_EQ(heap_tunables(nullptr, Arenas::One), "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
  EXPECT_EQ(heap_tunables("", Arenas::One), "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
  EXPECT_EQ(heap_tunables("glibc.malloc.check=3", Arenas::One),
            "glibc.malloc.check=3:glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
  // The user's arena count stays the only one.
  EXPECT_EQ(heap_tunables("glibc.malloc.arena_max=4", Arenas::One), "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1");
  // The user's own choice of huge pages, on or off, is left as it is.
  EXPECT_EQ(heap_tunables("glibc.malloc.hugetlb=0", Arenas::One), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(heap_tunables("glibc.malloc.check=3:glibc.malloc.hugetlb=2", Arenas::One),
            "glibc.malloc.check=3:glibc.malloc.hugetlb=2");
  // A name that merely ends in the word is another tunable.
  EXPECT_EQ(heap_tunables("x.glibc.malloc.hugetlb=0", Arenas::One),
            "x.glibc.malloc.hugetlb=0:glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
  // Training keeps glibc's arena per thread.
  EXPECT_EQ(heap_tunables(nullptr, Arenas::PerThread), "glibc.malloc.hugetlb=1");
}

// `stepformer --version` with the OpenMP runtime's settings displayed (OMP_DISPLAY_ENV) and `env` before it;
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

// How each runtime lists its spin setting under OMP_DISPLAY_ENV=verbose: LLVM's libomp (what a GCC
// build links when it is installed, and clang's sanitizer build) and GCC's libgomp.
struct SpinSetting {
  const char* variable;
  const char* ours;
  std::string shown(const std::string& value) const {
    return variable[0] == 'K' ? "KMP_BLOCKTIME='" + value + "'" : "GOMP_SPINCOUNT = '" + value + "'";
  }
};

TEST(OpenmpWait, TheExecutableRunsWithAShortSpinUnlessTheUserChoseOne) {
  std::string out, err;
  ASSERT_EQ(version_with_env("-u GOMP_SPINCOUNT -u KMP_BLOCKTIME -u OMP_WAIT_POLICY", out, err), 0);
  if (err.find("OPENMP DISPLAY ENVIRONMENT") == std::string::npos) GTEST_SKIP() << "stepformer built without OpenMP";
  const bool llvm = err.find("KMP_") != std::string::npos, gnu = err.find("GOMP_") != std::string::npos;
  ASSERT_NE(llvm, gnu) << "expected the settings of one OpenMP runtime, libomp's or libgomp's: " << err;
  const SpinSetting spin = llvm ? SpinSetting{"KMP_BLOCKTIME", kBlocktime} : SpinSetting{"GOMP_SPINCOUNT", kSpinCount};
  const std::string ours = spin.shown(spin.ours);
  EXPECT_NE(err.find(ours), std::string::npos) << err;
  EXPECT_EQ(out.find("stepformer"), out.rfind("stepformer")) << "printed once, by the program started again: " << out;

  ASSERT_EQ(version_with_env(std::string("-u OMP_WAIT_POLICY ") + spin.variable + "=777", out, err), 0);
  EXPECT_NE(err.find(spin.shown("777")), std::string::npos) << err;
  EXPECT_EQ(err.find(ours), std::string::npos) << err;

  ASSERT_EQ(version_with_env(std::string("-u ") + spin.variable + " OMP_WAIT_POLICY=passive", out, err), 0);
  EXPECT_EQ(err.find(ours), std::string::npos) << err;
  EXPECT_NE(out.find("stepformer"), std::string::npos);
}

}  // namespace
}  // namespace sf
