// The rotary tab's numbers (analysis/rotary_view.h) on the tiny hub fixtures' recorded queries
// and keys, against the model's own recording and the plain reference rotation (reference/rotary.h):
// the pair's vectors are the recorded columns, turning them back gives the recorded un-rotated
// projections, the recomputed scores are the recorded Q_h K_hᵀ, and a fixed (q̃, k̃) placed at
// (m, n) scores the same for every m − n.
#include "analysis/rotary_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "io/hf_model.h"
#include "model/decoder.h"
#include "reference/rotary.h"
#include "hf_fixture.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

struct Recorded {
  Model m;
  DecoderTrace t;
};

Recorded run(const std::string& name, int n = 9) {
  Recorded r{test::open_hf_stand_in(name), {}};
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(5 + 17 * i % 250);
  decode(r.m, ids, 1, {}, nullptr, &r.t);
  return r;
}

TEST(RotaryView, PairsAreTheRecordedColumnsAndTurnBackToTheUnrotatedProjections) {
  const Recorded r = run("llama-tiny");
  const AttentionTrace& a = r.t.layers[1].self_attn;
  const int dk = r.m.config.d_k();  // 12: six frequencies, pairs (i, i + 6)
  auto v = rotary_view(r.m.config, a.q, a.k, 3, 2, 4, 1);
  ASSERT_TRUE(v.ok()) << v.error();
  EXPECT_EQ(v->layout.rot_dim, 12);
  EXPECT_EQ(v->layout.pass_through(), 0);
  EXPECT_EQ(v->kv_head, 1);  // 4 query heads over 2 K/V heads: head 3 reads K/V head 1
  EXPECT_EQ(v->dim_a, 2);
  EXPECT_EQ(v->dim_b, 8);
  EXPECT_FLOAT_EQ(v->theta, r.m.rope_inv_freq(2));
  EXPECT_NEAR(v->wavelength, 2 * 3.14159265 / r.m.rope_inv_freq(2), 1e-3);
  ASSERT_EQ(v->q_pair.rows(), 9);
  for (int t = 0; t < 9; ++t) {
    EXPECT_EQ(v->q_pair(t, 0), a.q(t, 3 * dk + 2));
    EXPECT_EQ(v->q_pair(t, 1), a.q(t, 3 * dk + 8));
    EXPECT_EQ(v->k_pair(t, 0), a.k(t, 1 * dk + 2));
    EXPECT_EQ(v->k_pair(t, 1), a.k(t, 1 * dk + 8));
    EXPECT_NEAR(v->q0_pair(t, 0), a.q_unrotated(t, 3 * dk + 2), 1e-5);
    EXPECT_NEAR(v->q0_pair(t, 1), a.q_unrotated(t, 3 * dk + 8), 1e-5);
    EXPECT_NEAR(v->k0_pair(t, 0), a.k_unrotated(t, 1 * dk + 2), 1e-5);
    EXPECT_NEAR(v->k0_pair(t, 1), a.k_unrotated(t, 1 * dk + 8), 1e-5);
    // A rotation keeps the length: |q_t| on the pair is |q̃_t| at every position.
    EXPECT_NEAR(v->q_pair.row(t).norm(), v->q0_pair.row(t).norm(), 1e-5);
  }
  // The fan: query 4's un-rotated pair turned to every position, one step of θ_2 apart, equal in
  // length, and at position 4 the recorded rotated pair.
  ASSERT_EQ(v->q_fan.rows(), 9);
  for (int p = 0; p < 9; ++p) {
    EXPECT_NEAR(v->q_fan.row(p).norm(), v->q0_pair.row(4).norm(), 1e-5);
    const double a = std::atan2(v->q_fan(p, 1), v->q_fan(p, 0)), a0 = std::atan2(v->q0_pair(4, 1), v->q0_pair(4, 0));
    EXPECT_NEAR(std::remainder(a - a0 - p * static_cast<double>(v->theta), 2 * 3.14159265358979), 0, 1e-4) << p;
  }
  EXPECT_NEAR(v->q_fan(4, 0), v->q_pair(4, 0), 1e-5);
  EXPECT_NEAR(v->q_fan(4, 1), v->q_pair(4, 1), 1e-5);
  // The recomputed scores are the ones the run recorded, Q_h K_hᵀ (before 1/√d_k).
  EXPECT_LE(test::max_abs_diff(v->scores, a.raw_scores[3]), 1e-5);
  // The pair's share is one term of the head's dot product.
  EXPECT_NEAR(v->pair_scores(5, 2), v->q_pair(5, 0) * v->k_pair(2, 0) + v->q_pair(5, 1) * v->k_pair(2, 1), 1e-6);
}

