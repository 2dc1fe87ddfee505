// Component tests with values computed by hand (the "Transformer Architecture" and "Transformer in details" lectures).
#include <gtest/gtest.h>

#include <cmath>

#include "model/attention.h"
#include "model/feed_forward.h"
#include "model/layer_norm.h"
#include "model/mask.h"
#include "analysis/position_view.h"
#include "model/positional_encoding.h"
#include "model/residual.h"

namespace sf {
namespace {

// The "Transformer Architecture" lecture's worked example (Scaled dot product): q1·k1 = 112, q1·k2 = 96, d_k = 64 →
// scaled 14 and 12 → softmax 0.88 / 0.12 ("Thinking" attends 0.88 to itself).
TEST(Attention, LectureWorkedExample) {
  const int dk = 64;
  Mat q = Mat::Zero(1, dk), k = Mat::Zero(2, dk), v = Mat::Zero(2, dk);
  q(0, 0) = 8.0f;
  k(0, 0) = 14.0f;  // 8 · 14 = 112
  k(1, 0) = 12.0f;  // 8 · 12 = 96
  v(0, 1) = 1.0f;   // head output picks out the weights
  v(1, 2) = 1.0f;
  AttentionTrace tr;
  Mat concat;
  attend(q, k, v, 1, {Mat::Zero(1, 2)}, concat, &tr);
  EXPECT_FLOAT_EQ(tr.raw_scores[0](0, 0), 112.0f);
  EXPECT_FLOAT_EQ(tr.raw_scores[0](0, 1), 96.0f);
  EXPECT_FLOAT_EQ(tr.score(0, 0, 0), 14.0f);
  EXPECT_FLOAT_EQ(tr.score(0, 0, 1), 12.0f);
  const float e = std::exp(2.0f);  // softmax(14, 12) = (e²/(e²+1), 1/(e²+1))
  EXPECT_NEAR(tr.weights[0](0, 0), e / (e + 1), 1e-6);
  EXPECT_NEAR(tr.weights[0](0, 1), 1 / (e + 1), 1e-6);
  EXPECT_NEAR(tr.weights[0](0, 0), 0.88f, 0.005f);
  EXPECT_NEAR(tr.weights[0](0, 1), 0.12f, 0.005f);
  EXPECT_NEAR(concat(0, 1), tr.weights[0](0, 0), 1e-7);
  EXPECT_NEAR(concat(0, 2), tr.weights[0](0, 1), 1e-7);
}

TEST(Attention, MaskedWeightsAreExactlyZeroAndRowsSumToOne) {
  // 4 queries over 4 keys, causal, key 3 is padding (id 0).
  Mat mask = make_mask(4, {5, 6, 7, 0}, /*pad=*/0, /*causal=*/true);
  Mat s = Mat::Random(4, 4) * 3.0f;
  masked_softmax(s, mask);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(s.row(i).sum(), 1.0f, 1e-6) << "row " << i;
    for (int j = 0; j < 4; ++j)
      if (j > i || j == 3) {
        EXPECT_EQ(s(i, j), 0.0f) << i << "," << j;  // exactly 0, not tiny
      }
  }
  EXPECT_EQ(s(0, 0), 1.0f);  // the first query sees only itself
}

// Rows longer than a SIMD packet take Eigen's vectorised exp, which does not return 0 for −inf.
TEST(Attention, MaskedWeightsAreExactlyZeroOnLongRows) {
  std::vector<int> keys(40, 7);
  keys[33] = 0;  // one padded key
  Mat mask = make_mask(40, keys, /*pad=*/0, /*causal=*/true);
  Mat s = Mat::Random(40, 40) * 4.0f;
  masked_softmax(s, mask);
  for (int i = 0; i < 40; ++i) {
    EXPECT_NEAR(s.row(i).sum(), 1.0f, 1e-5) << "row " << i;
    for (int j = 0; j < 40; ++j)
      if (j > i || j == 33) {
        ASSERT_EQ(s(i, j), 0.0f) << i << "," << j;
      }
  }
}

// Hand-computed: scores (0, ln 2, ln 3) give weights (1, 2, 3) / 6; a masked fourth key adds
// nothing; a shift of every score by 50 changes nothing (but the rounding of 50 + ln k to float,
// one ulp of 50 being 3.8e−6).
TEST(Attention, SoftmaxOfKnownScores) {
  const float l2 = std::log(2.0f), l3 = std::log(3.0f);
  Mat mask = Mat::Zero(2, 4);
  mask(0, 3) = mask(1, 3) = kMasked;
  Mat s(2, 4);
  s << 0.0f, l2, l3, 9.0f, 50.0f, 50.0f + l2, 50.0f + l3, -9.0f;
  masked_softmax(s, mask);
  for (int i = 0; i < 2; ++i) {
    const float tol = i == 0 ? 2e-7f : 2e-6f;
    EXPECT_NEAR(s(i, 0), 1.0f / 6, tol) << i;
    EXPECT_NEAR(s(i, 1), 2.0f / 6, tol) << i;
    EXPECT_NEAR(s(i, 2), 3.0f / 6, tol) << i;
    EXPECT_EQ(s(i, 3), 0.0f);
  }
  Mat none(3, 0), none_mask(3, 0);  // no keys at all: nothing to do, nothing read
  masked_softmax(none, none_mask);
  EXPECT_EQ(none.size(), 0);
}

TEST(Attention, FullyMaskedRowGivesZerosNotNaN) {
  Mat mask = make_mask(2, {0, 0, 0}, 0, false);  // every key is padding
  Mat s = Mat::Ones(2, 3);
  masked_softmax(s, mask);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_FALSE(std::isnan(s(i, j)));
      EXPECT_EQ(s(i, j), 0.0f);
    }
}

