// The lectures' worked example ("Transformer Architecture"; "Attention is All You Need —
// Transformer in details"): "Thinking" attends to "Thinking" and "Machines" with q·k = 112 and 96,
// d_k = 64, so the scaled scores are 14 and 12 and the weights 0.88 and 0.12, computed here by
// hand and checked against core/analysis/worked_attention.h.
#include "analysis/worked_attention.h"

#include <gtest/gtest.h>

#include <cmath>

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
