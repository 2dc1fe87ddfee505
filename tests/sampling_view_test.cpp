// What the explorer shows of sampling: the raw, tempered and renormalised probabilities
// (sampling_table) against a hand computation and the draw itself; a settings change that keeps
// the decoded prefix; the embedding formula a decoder stage states for each kind of model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "stepper/decoding.h"
#include "stepper/session.h"
#include "stepper/stage.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SamplingTable, RawTemperedAndRenormalised) {
  RowVec logits(5);
  logits << 2.0f, 1.0f, 0.5f, 0.0f, -1.0f;
  DecodeSettings s;
  s.strategy = Strategy::Sample;
  s.temperature = 2.0f;
  s.top_k = 2;
  const SamplingTable t = sampling_table(logits, s, 5);
  // By hand, in double: softmax at T = 1 and T = 2; the two kept tokens renormalised.
  const double l[5] = {2.0, 1.0, 0.5, 0.0, -1.0};
  double z1 = 0, z2 = 0;
  for (double x : l) z1 += std::exp(x), z2 += std::exp(x / 2);
  const double k = std::exp(l[0] / 2) / z2 + std::exp(l[1] / 2) / z2;
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.kept, 2);
  EXPECT_NEAR(t.kept_mass, k, 1e-6);
  EXPECT_FLOAT_EQ(t.temperature, 2.0f);
  for (int i = 0; i < 5; ++i) {
    const SamplingRow& r = t.rows[static_cast<size_t>(i)];
    EXPECT_EQ(r.id, i);  // most likely first
    EXPECT_NEAR(r.p, std::exp(l[i]) / z1, 1e-6);
    EXPECT_NEAR(r.p_temp, std::exp(l[i] / 2) / z2, 1e-6);
    EXPECT_EQ(r.kept, i < 2);
    EXPECT_NEAR(r.p_kept, i < 2 ? std::exp(l[i] / 2) / z2 / k : 0.0, 1e-6);
  }
  // The draw's own probability is the table's p' of the token drawn.
  for (uint64_t seed = 1; seed < 20; ++seed) {
    Rng rng(seed);
    SampleInfo info;
    const int id = sample_token(logits, s, rng, &info);
    ASSERT_LT(id, 2);
    EXPECT_FLOAT_EQ(info.prob, t.rows[static_cast<size_t>(id)].p_kept);
  }
  // A token outside the top rows is appended when asked for.
  const SamplingTable two = sampling_table(logits, s, 2, 4);
  ASSERT_EQ(two.rows.size(), 3u);
  EXPECT_EQ(two.rows[2].id, 4);
  EXPECT_FALSE(two.rows[2].kept);
}

// Changing the temperature mid-decode keeps the tokens before the cursor's step and draws again
// from that step on (the random stream starting there); a change of strategy to beam starts over.
TEST(SamplingTable, SettingsChangeKeepsThePrefix) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("deconly_pre_gelu"));
  DecodeSettings s;
  s.strategy = Strategy::Sample;
  s.temperature = 1.0f;
  s.seed = 5;
  auto r = Session::create(m, "x0 x1", "", s, true);
  ASSERT_TRUE(r.ok()) << r.error();
  Session a = std::move(*r);
  a.run_to_end();
  ASSERT_GE(a.steps().size(), 4u);
  ASSERT_TRUE(a.jump_to_step(3));
  std::vector<int> before;
  for (int t = 0; t < 3; ++t) before.push_back(a.steps()[static_cast<size_t>(t)]->chosen);

  Session b = a;
  DecodeSettings hot = s;
  hot.temperature = 3.0f;
  ASSERT_TRUE(b.set_settings(hot).ok());
  b.run_to_end();
  ASSERT_GE(b.steps().size(), 3u);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(b.steps()[static_cast<size_t>(t)]->chosen, before[static_cast<size_t>(t)]) << t;
    EXPECT_TRUE(b.steps()[static_cast<size_t>(t)]->kept);
  }
  if (b.steps().size() > 3) {
    EXPECT_FALSE(b.steps()[3]->kept);
  }
  // Step 3 is drawn with the first number of a fresh stream of the seed, at T = 3.
  if (b.steps().size() > 3) {
    Rng rng(hot.seed);
    const RowVec logits = b.steps()[3]->trace->logits.row(b.steps()[3]->trace->logits.rows() - 1);
    EXPECT_EQ(b.steps()[3]->chosen, sample_token(logits, hot, rng, nullptr));
    EXPECT_FLOAT_EQ(b.steps()[3]->sampling.temperature, 3.0f);
  }
  // The Choose stage of a kept step says so, and names both probabilities.
  int choose_index = -1;
  for (const Stage& st : b.stages())
    if (st.kind == StageKind::Choose && st.step == 1) choose_index = st.index;
  ASSERT_GE(choose_index, 0);
  const Stage choose = b.stage(choose_index);
  EXPECT_THAT(choose.formula, HasSubstr("kept"));
  EXPECT_THAT(choose.formula, HasSubstr("p' = "));
  EXPECT_THAT(choose.formula, HasSubstr("the model's p = "));

  Session c = a;
  DecodeSettings beam = s;
  beam.strategy = Strategy::Beam;
  ASSERT_TRUE(c.set_settings(beam).ok());
  c.run_to_end();
  for (const auto& st : c.steps()) EXPECT_FALSE(st->kept);
}

// The decoder's embed stage states the formula the model computes: × √d only when it scales.
TEST(SamplingTable, EmbeddingFormulaFollowsTheConfig) {
  StepDims d;
  Config vaswani = test::load_fixture_model("encdec_pre_relu_sin").config;
  ASSERT_TRUE(vaswani.scale_embeddings);
  EXPECT_THAT(describe_decoder_stage(vaswani, 0, d).formula, HasSubstr("E[id] · √"));
  auto gpt2 = load_model(test::fixture("hf/gpt2-tiny"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.error();
  ASSERT_FALSE(gpt2->config.scale_embeddings);
  const Stage e = describe_decoder_stage(gpt2->config, 0, d);
  EXPECT_EQ(e.kind, StageKind::Embed);
  EXPECT_THAT(e.formula, Not(HasSubstr("√")));
  EXPECT_THAT(e.formula, HasSubstr("x = E[id] + P[t] (learned)"));
}

}  // namespace
}  // namespace sf