TEST(Mask, CausalWithOffsetAndPadding) {
  // A cached decoding step: one query at absolute position 2 over keys 0..2, key 1 is <pad>.
  Mat m = make_mask(1, {1, 0, 4}, 0, true, /*q_offset=*/2);
  EXPECT_EQ(m(0, 0), 0.0f);
  EXPECT_EQ(m(0, 1), kMasked);
  EXPECT_EQ(m(0, 2), 0.0f);
  Mat full = make_mask(3, {1, 4, 5}, 0, true);
  EXPECT_EQ(full(0, 1), kMasked);
  EXPECT_EQ(full(1, 2), kMasked);
  EXPECT_EQ(full(2, 0), 0.0f);
}

TEST(PositionalEncoding, HandValues) {
  const int d = 4;  // ω_0 = 1, ω_1 = 10000^(−2/4) = 0.01
  EXPECT_FLOAT_EQ(pe_value(0, 0, d), 0.0f);
  EXPECT_FLOAT_EQ(pe_value(0, 1, d), 1.0f);
  EXPECT_FLOAT_EQ(pe_value(1, 0, d), std::sin(1.0f));
  EXPECT_FLOAT_EQ(pe_value(1, 1, d), std::cos(1.0f));
  EXPECT_NEAR(pe_value(1, 2, d), std::sin(0.01), 1e-7);
  EXPECT_NEAR(pe_value(3, 3, d), std::cos(0.03), 1e-7);
  EXPECT_FLOAT_EQ(pe_frequency(1, d), 0.01f);
  Mat p = sinusoidal_pe(5, d);
  EXPECT_EQ(p.rows(), 5);
  EXPECT_FLOAT_EQ(p(2, 0), std::sin(2.0f));
}

// "Transformer in details", Positional Encoding: M(k, φ) maps the (sin, cos) pair k of p_t onto that of p_{t+φ}, for
// every t.
TEST(PositionalEncoding, RotationMapsPtToPtPlusPhi) {
  const int d = 16;
  for (int k = 0; k < d / 2; ++k)
    for (int phi : {1, 3, 7})
      for (int t : {0, 2, 5, 11}) {
        Eigen::Vector2f pt(pe_value(t, 2 * k, d), pe_value(t, 2 * k + 1, d));
        Eigen::Vector2f want(pe_value(t + phi, 2 * k, d), pe_value(t + phi, 2 * k + 1, d));
        Eigen::Vector2f got = pe_rotation(k, phi, d) * pt;
        EXPECT_NEAR(got(0), want(0), 1e-5) << "k " << k << " phi " << phi << " t " << t;
        EXPECT_NEAR(got(1), want(1), 1e-5);
      }
}

