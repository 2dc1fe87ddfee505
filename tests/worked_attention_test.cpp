// The lectures' worked example ("Transformer Architecture"; "Attention is All You Need —
// Transformer in details"): "Thinking" attends to "Thinking" and "Machines" with q·k = 112 and 96,
// d_k = 64, so the scaled scores are 14 and 12 and the weights 0.88 and 0.12, computed here by
// hand and checked against core/analysis/worked_attention.h.
#include "analysis/worked_attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/mask.h"

namespace sf {
namespace {

TEST(WorkedAttention, ThinkingMachines) {
  // 64 components each: q = 1, k1 = 1.75, k2 = 1.5, so q·k1 = 64 · 1.75 = 112, q·k2 = 96.
  const std::vector<float> q(64, 1.0f), k1(64, 1.75f), k2(64, 1.5f);
  const std::vector<float> v1 = {1, 0}, v2 = {0, 1};
  auto w = worked_attention(q, {k1, k2}, {v1, v2});
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_EQ(w->d_k, 64);
  EXPECT_FLOAT_EQ(w->sqrt_dk, 8.0f);
  EXPECT_FLOAT_EQ(w->dots[0], 112.0f);
  EXPECT_FLOAT_EQ(w->dots[1], 96.0f);
  EXPECT_FLOAT_EQ(w->scaled[0], 14.0f);
  EXPECT_FLOAT_EQ(w->scaled[1], 12.0f);
  EXPECT_FLOAT_EQ(w->max, 14.0f);
  EXPECT_FLOAT_EQ(w->exps[0], 1.0f);
  EXPECT_NEAR(w->exps[1], std::exp(-2.0), 1e-7);
  const double e2 = std::exp(2.0);  // softmax(14, 12) = (e²/(e²+1), 1/(e²+1)) = (0.8808, 0.1192)
  EXPECT_NEAR(w->weights[0], e2 / (e2 + 1), 1e-6);
  EXPECT_NEAR(w->weights[1], 1 / (e2 + 1), 1e-6);
  EXPECT_NEAR(w->weights[0], 0.88, 0.001);
  EXPECT_NEAR(w->sum, 1 + std::exp(-2.0), 1e-6);
  // The output is 0.88 v1 + 0.12 v2: the lecture's answer (c).
  ASSERT_EQ(w->out.size(), 2u);
  EXPECT_NEAR(w->out[0], e2 / (e2 + 1), 1e-6);
  EXPECT_NEAR(w->out[1], 1 / (e2 + 1), 1e-6);
}

// Three keys of length 2, values of length 3, by hand: q = (1, 2); k = (1, 0), (0, 1), (1, 1):
// dots 1, 2, 3; √2 scale; weights ∝ exp(j/√2).
TEST(WorkedAttention, ThreeKeysByHand) {
  auto w = worked_attention({1, 2}, {{1, 0}, {0, 1}, {1, 1}}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  ASSERT_TRUE(w.ok());
  const double r = std::sqrt(2.0);
  double z = 0;
  for (int j = 1; j <= 3; ++j) z += std::exp(j / r);
  for (int j = 0; j < 3; ++j) {
    EXPECT_FLOAT_EQ(w->dots[j], j + 1.0f);
    EXPECT_NEAR(w->scaled[j], (j + 1) / r, 1e-6);
    EXPECT_NEAR(w->weights[j], std::exp((j + 1) / r) / z, 1e-6);
    EXPECT_NEAR(w->out[j], w->weights[j], 1e-7);
  }
}

TEST(WorkedAttention, MismatchedLengthsAreNamed) {
  auto w = worked_attention({1, 2}, {{1, 0}, {1}}, {{1}, {1}});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().find("k2 has 1 components, q has 2"), std::string::npos) << w.error();
  w = worked_attention({1}, {{1}, {1}}, {{1, 2}, {1}});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().find("v2"), std::string::npos);
  EXPECT_FALSE(worked_attention({1}, {}, {}).ok());
  EXPECT_FALSE(worked_attention({}, {{}}, {{1}}).ok());
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// A recorded attention (2 query heads reading 1 K/V head, causal mask over 3 positions): every
// cell's written-out arithmetic gives the recorded raw score and weight.
TEST(AttentionCell, ReproducesTheRecordedCell) {
  Mat q(3, 4), k(3, 2), v(3, 2);
  q << 0.5f, -1, 0.25f, 2, 1, 0.5f, -0.5f, 1, -1, 1.5f, 0.75f, -0.25f;
  k << 1, 0.5f, -0.5f, 2, 0.25f, -1;
  v << 1, 0, 0, 1, 1, 1;
  Mat mask(3, 3);
  mask << 0, kMasked, kMasked, 0, 0, kMasked, 0, 0, 0;
  AttentionTrace a;
  Mat concat;
  attend(q, k, v, Heads(2, 1), {mask}, concat, &a);
  a.q = q, a.k = k, a.v = v;  // as attention_forward records them
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        const AttentionCell c = attention_cell(a, h, i, j);
        EXPECT_EQ(c.d_k, 2);
        EXPECT_FLOAT_EQ(c.sqrt_dk, std::sqrt(2.0f));
        EXPECT_EQ(c.q, (std::vector<float>{q(i, 2 * h), q(i, 2 * h + 1)}));
        EXPECT_EQ(c.k, (std::vector<float>{k(j, 0), k(j, 1)}));  // the one K/V head
        EXPECT_NEAR(c.dot, c.raw, 1e-6);
        EXPECT_EQ(c.visible, i + 1);
        EXPECT_EQ(c.masked, j > i);
        EXPECT_TRUE(c.computed);
        EXPECT_NEAR(c.softmax, c.weight, 1e-6) << h << i << j;
        if (j > i) {
          EXPECT_EQ(c.softmax, 0.0f);
        }
        ASSERT_EQ(c.row.size(), 3u);
        EXPECT_EQ(c.row[static_cast<size_t>(j)], j > i ? kMasked : a.score(static_cast<size_t>(h), i, j));
      }
    }
  }
}

TEST(AttentionCell, AScoreNotComputedStaysOutOfTheRow) {
  Mat q = Mat::Ones(2, 2), k = Mat::Ones(2, 2), v = Mat::Ones(2, 2);
  AttentionTrace a;
  Mat concat;
  attend(q, k, v, Heads(1), {Mat::Zero(2, 2)}, concat, &a);
  a.raw_scores[0](0, 1) = NAN;  // as a view of cached steps leaves a key the row never saw
  Mat mask = a.masks[0];
  mask(0, 1) = kMasked;
  a.masks = {mask};
  const AttentionCell c = attention_cell(a, 0, 0, 1);
  EXPECT_FALSE(c.computed);
  EXPECT_EQ(c.softmax, 0.0f);
  EXPECT_EQ(attention_cell(a, 0, 0, 0).visible, 1);
}

}  // namespace
}  // namespace sf
