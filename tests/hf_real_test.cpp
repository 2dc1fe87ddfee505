// The real-model check: a user's Hugging Face folder against the independent PyTorch
// reference, run at test time because no machine here has the real weights.
//
//   STEPFORMER_HF_DIR=/path/to/gpt2 ctest -L real        (or a marian / bert folder)
//
// Skipped with a message when STEPFORMER_HF_DIR is unset, and when /usr/bin/python3 cannot import
// torch and numpy (Debian: python3-torch python3-numpy; python3-sentencepiece for Marian).
// tests/reference/hf/run_real.py tokenizes a fixed prompt with the reference tokenizers and runs
// the reference forward pass (tests/reference/hf/models.py, float64) on the folder's files;
// stepformer opens the same folder, tokenizes the same prompt with its own tokenizer and runs its
// float32 forward pass. Asserted: the same ids, every position's logits within
// 1e-3 + 1e-4·max|logit|, and the same top-5 tokens, in order, where the model predicts (GPT-2,
// Marian: the last position; BERT: the [MASK]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "io/checkpoint.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "test_util.h"

namespace sf {
namespace {

constexpr const char* kPrompt[] = {"The Transformer is a model architecture that", "The capital of France is [MASK].",
                                   "The small cat sees the house."};
constexpr const char* kTarget = "Die Katze sieht das";

std::vector<int> top5(const Mat& logits, int row) {
  std::vector<int> idx(static_cast<size_t>(logits.cols()));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                    [&](int a, int b) { return logits(row, a) > logits(row, b); });
  idx.resize(5);
  return idx;
}

TEST(RealHfModel, MatchesThePyTorchReference) {
  const char* dir = std::getenv("STEPFORMER_HF_DIR");
  if (!dir || !*dir)
    GTEST_SKIP() << "set STEPFORMER_HF_DIR to a Hugging Face folder (gpt2, an opus-mt model or a BERT; "
                    "docs/real-models.md) to run this check";
  if (std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (Debian: python3-torch python3-numpy)";
  auto m = load_model(dir);
  ASSERT_TRUE(m.ok()) << m.error();
  const Config& c = m->config;
  const int family = c.arch == Arch::DecoderOnly ? 0 : c.arch == Arch::EncoderOnly ? 1 : 2;
  const std::string prompt = kPrompt[family];

  const std::string out = test::temp_path("real_reference.safetensors");
  const std::string cmd = "/usr/bin/python3 " + test::source_path("tests/reference/hf/run_real.py") + " '" + dir +
                          "' '" + prompt + "' " + out + " '" + kTarget + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto ref = read_safetensors(out);
  std::remove(out.c_str());
  ASSERT_TRUE(ref.ok()) << ref.error();
  const Tensor& rl = *ref->find("logits");
  const Mat want = Eigen::Map<const Mat>(rl.f32.data(), rl.shape[0], rl.shape[1]);

  // The folder's tokenizer and the reference tokenizer agree on the prompt.
  const Vocab& in_vocab = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  const std::vector<int> ids = in_vocab.encode(prompt).ids;
  ASSERT_EQ(ids, test::ids_of(*ref->find("ids")));

  Mat got;
  int row = static_cast<int>(ids.size()) - 1;
  if (family == 0) {
    got = decode(*m, ids, 1, {}, nullptr, nullptr);
  } else if (family == 1) {
    EncoderTrace tr;
    encode(*m, ids, 1, &tr);
    got = tr.logits;
    row = static_cast<int>(std::find(ids.begin(), ids.end(), c.src_vocab.mask()) - ids.begin());
    ASSERT_LT(row, static_cast<int>(ids.size())) << "the prompt has no [MASK]";
  } else {
    const std::vector<int> tgt = with_bos(c.tgt_vocab, c.tgt_vocab.tokenize(kTarget).ids);
    ASSERT_EQ(tgt, test::ids_of(*ref->find("tgt_ids")));
    const Mat memory = encode(*m, ids, 1, nullptr);
    const EncoderContext enc{&memory, &ids};
    got = decode(*m, tgt, 1, enc, nullptr, nullptr);
    row = static_cast<int>(tgt.size()) - 1;
  }
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  const double scale = want.cwiseAbs().maxCoeff();
  const double diff = (got - want).cwiseAbs().maxCoeff();
  EXPECT_LE(diff, 1e-3 + 1e-4 * scale) << "max |logit| " << scale;
  EXPECT_EQ(top5(got, row), top5(want, row)) << "at position " << row;
  std::printf("[ real     ] %s: %zu prompt tokens, max |Δ logit| %.3g (max |logit| %.3g), top-5 at %d:", dir,
              ids.size(), diff, scale, row);
  for (int t : top5(got, row)) std::printf(" %s(%d)", c.tgt_vocab.display(t).c_str(), t);
  std::printf("\n");
}

}  // namespace
}  // namespace sf
