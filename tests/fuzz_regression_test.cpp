// fuzz_regression_test.cpp — replays every input the fuzzers ever found a problem with
// (tests/fuzz/regressions/<harness>/) and every committed seed (tests/fuzz/corpus/<harness>/)
// through the very harness code of tests/fuzz/fuzz_<harness>.cpp, compiled into this binary under
// another name (tests/CMakeLists.txt). A crash, sanitizer report or abort fails the test; in the
// sanitizer build (scripts/test.sh) this is the same check libFuzzer makes.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"

extern "C" int sf_fuzz_safetensors(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_config(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_vocab(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_metrics(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_script(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_tokenizers(const uint8_t* data, size_t size);
extern "C" int sf_fuzz_hf_weights(const uint8_t* data, size_t size);

namespace sf {
namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Returns how many inputs were replayed.
size_t replay(const std::string& harness, int (*one)(const uint8_t*, size_t)) {
  size_t n = 0;
  for (const char* kind : {"regressions", "corpus"})
    for (const std::string& f : files_in(test::source_path("tests/fuzz/" + std::string(kind) + "/" + harness))) {
      SCOPED_TRACE(f);
      const std::string bytes = test::read_text(f);
      EXPECT_EQ(one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
      ++n;
    }
  return n;
}

TEST(FuzzRegression, Safetensors) { EXPECT_GE(replay("safetensors", sf_fuzz_safetensors), 10u); }
TEST(FuzzRegression, Config) { EXPECT_GE(replay("config", sf_fuzz_config), 5u); }
TEST(FuzzRegression, Vocab) { EXPECT_GE(replay("vocab", sf_fuzz_vocab), 4u); }
TEST(FuzzRegression, Metrics) { EXPECT_GE(replay("metrics", sf_fuzz_metrics), 3u); }
TEST(FuzzRegression, Script) { EXPECT_GE(replay("script", sf_fuzz_script), 4u); }
// The script seeds copied from docs/ are the scripts the docs run (an edited docs script is copied
// again), and every script the project ships — the docs' scripts and the built-in lessons — goes
// through the harness as it is.
TEST(FuzzRegression, ScriptSeedsMatchTheShippedScripts) {
  size_t copies = 0, shipped = 0;
  for (const std::string& f : files_in(test::source_path("tests/fuzz/corpus/script"))) {
    const std::string doc = test::source_path("docs/" + f.substr(f.find_last_of('/') + 1));
    if (access(doc.c_str(), R_OK) != 0) continue;
    EXPECT_EQ(test::read_text(f), test::read_text(doc)) << f << " differs from " << doc << ": copy it again";
    ++copies;
  }
  EXPECT_GE(copies, 3u);
  std::vector<std::string> scripts = files_in(test::source_path("assets/lessons"));
  for (const std::string& f : files_in(test::source_path("docs")))
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".txt") == 0) scripts.push_back(f);
  for (const std::string& f : scripts) {
    SCOPED_TRACE(f);
    const std::string bytes = test::read_text(f);
    EXPECT_EQ(sf_fuzz_script(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    ++shipped;
  }
  EXPECT_GE(shipped, 10u);
}

TEST(FuzzRegression, Tokenizers) { EXPECT_GE(replay("tokenizers", sf_fuzz_tokenizers), 6u); }
TEST(FuzzRegression, HfWeights) { EXPECT_GE(replay("hf_weights", sf_fuzz_hf_weights), 4u); }

}  // namespace
}  // namespace sf
