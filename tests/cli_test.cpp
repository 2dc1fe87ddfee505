// cli_test.cpp — the command line people expect: every subcommand answers -h/--help on stdout
// with exit 0, naming every option it accepts and giving an example; `--version`; unknown options
// exit 2 (bad usage) with the message on stderr; bad input exits 1. Runs the built binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Every option each command's Args accepts (app/cli/cmd_*.cpp). A new option must be added here
// and to the command's help, or this test fails.
const std::map<std::string, std::vector<std::string>> kOptions = {
    {"init", {"--config", "--seed", "--out"}},
    {"info", {}},
    {"trace", {"--model", "--src", "--tgt", "--out", "--no-pe", "--no-causal", "--only"}},
    {"walk", {"--model", "--src", "--tgt"}},
    {"decode",
     {"--model", "--src", "--tgt", "--temperature", "--top-k", "--top-p", "--seed", "--beam", "--max-len", "--out",
      "--greedy", "--sample", "--no-cache", "--no-pe", "--no-causal"}},
    {"steps",
     {"--model", "--src", "--tgt", "--temperature", "--top-k", "--top-p", "--seed", "--beam", "--max-len", "--greedy",
      "--sample", "--no-cache", "--no-pe", "--no-causal"}},
    {"train",
     {"--task",
      "--norm",
      "--arch",
      "--layers",
      "--encoder-layers",
      "--decoder-layers",
      "--d-model",
      "--heads",
      "--d-ff",
      "--activation",
      "--positional",
      "--warmup",
      "--factor",
      "--constant-lr",
      "--clip",
      "--label-smoothing",
      "--dropout",
      "--cooldown",
      "--batch",
      "--steps",
      "--seed",
      "--threads",
      "--min-len",
      "--max-len",
      "--symbols",
      "--eval-every",
      "--eval-examples",
      "--final-eval-examples",
      "--probe-every",
      "--checkpoint-every",
      "--out",
      "--resume",
      "--keep-checkpoint",
      "--quiet"}},
    {"gradnorms", {"--layers", "--norm", "--seeds", "--d-model", "--heads", "--d-ff", "--batch", "--task"}},
    {"compare", {"--a", "--b", "--src", "--tgt", "--max-len", "--switch", "--stages"}},
};

TEST(Cli, EverySubcommandAnswersHelpWithEveryOptionAndAnExample) {
  for (const auto& [cmd, options] : kOptions) {
    for (const char* flag : {"--help", "-h"}) {
      std::string out, err;
      EXPECT_EQ(test::run_stepformer(cmd + " " + flag, out, err), 0) << cmd << " " << flag;
      EXPECT_THAT(err, IsEmpty()) << cmd;
      EXPECT_THAT(out, HasSubstr("usage: stepformer " + cmd)) << cmd;
      EXPECT_THAT(out, HasSubstr("example")) << cmd;
      EXPECT_THAT(out, HasSubstr("exit status: 0 ok, 1 bad input")) << cmd;
      for (const std::string& o : options) EXPECT_THAT(out, HasSubstr(o)) << cmd << " --help does not mention " << o;
    }
  }
}

TEST(Cli, HelpWinsOverOtherArgumentsAndHelpCommandNamesOne) {
  std::string out, err;
  // Even with required options missing or bad values, --help only prints help.
  EXPECT_EQ(test::run_stepformer("decode --beam zero --help", out, err), 0);
  EXPECT_THAT(out, HasSubstr("--beam W"));
  EXPECT_EQ(test::run_stepformer("help train", out, err), 0);
  EXPECT_THAT(out, HasSubstr("--checkpoint-every N"));
  EXPECT_EQ(test::run_stepformer("help nosuch", out, err), 2);
  EXPECT_THAT(err, HasSubstr("unknown command 'nosuch'"));
}

TEST(Cli, EveryCommandIsListedByHelp) {
  std::string out, err;
  EXPECT_EQ(test::run_stepformer("help", out, err), 0);
  for (const auto& [cmd, options] : kOptions) EXPECT_THAT(out, HasSubstr("stepformer " + cmd + " ")) << cmd;
  EXPECT_THAT(out, HasSubstr("exit status: 0 ok, 1 bad input, 2 bad usage"));
}

TEST(Cli, VersionOnStdout) {
  std::string out, err;
  EXPECT_EQ(test::run_stepformer("--version", out, err), 0);
  EXPECT_THAT(out, ::testing::MatchesRegex("stepformer [0-9]+\\.[0-9]+.*\n"));
  EXPECT_THAT(err, IsEmpty());
}

// A model argument that does not exist as given names a shipped model — by name, or by the
// assets/ path the help's examples use — from any working directory: ctest runs this in the build
// tree, which holds no assets/, and the binary finds them in the checkout it was built in (an
// installed copy: in <prefix>/share/stepformer, tests/package_test.py).
TEST(Cli, ShippedModelsFromAnyFolder) {
  const std::string shipped = test::source_path("assets/models/copy-preln.safetensors");
  for (const std::string arg : {"copy-preln", "copy-preln.safetensors", "assets/models/copy-preln.safetensors"}) {
    std::string out, err;
    ASSERT_EQ(test::run_stepformer("info " + arg, out, err), 0) << arg << ": " << err;
    const std::string found = out.substr(0, out.find('\n'));
    std::error_code ec;
    EXPECT_TRUE(std::filesystem::equivalent(found, shipped, ec)) << arg << " found " << found;
  }
  std::string out, err;
  EXPECT_EQ(test::run_stepformer("info no-such-model", out, err), 1);
  EXPECT_THAT(err, HasSubstr("'no-such-model'"));
}

