// The positional-encoding and causal-mask demonstrations (analysis/word_order.h,
// analysis/causal_leak.h): without PE an encoder gives a token the same output in either order;
// without the causal mask the decoder's rows reach the future.
#include <gtest/gtest.h>

#include <memory>

#include "analysis/causal_leak.h"
#include "analysis/word_order.h"
#include "stepper/run.h"
#include "test_util.h"

namespace sf {
namespace {

PreparedInput prepared(const Model& m, const std::string& src, const std::string& tgt) {
  auto in = prepare_input(m, src, tgt);
  EXPECT_TRUE(in.ok()) << in.error();
  return in.ok() ? std::move(*in) : PreparedInput{};
}

TEST(WordOrder, ReversedPositionKeepsTheSkippedPrefix) {
  EXPECT_EQ(reversed_position(0, 5, 0), 4);
  EXPECT_EQ(reversed_position(4, 5, 0), 0);
  EXPECT_EQ(reversed_position(0, 5, 1), 0);
  EXPECT_EQ(reversed_position(1, 5, 1), 4);
  EXPECT_EQ(reversed_position(4, 5, 1), 1);
}

TEST(WordOrder, WithoutPeAnEncoderIgnoresTheOrder) {
  const Model m = test::load_fixture_model("encdec_post_relu_sin");
  const PreparedInput in = prepared(m, "a b c d", "");
  const WordOrder w = word_order(m, in);
  ASSERT_EQ(w.ids, in.src_ids);
  EXPECT_EQ(w.reversed, std::vector<int>(in.src_ids.rbegin(), in.src_ids.rend()));
  ASSERT_EQ(w.without_pe.per_token.size(), in.src_ids.size());
  EXPECT_LT(w.without_pe.max_diff, 1e-4f);
  EXPECT_GT(w.with_pe.max_diff, 1e-2f);
  float mx = 0;
  for (float x : w.with_pe.per_token) mx = std::max(mx, x);
  EXPECT_EQ(mx, w.with_pe.max_diff);
  // Without PE the memory is a permutation of itself, so the first output token is the same.
  EXPECT_EQ(w.without_pe.next, w.without_pe.next_reversed);
  EXPECT_GE(w.with_pe.next, 0);
}

TEST(WordOrder, DecoderOnlyKeepsTheStartTokenFirst) {
  const Model m = test::load_fixture_model("deconly_pre_gelu");
  const PreparedInput in = prepared(m, "x0 x1 x2", "");
  const WordOrder w = word_order(m, in);
  ASSERT_EQ(w.ids, in.tgt_ids);
  ASSERT_GE(w.ids.size(), 3u);
  EXPECT_EQ(w.reversed.front(), w.ids.front());
  EXPECT_EQ(w.reversed.back(), w.ids[1]);
  // <s> sees only itself in either order: the same output with and without PE.
  EXPECT_LT(w.without_pe.per_token[0], 1e-5f);
  EXPECT_GE(w.with_pe.next, 0);
  EXPECT_GE(w.with_pe.next_reversed, 0);
}

TEST(CausalLeak, WithoutTheMaskRowsReachTheFuture) {
  const Model m = test::load_fixture_model("encdec_pre_relu_sin");
  const PreparedInput in = prepared(m, "a b c", "");
  const std::vector<int> tgt = {m.config.tgt_vocab.bos(), 5, 6, 7};
  const CausalLeak d = causal_leak(m, in, tgt);
  const int n = static_cast<int>(tgt.size());
  ASSERT_EQ(d.future_mass.size(), tgt.size());
  for (int h = 0; h < m.config.n_heads; ++h)
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) EXPECT_EQ(d.causal.weights[static_cast<size_t>(h)](i, j), 0.0f);
  // Row 0 by hand: the heads' mean weight on keys 1..n−1.
  float mass = 0;
  for (int h = 0; h < m.config.n_heads; ++h)
    for (int j = 1; j < n; ++j) mass += d.leaky.weights[static_cast<size_t>(h)](0, j);
  EXPECT_NEAR(d.future_mass[0], mass / static_cast<float>(m.config.n_heads), 1e-6);
  EXPECT_GT(d.future_mass[0], 1e-3f);
  EXPECT_EQ(d.future_mass[static_cast<size_t>(n - 1)], 0.0f);  // the last row has no future
  EXPECT_GT(d.max_logit_diff, 1e-3f);
  EXPECT_EQ(future_mass(d.causal), std::vector<float>(tgt.size(), 0.0f));
}

}  // namespace
}  // namespace sf