TEST(RotaryView, TheScoreDependsOnlyOnTheOffsetAsTheReferenceComputesIt) {
  const Recorded r = run("llama-tiny");
  const AttentionTrace& a = r.t.layers[0].self_attn;
  const int dk = r.m.config.d_k();
  auto v = rotary_view(r.m.config, a.q, a.k, 1, 0, 6, 2, {0, 1, 3, -2}, {0, 4, 20});
  ASSERT_TRUE(v.ok()) << v.error();
  const RowVec theta = ref::rotary_frequencies(r.m.config);
  const Mat qt = a.q_unrotated.block(6, 1 * dk, 1, dk), kt = a.k_unrotated.block(2, 0, 1, dk);
  EXPECT_NEAR(v->unrotated_score, (qt * kt.transpose())(0, 0), 1e-5);
  ASSERT_EQ(v->relative.size(), 4u);
  for (const RelativeRow& row : v->relative) {
    // offset −2 leaves out n = 0 (m would be −2)
    ASSERT_EQ(row.at.size(), row.offset < 0 ? 2u : 3u);
    for (const RelativeEntry& e : row.at) {
      EXPECT_EQ(e.m - e.n, row.offset);
      const double want = (ref::rotary(qt, theta, e.m) * ref::rotary(kt, theta, e.n).transpose())(0, 0);
      EXPECT_NEAR(e.score, want, 1e-5) << "m " << e.m << " n " << e.n;
      EXPECT_NEAR(e.score, row.at[0].score, 1e-5) << "offset " << row.offset;
    }
    EXPECT_LT(row.spread, 1e-5);
  }
  // Offset 0 is the un-rotated dot product; other offsets differ from it.
  EXPECT_NEAR(v->relative[0].at[0].score, v->unrotated_score, 1e-5);
  EXPECT_GT(std::fabs(v->relative[1].at[0].score - v->unrotated_score), 1e-4);
  EXPECT_LT(v->max_spread, 1e-5);
}

TEST(RotaryView, PartialRotaryPassesTheLastDimensionsThrough) {
  const Recorded r = run("pythia-tiny");
  const AttentionTrace& a = r.t.layers[0].self_attn;
  auto v = rotary_view(r.m.config, a.q, a.k, 1, 1, 3, 3);
  ASSERT_TRUE(v.ok()) << v.error();
  EXPECT_EQ(v->layout.d_head, 16);
  EXPECT_EQ(v->layout.rot_dim, 4);  // rotary_pct 0.25: pairs (0, 2), (1, 3); 4..15 pass through
  EXPECT_EQ(v->layout.pass_through(), 12);
  EXPECT_EQ(v->dim_a, 1);
  EXPECT_EQ(v->dim_b, 3);
  // Turning the whole head back changes only the rotating dimensions, and gives the recording.
  const int dk = 16;
  Mat q0 = a.q.middleCols(dk, dk);
  unrotate(q0, v->layout);
  EXPECT_LE(test::max_abs_diff(q0, a.q_unrotated.middleCols(dk, dk)), 1e-5);
  EXPECT_EQ(q0.rightCols(12), a.q.middleCols(dk, dk).rightCols(12));
  EXPECT_LE(test::max_abs_diff(v->scores, a.raw_scores[1]), 1e-5);
  for (const RelativeRow& row : v->relative) EXPECT_LT(row.spread, 1e-4);
}

// The explorer's positional-encoding switch on a rotary model turns nothing: q and k are the
// projections as they are, and a query's scores no longer depend on where the keys stand.
TEST(RotaryView, WithoutPositionalEncodingNothingTurns) {
  const Model m = test::open_hf_stand_in("llama-tiny");
  const std::vector<int> ids = {7, 9, 7, 9, 11};
  RunOptions off;
  off.positional_encoding = false;
  DecoderTrace on_t, off_t;
  decode(m, ids, 1, {}, nullptr, &on_t);
  decode(m, ids, 1, {}, nullptr, &off_t, off);
  const AttentionTrace& a = off_t.layers[0].self_attn;
  EXPECT_EQ(a.q, on_t.layers[0].self_attn.q_unrotated);
  EXPECT_GT(test::max_abs_diff(on_t.layers[0].self_attn.q, a.q), 1e-3);
  // Token 7 at positions 0 and 2, token 9 at 1 and 3: the same key rows, so the last query
  // scores them equally without rotation, and differently with it.
  const Mat& s_off = a.raw_scores[0];
  EXPECT_NEAR(s_off(4, 0), s_off(4, 2), 1e-5);
  EXPECT_NEAR(s_off(4, 1), s_off(4, 3), 1e-5);
  const Mat& s_on = on_t.layers[0].self_attn.raw_scores[0];
  EXPECT_GT(std::fabs(s_on(4, 0) - s_on(4, 2)), 1e-4);
}

TEST(RotaryView, BadChoicesAreNamed) {
  const Recorded r = run("llama-tiny", 3);
  const AttentionTrace& a = r.t.layers[0].self_attn;
  auto head = rotary_view(r.m.config, a.q, a.k, 4, 0, 0, 0);
  ASSERT_FALSE(head.ok());
  EXPECT_THAT(head.error(), HasSubstr("expected a head in [0, 4), found 4"));
  auto pair = rotary_view(r.m.config, a.q, a.k, 0, 6, 0, 0);
  ASSERT_FALSE(pair.ok());
  EXPECT_THAT(pair.error(), HasSubstr("expected a frequency in [0, 6), found 6"));
  auto row = rotary_view(r.m.config, a.q, a.k, 0, 0, 3, 0);
  ASSERT_FALSE(row.ok());
  EXPECT_THAT(row.error(), HasSubstr("expected a query row in [0, 3), found 3"));
  auto cols = rotary_view(r.m.config, a.k, a.k, 0, 0, 0, 0);
  ASSERT_FALSE(cols.ok());
  EXPECT_THAT(cols.error(), HasSubstr("expected queries of 4 heads × 12 = 48 columns, found 24"));
  Config sinus = r.m.config;
  sinus.positional = Positional::Sinusoidal;
  auto kind = rotary_view(sinus, a.q, a.k, 0, 0, 0, 0);
  ASSERT_FALSE(kind.ok());
  EXPECT_THAT(kind.error(), HasSubstr("expected a rotary model, found sinusoidal positions"));
}

}  // namespace
}  // namespace sf
