// same_input_test.cpp — products that read the same input, run together (base/gemm.h's
// gemm_same_a, model/linear.h's linear_forward_same_input: an attention layer's Q, K and V, a
// gated feed-forward's gate and up), give each output the bits it gets alone: on several rows and
// on one, on every weight storage, on any number of threads; and a feed-forward's full recording,
// whose matrices are those products' own outputs, holds each step's bits.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/gemm.h"
#include "base/half.h"
#include "base/threads.h"
#include "model/feed_forward.h"
#include "model/linear.h"
#include "model/packed_gemm.h"

namespace sf {
namespace {

// Parts of an attention layer with grouped keys (512 queries' features, 128 each for K and V) and
// one whose width ends inside a panel.
const std::vector<int> kOuts = {512, 128, 128, 77};
constexpr int kIn = 512;

TEST(SameInput, GemmSameAEqualsSeparateProducts) {
  std::vector<PackedB> bs;
  std::vector<RowVec> biases;
  for (int out : kOuts) {
    bs.push_back(pack_weight(Mat::Random(out, kIn)).wt);
    biases.push_back(RowVec::Random(out));
  }
  // rows: one, a short input, one row group past a multiple of the kernel's, two row blocks' worth
  // (past the fused path: product by product)
  for (int m : {1, 2, 13, 64, 193, 400}) {
    const Mat x = Mat::Random(m, kIn);
    std::vector<Mat> want;
    {
      const ScopedThreads one(1);
      for (size_t i = 0; i < bs.size(); ++i) {
        want.emplace_back(m, bs[i].n);
        gemm(m, mat_ref(x), bs[i], want.back().data(), bs[i].n, GemmOut::Overwrite, biases[i].data());
      }
    }
    for (int threads : {1, 2, 3}) {
      const ScopedThreads t(threads);
      std::vector<Mat> got;
      std::vector<PackedTarget> targets;
      for (size_t i = 0; i < bs.size(); ++i) got.emplace_back(Mat::Constant(m, bs[i].n, 7.0f));
      for (size_t i = 0; i < bs.size(); ++i) targets.push_back({&bs[i], got[i].data(), bs[i].n, biases[i].data()});
      gemm_same_a(m, mat_ref(x), targets.data(), targets.size());
      for (size_t i = 0; i < bs.size(); ++i)
        EXPECT_TRUE(got[i] == want[i]) << "part " << i << ", " << m << " rows, " << threads << " threads";
    }
    EXPECT_GT(want[0].cwiseAbs().maxCoeff(), 1.0f);
  }
}

TEST(SameInput, GemmSameAWritesIntoWiderOutputs) {
  // Each target's own row stride: the parts land side by side in one (m, Σ out) matrix.
  const PackedB a = pack_weight(Mat::Random(64, kIn)).wt, b = pack_weight(Mat::Random(96, kIn)).wt;
  const Mat x = Mat::Random(40, kIn);
  Mat both = Mat::Zero(40, 160);
  const PackedTarget targets[] = {{&a, both.data(), 160, nullptr}, {&b, both.data() + 64, 160, nullptr}};
  const ScopedThreads two(2);
  gemm_same_a(40, mat_ref(x), targets, 2);
  Mat wa(40, 64), wb(40, 96);
  gemm(40, mat_ref(x), a, wa.data(), 64, GemmOut::Overwrite);
  gemm(40, mat_ref(x), b, wb.data(), 96, GemmOut::Overwrite);
  EXPECT_TRUE(both.leftCols(64) == wa);
  EXPECT_TRUE(both.rightCols(96) == wb);
}

enum class Held { Rows, RowsAndPacked, PackedOnly, BF16 };

Linear make_linear(int out, Held held, unsigned seed) {
  std::srand(seed);
  Linear l;
  const Mat w = Mat::Random(out, kIn);
  l.bias = RowVec::Random(out);
  if (held == Held::BF16) {
    l.half = HalfMat::make(out, kIn, WeightStorage::BF16);
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < l.half.size(); ++i)  // finite BF16s of magnitude below 2
      l.half.data()[i] = static_cast<uint16_t>((rng() & 0x807fu) | (static_cast<uint16_t>(110 + rng() % 17) << 7));
    return l;
  }
  if (held != Held::PackedOnly) l.weight = w;
  if (held != Held::Rows) l.packed = std::make_shared<const PackedWeight>(pack_weight(w));
  return l;
}

TEST(SameInput, LinearsTogetherEqualLinearsAlone) {
  for (Held held : {Held::Rows, Held::RowsAndPacked, Held::PackedOnly, Held::BF16}) {
    std::vector<Linear> ls;
    for (size_t i = 0; i < 3; ++i) ls.push_back(make_linear(kOuts[i], held, 11u + static_cast<unsigned>(i)));
    for (int m : {1, 64}) {
      const Mat x = Mat::Random(m, kIn);
      std::vector<Mat> want(3);
      {
        const ScopedThreads one(1);
        for (size_t i = 0; i < 3; ++i) linear_forward(x, ls[i], want[i]);
      }
      for (int threads : {1, 2}) {
        const ScopedThreads t(threads);
        // several calls: a one-row product splits once the governor has seen it pay
        for (int call = 0; call < 4; ++call) {
          std::vector<Mat> got(3);
          linear_forward_same_input(x, {{&ls[0], &got[0]}, {&ls[1], &got[1]}, {&ls[2], &got[2]}});
          for (size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(got[i] == want[i]) << "storage " << static_cast<int>(held) << ", part " << i << ", " << m
                                           << " rows, " << threads << " threads";
        }
      }
      EXPECT_GT(want[0].cwiseAbs().maxCoeff(), 0.5f);
    }
  }
}

// A feed-forward's full recording holds each step's own bits — the products, the activation, the
// gate times up — and recording changes nothing in the output: the standard MLP (ReLU, fused
// into fc1's product when nothing keeps the pre-activation, and GELU) and the gated one.
TEST(SameInput, FeedForwardRecordingHoldsEachStepsBits) {
  constexpr int d = 64, dff = 256, n = 40;
  const auto linear = [](int out, int in) {
    Linear l;
    l.weight = Mat::Random(out, in);
    l.bias = RowVec::Random(out);
    l.packed = std::make_shared<const PackedWeight>(pack_weight(l.weight));
    return l;
  };
  const Mat x = Mat::Random(n, d);
  for (const Mlp kind : {Mlp::Standard, Mlp::Gated})
    for (const Activation a : {Activation::Relu, Activation::Gelu, Activation::Swish})
      for (int threads : {1, 2}) {
        const ScopedThreads t(threads);
        FeedForwardWeights w;
        w.kind = kind;
        w.fc1 = linear(dff, d);
        w.fc2 = linear(d, dff);
        if (kind == Mlp::Gated) w.gate = linear(dff, d);
        Mat plain, recorded;
        feed_forward(w, a, x, plain, nullptr);
        FeedForwardTrace tr;
        feed_forward(w, a, x, recorded, &tr);
        const std::string what = std::string(kind == Mlp::Gated ? "gated" : "standard") + ", activation " +
                                 std::to_string(static_cast<int>(a)) + ", " + std::to_string(threads) + " threads";
        EXPECT_TRUE(same_bits(plain, recorded)) << what;
        EXPECT_TRUE(same_bits(tr.out, recorded)) << what;
        Mat up, pre;
        linear_forward(x, w.fc1, up);
        if (kind == Mlp::Gated) {
          linear_forward(x, w.gate, pre);
          EXPECT_TRUE(same_bits(tr.gate_pre, pre)) << what;
          EXPECT_TRUE(same_bits(tr.up, up)) << what;
          activation_forward(a, pre);
          EXPECT_TRUE(same_bits(tr.gate, pre)) << what;
          const Mat hidden = pre.array() * up.array();
          EXPECT_TRUE(same_bits(tr.hidden, hidden)) << what;
        } else {
          EXPECT_TRUE(same_bits(tr.hidden_pre, up)) << what;
          activation_forward(a, up);
          EXPECT_TRUE(same_bits(tr.hidden, up)) << what;
        }
        Mat out;
        linear_forward(tr.hidden, w.fc2, out);
        EXPECT_TRUE(same_bits(out, recorded)) << what;
        EXPECT_GT(tr.hidden.cwiseAbs().maxCoeff(), 0.1f) << what;
      }
}

}  // namespace
}  // namespace sf
