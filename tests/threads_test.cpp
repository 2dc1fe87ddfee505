// threads_test.cpp — inference on several cores gives the one-core results (base/threads.h):
// matrix products split by Eigen (a forward over many tokens) and by matmul_transposed (the
// matrix-vector products of a cached step) agree with one thread to float rounding, an activation
// split between cores gives the one-core bits, as do LayerNorm, RMSNorm and the residual stream's
// element-wise sums and products, and cached decoding still equals recomputation.
// `--threads` values are checked.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <new>
#include <string>
#include <utility>

#include "base/elementwise.h"
#include "base/threads.h"
#include "model/encoder.h"
#include "model/feed_forward.h"
#include "model/layer_norm.h"
#include "model/linear.h"
#include "stepper/decoding.h"

namespace sf {
namespace {

// Large enough that Eigen splits its products (64 tokens, d 256) and that the generator
// (4000 × 256 ≥ 256 Ki weights) takes the split matrix-vector path.
Model make_model() {
  Config c;
  c.arch = Arch::EncoderDecoder;
  c.d_model = 256;
  c.n_heads = 4;
  c.n_encoder_layers = c.n_decoder_layers = 2;
  c.d_ff = 1024;
  c.max_len = 128;
  c.norm = NormPlacement::Pre;
  c.activation = Activation::GeluTanh;
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  while (v.size() < 4000) v.push_back("w" + std::to_string(v.size()));
  c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  Weights w;
  init_xavier(w, c, 7);
  return Model::make(c, std::move(w));
}

std::vector<int> tokens(int n, int mul) {
  std::vector<int> ids{1};
  for (int i = 1; i < n; ++i) ids.push_back(4 + (i * mul) % 3990);
  return ids;
}

struct Results {
  Mat teacher_forced;         // (64, V)
  RowVec cached, recomputed;  // (V) the next-token logits after 40 tokens
};

Results run_on(const Model& m, int n_threads) {
  const ScopedThreads scope(n_threads);
  const std::vector<int> src = tokens(64, 7), tgt = tokens(64, 11);
  const Mat memory = encode(m, src, 1, nullptr);
  const EncoderContext enc{&memory, &src};
  Results r;
  r.teacher_forced = decode(m, tgt, 1, enc, nullptr, nullptr);
  Hypothesis h;
  start_hypothesis(m, std::vector<int>(tgt.begin(), tgt.begin() + 39), true, h);
  next_logits(m, enc, h, true, nullptr);  // prefill 39 rows
  h.ids.push_back(tgt[39]);
  r.cached = next_logits(m, enc, h, true, nullptr);  // one row: the matrix-vector path
  Hypothesis full;
  start_hypothesis(m, h.ids, false, full);
  r.recomputed = next_logits(m, enc, full, false, nullptr);
  return r;
}

TEST(Threads, SeveralCoresGiveTheOneCoreResults) {
  const Model m = make_model();
  const Results one = run_on(m, 1);
  const Results two = run_on(m, 2);
  EXPECT_LE((one.teacher_forced - two.teacher_forced).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_LE((one.cached - two.cached).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_LE((two.cached - two.recomputed).cwiseAbs().maxCoeff(), 1e-4f);
  EXPECT_LE((one.cached - one.recomputed).cwiseAbs().maxCoeff(), 1e-4f);
  // Logits are not trivially equal: the test would notice a split that dropped rows.
  EXPECT_GT(one.cached.cwiseAbs().maxCoeff(), 0.1f);
}

TEST(Threads, MatrixVectorSplitCoversEveryOutput) {
  Mat w = Mat::Random(1000, 300);  // 300 000 weights: split; 1000 rows: not a multiple of 16·T
  const Mat x = Mat::Random(1, 300);
  const Mat expected = x * w.transpose();
  for (int t : {1, 2, 3, 7}) {
    const ScopedThreads scope(t);
    Mat y;
    matmul_transposed(x, w, y);
    ASSERT_EQ(y.cols(), 1000) << t;
    EXPECT_LE((y - expected).cwiseAbs().maxCoeff(), 1e-4f) << t << " threads";
  }
}

// An activation over a large block runs split between cores, bit for bit what one core computes,
// in place or into another matrix (x untouched): sizes that are not a multiple of a line, a
// register or the thread count, around the split's threshold (65,536 floats).
TEST(Threads, ActivationSplitGivesTheOneCoreBits) {
  for (const Activation a : {Activation::Relu, Activation::Gelu, Activation::GeluTanh, Activation::Swish})
    for (const auto& [rows, cols] : {std::pair{300, 257}, std::pair{256, 256}, std::pair{1, 70001}, std::pair{3, 5}}) {
      const Mat x = Mat::Random(rows, cols) * 4.0f;
      Mat one = x;
      {
        const ScopedThreads scope(1);
        activation_forward(a, one);
      }
      for (int t : {2, 3, 7}) {
        const ScopedThreads scope(t);
        Mat split = x;
        activation_forward(a, split);
        EXPECT_TRUE(same_bits(one, split))
            << static_cast<int>(a) << " " << rows << "×" << cols << ", " << t << " threads";
        Mat into(2, 2);
        const Mat kept = x;
        activation_forward(a, kept, into);
        EXPECT_TRUE(same_bits(one, into))
            << static_cast<int>(a) << " " << rows << "×" << cols << ", " << t << " threads, out of place";
        EXPECT_TRUE(same_bits(kept, x));
      }
      EXPECT_FALSE(same_bits(one, x));  // the activation changed the block
    }
}

// Shapes around the passes' split threshold (65,536 floats): not multiples of a line, a register
// or the thread count; one long row; a block too small to split.
const std::pair<int, int> kPassShapes[] = {{300, 257}, {256, 256}, {1, 70001}, {3, 5}};

// LayerNorm and RMSNorm of a large block run row by row split between the cores, with the one-core
// bits in the output and in the recorded statistics.
TEST(Threads, NormSplitGivesTheOneCoreBits) {
  for (const NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (const auto& [rows, cols] : kPassShapes) {
      const Mat x = Mat::Random(rows, cols) * 3.0f + Mat::Constant(rows, cols, 0.5f);
      LayerNormWeights w;
      w.kind = kind;
      w.weight = RowVec::Random(cols);
      w.bias = kind == NormKind::LayerNorm ? RowVec(RowVec::Random(cols)) : RowVec::Zero(cols);
      Mat one;
      LayerNormTrace one_tr;
      {
        const ScopedThreads scope(1);
        layer_norm_forward(x, w, one, &one_tr);
      }
      for (int t : {2, 3, 7}) {
        const ScopedThreads scope(t);
        Mat split;
        LayerNormTrace tr;
        layer_norm_forward(x, w, split, &tr);
        const std::string at =
            std::to_string(rows) + "×" + std::to_string(cols) + ", " + std::to_string(t) + " threads";
        EXPECT_TRUE(same_bits(one, split)) << at;
        EXPECT_TRUE(same_bits(one_tr.out, tr.out)) << at;
        EXPECT_EQ(one_tr.mean, tr.mean) << at;
        EXPECT_EQ(one_tr.var, tr.var) << at;
        EXPECT_EQ(one_tr.rms, tr.rms) << at;
      }
      // Not by accident: the last row normalised as one row alone is.
      const Eigen::Index last = rows - 1;
      RowVec expected;
      if (kind == NormKind::LayerNorm) {
        const float mu = x.row(last).mean();
        const float var = (x.row(last).array() - mu).square().mean();
        expected = ((x.row(last).array() - mu) / std::sqrt(var + w.eps) * w.weight.array() + w.bias.array()).matrix();
      } else {
        const float ms = x.row(last).squaredNorm() / static_cast<float>(cols);
        expected = (x.row(last).array() / std::sqrt(ms + w.eps) * w.weight.array()).matrix();
      }
      EXPECT_LE((one.row(last) - expected).cwiseAbs().maxCoeff(), 1e-4f) << rows << "×" << cols;
    }
}

// The element-wise sum and product of two large blocks split between the cores: Eigen's a + b and
// a ⊙ b to the bit, into a third matrix or in place over either operand.
TEST(Threads, ElementwiseSplitGivesTheOneCoreBits) {
  for (const auto& [rows, cols] : kPassShapes) {
    const Mat a = Mat::Random(rows, cols), b = Mat::Random(rows, cols);
    const Mat sum = a + b, product = (a.array() * b.array()).matrix();
    for (int t : {1, 2, 3, 7}) {
      const ScopedThreads scope(t);
      const std::string at = std::to_string(rows) + "×" + std::to_string(cols) + ", " + std::to_string(t) + " threads";
      Mat y(1, 1);
      add(a, b, y);
      EXPECT_TRUE(same_bits(y, sum)) << at;
      multiply(a, b, y);
      EXPECT_TRUE(same_bits(y, product)) << at;
      Mat in_place = a;
      add(in_place, b, in_place);
      EXPECT_TRUE(same_bits(in_place, sum)) << at << ", in place";
      in_place = b;
      multiply(a, in_place, in_place);
      EXPECT_TRUE(same_bits(in_place, product)) << at << ", in place";
    }
  }
}

// same_bits compares shapes and bits: +0 and −0 differ, a NaN equals its own copy.
TEST(Threads, SameBitsComparesBits) {
  Mat a = Mat::Random(4, 5);
  Mat b = a;
  EXPECT_TRUE(same_bits(a, b));
  b(3, 4) = std::nextafter(b(3, 4), 2.0f);
  EXPECT_FALSE(same_bits(a, b));
  a(0, 0) = 0.0f;
  b = a;
  b(0, 0) = -0.0f;
  EXPECT_FALSE(same_bits(a, b));
  a(0, 0) = b(0, 0) = std::nanf("");
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_FALSE(same_bits(a, Mat(a.transpose())));  // the same floats, another shape
  EXPECT_TRUE(same_bits(Mat(), Mat()));
}

TEST(Threads, ScopedCountIsRestoredAndValuesAreChecked) {
  const int before = threads();
  {
    const ScopedThreads one(1);
    EXPECT_EQ(threads(), 1);
  }
  EXPECT_EQ(threads(), before);
  int n = -1;
  EXPECT_TRUE(parse_threads("0", n));
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(parse_threads("12", n));
  EXPECT_EQ(n, 12);
  for (const char* bad : {"", "-1", "two", "2x", "1025", " 3"}) EXPECT_FALSE(parse_threads(bad, n)) << bad;
}

// An exception inside an OpenMP region would end the process; RegionErrors hands the first one
// to the thread that opened the region, after every iteration has run.
TEST(Threads, RegionErrorsRethrowsAfterTheRegion) {
  RegionErrors errors;
  std::atomic<int> ran{0};
#ifdef _OPENMP
#pragma omp parallel for num_threads(2)
#endif
  for (int i = 0; i < 8; ++i)
    errors.run([&] {
      ++ran;
      if (i == 5) throw std::bad_alloc();
    });
  EXPECT_EQ(ran.load(), 8);
  EXPECT_THROW(errors.rethrow(), std::bad_alloc);
  RegionErrors none;
  none.run([] {});
  EXPECT_NO_THROW(none.rethrow());
}

}  // namespace
}  // namespace sf
