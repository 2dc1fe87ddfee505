// test_util.h — helpers shared by the test files: paths, fixtures, tolerances, scratch files.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "stepper/decoding.h"
#include "scratch_dir.h"

namespace sf::test {

inline std::string source_path(const std::string& rel) { return std::string(STEPFORMER_SOURCE_DIR) + "/" + rel; }
inline std::string fixture(const std::string& name) { return source_path("tests/fixtures/" + name); }

inline Model load_fixture_model(const std::string& cs) {
  auto m = load_model(fixture(cs + ".safetensors"));
  EXPECT_TRUE(m.ok()) << m.error();
  return m.ok() ? std::move(*m) : Model{};
}

// A fixture model shared as sessions, views and analyses hold one.
inline std::shared_ptr<const Model> shared_fixture_model(const std::string& cs) {
  return std::make_shared<const Model>(load_fixture_model(cs));
}

// An input of `words` tokens of the model's input vocabulary (the source's with an encoder), the
// four after the specials in turn, separated by spaces.
inline std::string prompt_of(const Config& c, int words) {
  const Vocab& v = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  std::string s;
  for (int i = 0; i < words; ++i) s += (i ? " " : "") + v.token(5 + i % 4);
  return s;
}

// The decoder-bearing fixtures every decoding strategy and cache path runs on.
inline const char* const kDecodingCases[] = {
    "encdec_post_relu_sin", "encdec_pre_relu_sin",       "encdec_post_gelu_learned", "encdec_pre_gelu_shared",
    "deconly_pre_gelu",     "deconly_post_relu_learned", "encdec_pre_3layer_odd"};

// Settings that force the target given with the input (teacher forcing).
inline DecodeSettings forced() {
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  return s;
}

inline TensorFile load_expected(const std::string& cs) {
  auto f = read_safetensors(fixture(cs + ".expected.safetensors"));
  EXPECT_TRUE(f.ok()) << f.error();
  return f.ok() ? std::move(*f) : TensorFile{};
}

// A tiny hub folder of tests/fixtures/hf and the PyTorch reference's tensors beside it.
inline std::string hf_fixture(const std::string& name) { return fixture("hf/" + name); }
inline TensorFile hf_expected(const std::string& name) {
  auto f = read_safetensors(hf_fixture(name) + "/expected.safetensors");
  EXPECT_TRUE(f.ok()) << f.error();
  return f.ok() ? std::move(*f) : TensorFile{};
}

inline std::vector<int> ids_of(const Tensor& t) { return std::vector<int>(t.i64.begin(), t.i64.end()); }

// Words joined by single spaces.
inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// Largest |a − b| over two tensors of equal shape; +inf if shapes differ. Equal infinities
// (the −inf of a mask) count as 0.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape || a.f32.size() != b.f32.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.f32.size(); ++i) {
    if (a.f32[i] == b.f32[i]) continue;
    m = std::max(m, std::fabs(static_cast<double>(a.f32[i]) - b.f32[i]));
  }
  return m;
}

// Largest |a − b| over two matrices of equal shape (0 when empty); +inf if the shapes differ.
inline double max_abs_diff(const Mat& a, const Mat& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? static_cast<double>((a - b).cwiseAbs().maxCoeff()) : 0.0;
}

// |float32 sum − exact| for x · w.row(r), a sum of k products in any order, each addition (or
// fused multiply-add) rounding once at 2^-24 relative: at most (k + 1)·2^-24·Σ|x_i w_i| (k − 1
// additions along any path of the summation tree, plus one for the lanes' final additions). Two
// such sums in different orders differ by at most twice this.
inline double float_sum_bound(const float* x, const Mat& w, Eigen::Index r) {
  double s = 0;
  for (Eigen::Index i = 0; i < w.cols(); ++i) s += std::fabs(static_cast<double>(x[i]) * w(r, i));
  return static_cast<double>(w.cols() + 1) * std::ldexp(1.0, -24) * s + 1e-30;
}

// The test process's scratch folder (ctest runs each test in a process of its own, with TMPDIR
// set to the run's scratch folder): made at the first call and named after the running test;
// removed when the process ends with every test passed, kept after a failure and then named on
// stderr (ctest --output-on-failure shows it; the run's scratch.cleanup lists it too).
inline ScratchDir& scratch() {
  struct ProcessScratch {
    ScratchDir dir;
    explicit ProcessScratch(const std::string& label) : dir(label) {}
    ~ProcessScratch() {
      if (!dir.owned_here() || !::testing::UnitTest::GetInstance()->Failed()) return;
      dir.keep();
      std::fprintf(stderr, "a test failed: its scratch folder is kept: %s\n", dir.dir().c_str());
    }
  };
  static ProcessScratch s([] {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    return t ? std::string(t->test_suite_name()) + "." + t->name() : std::string("tests");
  }());
  return s.dir;
}

// A file (or folder) of that name in the test process's scratch folder.
inline std::string temp_path(const std::string& name) { return scratch().path(name); }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs the built `stepformer` with `args` (shell syntax) and returns its exit status; its stdout
// and stderr land in `out` and `err`.
inline int run_stepformer(const std::string& args, std::string& out, std::string& err) {
  const std::string outf = temp_path("cli_out.txt"), errf = temp_path("cli_err.txt");
  const int rc = std::system((std::string(STEPFORMER_BINARY) + " " + args + " >" + outf + " 2>" + errf).c_str());
  out = read_text(outf);
  err = read_text(errf);
  std::remove(outf.c_str());
  std::remove(errf.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

// gpt2-tiny's vocab.json + merges.txt as one Hugging Face tokenizer.json (as the hub's gpt2 has
// it: no normalizer, ByteLevel pre-tokenizer, BPE model, <|endoftext|> an added token); merges
// as "a b" strings or, with pair_merges, as ["a", "b"] pairs.
inline nlohmann::json gpt2_tokenizer_json(bool pair_merges) {
  using nlohmann::json;
  json vocab = json::parse(read_text(fixture("hf/gpt2-tiny/vocab.json")));
  json merges = json::array();
  std::istringstream in(read_text(fixture("hf/gpt2-tiny/merges.txt")));
  std::string line;
  std::getline(in, line);  // #version
  while (std::getline(in, line))
    if (!line.empty()) {
      const size_t sp = line.find(' ');
      merges.push_back(pair_merges ? json::array({line.substr(0, sp), line.substr(sp + 1)}) : json(line));
    }
  return {{"version", "1.0"},
          {"added_tokens", json::array({{{"id", 756}, {"content", "<|endoftext|>"}, {"special", true}}})},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
}

}  // namespace sf::test