// The explorer's position views (analysis/position_view.h): the shift check on the table, each
// p_t's squared length d/2 on the similarity's diagonal (sin² + cos² = 1 per pair), and the
// wavelengths 2π/ω_k.
TEST(PositionView, ShiftSimilarityAndWavelength) {
  const int d = 8;
  const Mat P = sinusoidal_pe(20, d);
  const PairShift s = pair_shift(P, 1, 5, 3);
  EXPECT_FLOAT_EQ(s.omega, pe_frequency(1, d));
  EXPECT_FLOAT_EQ(s.angle, 5 * pe_frequency(1, d));
  EXPECT_FLOAT_EQ(s.p_t(0), P(3, 2));
  EXPECT_FLOAT_EQ(s.p_tphi(1), P(8, 3));
  EXPECT_NEAR(s.turned(0), std::sin(8 * 0.1), 1e-5);  // ω_1 = 10000^(−2/8) = 0.1
  EXPECT_NEAR(s.turned(1), std::cos(8 * 0.1), 1e-5);
  EXPECT_LT(s.max_diff, 1e-5f);
  EXPECT_GT(pair_shift(P.colwise().reverse(), 1, 5, 3).max_diff, 0.1f) << "a table that is not sinusoidal";
  const Mat S = position_similarity(P);
  ASSERT_EQ(S.rows(), 20);
  ASSERT_EQ(S.cols(), 20);
  for (int t = 0; t < 20; ++t) EXPECT_NEAR(S(t, t), d / 2.0f, 1e-5);
  EXPECT_NEAR(S(2, 7), P.row(2).dot(P.row(7)), 1e-5);
  EXPECT_FLOAT_EQ(S(2, 7), S(7, 2));
  EXPECT_NEAR(pe_wavelength(0, d), 2 * M_PI, 1e-5);
  EXPECT_NEAR(pe_wavelength(1, d), 20 * M_PI, 1e-3);
}

TEST(LayerNorm, MatchesTorchFormula) {
  Mat x(2, 4);
  x << 1, 2, 3, 4, -1, 0, 0, 5;
  LayerNormWeights w{RowVec::Ones(4) * 2.0f, RowVec::Ones(4) * 0.5f};
  Mat y;
  LayerNormTrace tr;
  layer_norm_forward(x, w, y, &tr);
  EXPECT_FLOAT_EQ(tr.mean(0), 2.5f);
  EXPECT_FLOAT_EQ(tr.var(0), 1.25f);  // biased: ((1.5² + .5²) · 2) / 4
  EXPECT_NEAR(y(0, 0), (1 - 2.5f) / std::sqrt(1.25f + 1e-5f) * 2 + 0.5f, 1e-6);
  EXPECT_FLOAT_EQ(tr.mean(1), 1.0f);
  EXPECT_FLOAT_EQ(tr.var(1), 5.5f);  // deviations −2, −1, −1, 4 → (4 + 1 + 1 + 16) / 4
}

TEST(FeedForward, ReluAndExactGelu) {
  Mat x(1, 3);
  x << -1.0f, 0.0f, 2.0f;
  Mat r = x;
  activation_forward(Activation::Relu, r);
  EXPECT_EQ(r(0, 0), 0.0f);
  EXPECT_EQ(r(0, 2), 2.0f);
  Mat g = x;
  activation_forward(Activation::Gelu, g);
  EXPECT_NEAR(g(0, 0), -0.15865525f, 1e-6);  // −1 · Φ(−1)
  EXPECT_NEAR(g(0, 2), 1.9544997f, 1e-6);    // 2 · Φ(2)
}

// Pre-LN and post-LN on the same weights: different outputs, each matching its formula.
TEST(Residual, PreAndPostFollowTheirFormulas) {
  Mat x(2, 3);
  x << 1, 2, 4, 0, -1, 3;
  LayerNormWeights ln{RowVec::Ones(3), RowVec::Zero(3)};
  auto sub = [](const Mat& in, Mat& out) { out = in * 2.0f; };  // Sublayer(x) = 2x
  Mat post, pre, expect_post, expect_pre, n;
  residual_block(NormPlacement::Post, ln, x, sub, post, nullptr);
  residual_block(NormPlacement::Pre, ln, x, sub, pre, nullptr);
  layer_norm_forward(x + 2.0f * x, ln, expect_post, nullptr);  // LN(x + 2x)
  layer_norm_forward(x, ln, n, nullptr);
  expect_pre = x + 2.0f * n;  // x + 2·LN(x)
  EXPECT_LT((post - expect_post).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT((pre - expect_pre).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_GT((pre - post).cwiseAbs().maxCoeff(), 0.5);
  // Post-LN output is normalised (mean 0 per token); pre-LN keeps the raw stream.
  EXPECT_NEAR(post.row(0).mean(), 0.0f, 1e-6);
  EXPECT_NEAR(pre(0, 0), 1.0f + 2.0f * n(0, 0), 1e-6);
}

}  // namespace
}  // namespace sf