TEST(Cli, UnknownOptionIsBadUsageOnStderr) {
  for (const auto& [cmd, options] : kOptions) {
    std::string out, err;
    EXPECT_EQ(test::run_stepformer(cmd + " --no-such-option", out, err), 2) << cmd;
    EXPECT_THAT(err, HasSubstr("stepformer " + cmd + ": unknown option --no-such-option")) << cmd;
    EXPECT_THAT(out, IsEmpty()) << cmd;
  }
}

TEST(Cli, BadInputExitsOneOnStderr) {
  std::string out, err;
  const std::string missing = "/nonexistent/m.safetensors";
  EXPECT_EQ(test::run_stepformer("info " + missing, out, err), 1);
  EXPECT_EQ(test::run_stepformer("decode --model " + missing + " --src 1", out, err), 1);
  EXPECT_EQ(test::run_stepformer("walk --model " + missing + " --src 1", out, err), 1);
  EXPECT_EQ(test::run_stepformer("compare --a " + missing + " --switch --src 1", out, err), 1);
  EXPECT_EQ(test::run_stepformer("train --resume " + missing, out, err), 1);
  EXPECT_THAT(err, HasSubstr("stepformer train: "));
  EXPECT_THAT(out, IsEmpty());
  // A missing required option or a malformed value is bad usage.
  EXPECT_EQ(test::run_stepformer("decode --src 1", out, err), 2);
  EXPECT_THAT(err, HasSubstr("missing required option --model"));
  EXPECT_EQ(test::run_stepformer("gradnorms --layers x", out, err), 2);
  EXPECT_EQ(test::run_stepformer("info", out, err), 2);
}

// trace --only: a bad pattern, or one that finds no name, is bad usage with what was expected (and
// writes nothing); a good one writes the tensors it finds and no other.
TEST(Cli, TraceOnlyWritesTheSelectedNames) {
  std::string out, err;
  const std::string model = test::source_path("assets/models/copy-preln.safetensors");
  const std::string file = test::temp_path("trace_only.safetensors");
  const std::string base = "trace --model " + model + " --src \"1 2 3\" --tgt \"1 2 3\" --out " + file;
  EXPECT_EQ(test::run_stepformer(base + " --only 'self_attn.(weights'", out, err), 2);
  EXPECT_THAT(err, HasSubstr("--only: expected a regular expression"));
  EXPECT_EQ(test::run_stepformer(base + " --only no_such_tensor", out, err), 2);
  EXPECT_THAT(err, HasSubstr("found 'no_such_tensor', which finds none"));
  EXPECT_FALSE(std::ifstream(file).good()) << "a refused selection writes nothing";
  ASSERT_EQ(test::run_stepformer(base + " --only '^decoder\\.layers\\.1\\.self_attn\\.weights$|^logits$'", out, err), 0)
      << err;
  EXPECT_THAT(out, HasSubstr("wrote 2 tensors"));
  auto f = read_safetensors(file);
  ASSERT_TRUE(f.ok()) << f.error();
  ASSERT_EQ(f->tensors.size(), 2u);
  EXPECT_NE(f->find("decoder.layers.1.self_attn.weights"), nullptr);
  EXPECT_NE(f->find("logits"), nullptr);
  std::remove(file.c_str());
}

// `--threads N` (the explorer and every command but train, whose --threads counts batch shards):
// named in each help, a bad value is bad usage, and the answer does not depend on it.
TEST(Cli, ThreadsOptionForEveryInferenceCommand) {
  std::string out, err;
  for (const auto& [cmd, options] : kOptions) {
    if (cmd == "train") continue;
    EXPECT_EQ(test::run_stepformer(cmd + " --help", out, err), 0) << cmd;
    EXPECT_THAT(out, HasSubstr("--threads N")) << cmd;
  }
  EXPECT_EQ(test::run_stepformer("decode --threads two --src 1", out, err), 2);
  EXPECT_THAT(err, HasSubstr("--threads expects an integer 0..1024 (0: every core), found 'two'"));
  const std::string model = test::source_path("assets/models/copy-preln.safetensors");
  std::string one, all;
  EXPECT_EQ(test::run_stepformer("decode --model " + model + " --src '3 1 4 1 5 9 2 6' --threads 1", one, err), 0)
      << err;
  EXPECT_EQ(test::run_stepformer("decode --threads 0 --model " + model + " --src '3 1 4 1 5 9 2 6'", all, err), 0)
      << err;
  EXPECT_THAT(one, HasSubstr("output: 3 1 4 1 5 9 2 6"));
  const std::regex timing(" +[0-9.]+ ms");  // each step's wall time
  EXPECT_EQ(std::regex_replace(one, timing, ""), std::regex_replace(all, timing, ""));
}

}  // namespace
}  // namespace sf
