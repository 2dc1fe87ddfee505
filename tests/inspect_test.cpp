// The inspection tools against the independent float64 walk of tests/reference/
// make_inspect_fixtures.py (logit lens, direct logit attribution, rollout, head-detector scores on
// the golden fixture models), and their identities: the lens's last point is the logits; the
// attribution's parts add up to the logit difference; rollout rows sum to 1.
#include <gtest/gtest.h>

#include "analysis/attribution.h"
#include "analysis/head_detector.h"
#include "analysis/logit_lens.h"
#include "analysis/rollout.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "stepper/run.h"
#include "test_util.h"

namespace sf {
namespace {

struct InspectCase {
  Model model;
  TensorFile want;  // the reference's numbers
  Trace trace;      // the fast path's full recording of the fixture's input
  std::vector<int> tgt;
};

InspectCase run_case(const std::string& cs) {
  InspectCase c;
  c.model = test::load_fixture_model(cs);
  TensorFile ex = test::load_expected(cs);
  auto inspect = read_safetensors(test::fixture("inspect/" + cs + ".inspect.safetensors"));
  EXPECT_TRUE(inspect.ok()) << inspect.error();
  if (inspect.ok()) c.want = std::move(*inspect);
  PreparedInput in;
  if (c.model.config.has_encoder()) in.src_ids = test::ids_of(*ex.find("src_ids"));
  in.tgt_ids = test::ids_of(*ex.find("tgt_ids"));
  c.tgt = in.tgt_ids;
  c.trace = run_forward(c.model, in);
  return c;
}

// Element (i) of a reference tensor stored flat.
float at(const TensorFile& f, const std::string& name, size_t i) { return f.find(name)->f32.at(i); }

class Inspect : public ::testing::TestWithParam<std::string> {};

TEST_P(Inspect, LogitLensMatchesTheReferenceAndEndsOnTheLogits) {
  InspectCase c = run_case(GetParam());
  const LogitLens lens = logit_lens(c.model, c.trace);
  const Tensor* want = c.want.find("lens.logits");
  ASSERT_TRUE(want);
  ASSERT_EQ(static_cast<int64_t>(lens.points.size()), want->shape[0]);
  const int64_t m = want->shape[1], v = want->shape[2];
  for (size_t p = 0; p < lens.points.size(); ++p) {
    ASSERT_EQ(lens.logits[p].rows(), m);
    ASSERT_EQ(lens.logits[p].cols(), v);
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < v; ++j)
        worst = std::max(worst, std::abs(double(lens.logits[p](i, j)) - want->f32[size_t((p * m + i) * v + j)]));
    EXPECT_LE(worst, 1e-4) << GetParam() << ": point " << point_label(lens.points[p]);
  }
  // The last point is the stack's output: the same functions on the same matrix give the logits.
  EXPECT_EQ(lens.logits.back(), c.trace.decoder.logits) << GetParam();
}

TEST_P(Inspect, AttributionMatchesTheReferenceAndAddsUpToTheLogitDifference) {
  InspectCase c = run_case(GetParam());
  const Tensor* q = c.want.find("dla.query");
  ASSERT_TRUE(q);
  auto a = direct_logit_attribution(c.model, c.trace.decoder, int(q->i64[0]), int(q->i64[1]), int(q->i64[2]));
  ASSERT_TRUE(a.ok()) << a.error();
  const Tensor* parts = c.want.find("dla.parts");
  ASSERT_EQ(a->parts.size(), parts->f32.size()) << GetParam();
  for (size_t i = 0; i < a->parts.size(); ++i)
    EXPECT_NEAR(a->parts[i].value, parts->f32[i], 1e-5)
        << GetParam() << ": part " << i << " (" << to_string(a->parts[i].kind) << ", layer " << a->parts[i].layer
        << ", head " << a->parts[i].head << ")";
  EXPECT_NEAR(a->total, at(c.want, "dla.total", 0), 1e-5);
  EXPECT_NEAR(a->sum, a->total, 1e-4) << "the parts add up to the model's own logit difference";
  // The explorer's grid and totals read the parts through these.
  double by_kind = 0;
  for (PartKind k : {PartKind::Embedding, PartKind::Head, PartKind::AttentionBias, PartKind::Mlp, PartKind::NormBias,
                     PartKind::UnembeddingBias})
    by_kind += a->of_kind(k);
  EXPECT_NEAR(by_kind, a->sum, 1e-9);
  for (const AttributionPart& p : a->parts) {
    if (p.kind == PartKind::Head) {
      EXPECT_EQ(a->head(p.layer, p.block, p.head), p.value);
    } else if (p.kind == PartKind::AttentionBias) {
      EXPECT_EQ(a->attention_bias(p.layer, p.block), p.value);
    } else if (p.kind == PartKind::Mlp) {
      EXPECT_EQ(a->mlp(p.layer), p.value);
    }
  }
  EXPECT_EQ(a->attention_bias(99, Block::SelfAttention), 0.0);
}

TEST_P(Inspect, RolloutMatchesTheReference) {
  InspectCase c = run_case(GetParam());
  const std::vector<Mat> r = attention_rollout(decoder_self_attention(c.trace.decoder));
  const Tensor* want = c.want.find("rollout.decoder");
  ASSERT_TRUE(want);
  ASSERT_EQ(static_cast<int64_t>(r.size()), want->shape[0]);
  const int64_t m = want->shape[1];
  for (size_t l = 0; l < r.size(); ++l)
    for (int64_t i = 0; i < m; ++i) {
      EXPECT_NEAR(r[l].row(i).sum(), 1.0, 1e-5);
      for (int64_t j = 0; j < m; ++j) EXPECT_NEAR(r[l](i, j), want->f32[size_t((l * m + i) * m + j)], 1e-5);
    }
  if (const Tensor* enc = c.want.find("rollout.encoder")) {
    const std::vector<Mat> e = attention_rollout(encoder_self_attention(c.trace.encoder));
    ASSERT_EQ(static_cast<int64_t>(e.size()), enc->shape[0]);
    const int64_t n = enc->shape[1];
    for (size_t l = 0; l < e.size(); ++l)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(e[l](i, j), enc->f32[size_t((l * n + i) * n + j)], 1e-5);
  }
}

TEST_P(Inspect, HeadScoresMatchTheReference) {
  InspectCase c = run_case(GetParam());
  const Tensor* want = c.want.find("detect.decoder");
  ASSERT_TRUE(want);
  const int64_t layers = want->shape[1], heads = want->shape[2];
  for (int p = 0; p < kHeadPatterns; ++p) {
    const Mat pattern = detection_pattern(static_cast<HeadPattern>(p), c.tgt);
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t h = 0; h < heads; ++h)
        EXPECT_NEAR(pattern_score(c.trace.decoder.layers[size_t(l)].self_attn.head_weights(0, int(h)), pattern),
                    want->f32[size_t((p * layers + l) * heads + h)], 1e-5)
            << GetParam() << ": " << to_string(static_cast<HeadPattern>(p)) << " L" << l << " h" << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Inspect,
                         ::testing::Values("deconly_pre_gelu", "deconly_post_relu_learned", "encdec_post_relu_sin",
                                           "encdec_pre_gelu_shared", "encdec_pre_3layer_odd"));

// The patterns on a hand-checked sequence: a b c a b c after <s> (ids 9 1 2 3 1 2 3).
TEST(HeadPatterns, OnARepeatedSequence) {
  const std::vector<int> ids = {9, 1, 2, 3, 1, 2, 3};
  const Mat prev = detection_pattern(HeadPattern::PreviousToken, ids);
  const Mat dup = detection_pattern(HeadPattern::DuplicateToken, ids);
  const Mat ind = detection_pattern(HeadPattern::Induction, ids);
  EXPECT_EQ(prev.sum(), 6);
  EXPECT_EQ(prev(4, 3), 1);
  EXPECT_EQ(dup.sum(), 3);  // the second a, b, c each see their first copy
  EXPECT_EQ(dup(4, 1), 1);
  EXPECT_EQ(dup(6, 3), 1);
  EXPECT_EQ(ind.sum(), 3);  // the second a looks at the first b (what followed the first a)
  EXPECT_EQ(ind(4, 2), 1);
  EXPECT_EQ(ind(5, 3), 1);
  EXPECT_EQ(ind(6, 4), 1);  // the second c looks at the second a, which followed the first c
  // A head that does exactly the induction pattern on the second copy scores 1.
  Mat a = Mat::Zero(7, 7);
  for (int i = 0; i < 4; ++i) a(i, 0) = 1;
  a(4, 2) = a(5, 3) = a(6, 4) = 1;
  EXPECT_NEAR(pattern_score(a, ind), 3.0 / 7.0, 1e-12);
  EXPECT_NEAR(pattern_score(a, detection_pattern(HeadPattern::FirstToken, ids)), 4.0 / 7.0, 1e-12);
  EXPECT_EQ(pattern_score(Mat::Zero(7, 7), ind), 0);
}

TEST(HeadDetection, RunsTheRepeatedProbeOnEveryStack) {
  Model m = test::load_fixture_model("encdec_pre_relu_sin");
  auto d = detect_heads(m, 5, 7);
  ASSERT_TRUE(d.ok()) << d.error();
  ASSERT_EQ(d->tokens.size(), 10u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(d->tokens[size_t(i)], d->tokens[size_t(i + 5)]);
  for (int id : d->tokens) EXPECT_FALSE(m.config.src_vocab.is_special(id));
  ASSERT_EQ(d->stacks.size(), 2u);
  EXPECT_EQ(d->stacks[0].side, Side::Encoder);
  EXPECT_EQ(d->stacks[1].ids.size(), 11u);  // <s> r r
  for (const StackScores& s : d->stacks)
    for (const auto& by_layer : s.score)
      for (const auto& heads : by_layer)
        for (double x : heads) {
          EXPECT_GE(x, 0.0);
          EXPECT_LE(x, 1.0 + 1e-9);
        }
  // Deterministic per seed.
  auto again = detect_heads(m, 5, 7);
  EXPECT_EQ(again->tokens, d->tokens);
}

TEST(Attribution, RefusesWhatItCannotAttribute) {
  InspectCase c = run_case("deconly_pre_gelu");
  auto bad_pos = direct_logit_attribution(c.model, c.trace.decoder, 99, 4);
  ASSERT_FALSE(bad_pos.ok());
  EXPECT_NE(bad_pos.error().find("expected a position in 0.."), std::string::npos) << bad_pos.error();
  auto bad_tok = direct_logit_attribution(c.model, c.trace.decoder, 0, 100000);
  ASSERT_FALSE(bad_tok.ok());
  EXPECT_NE(bad_tok.error().find("expected a token id"), std::string::npos) << bad_tok.error();
  DecoderTrace compact;
  auto empty = direct_logit_attribution(c.model, compact, 0, 4);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("full recording"), std::string::npos) << empty.error();
}

TEST(TraceLens, WritesEveryPointAndEndsOnTheLogits) {
  const std::string out = test::temp_path("lens.safetensors");
  std::string so, se;
  ASSERT_EQ(test::run_stepformer("trace --model " + test::fixture("deconly_pre_gelu.safetensors") +
                                     " --src 'x1 x2 x3' --lens --out " + out,
                                 so, se),
            0)
      << se;
  auto f = read_safetensors(out);
  std::remove(out.c_str());
  ASSERT_TRUE(f.ok()) << f.error();
  const Tensor* lens = f->find("lens.logits");
  const Tensor* logits = f->find("logits");
  ASSERT_TRUE(lens && logits);
  ASSERT_EQ(lens->shape.size(), 3u);
  EXPECT_EQ(lens->shape[0], 5);  // embedding, then attention and MLP of two layers
  EXPECT_EQ(lens->shape[1], logits->shape[0]);
  EXPECT_EQ(lens->shape[2], logits->shape[1]);
  const size_t last = size_t(lens->shape[0] - 1) * logits->f32.size();
  for (size_t i = 0; i < logits->f32.size(); ++i) ASSERT_EQ(lens->f32[last + i], logits->f32[i]) << i;
  EXPECT_EQ(f->metadata.at("lens.points"), "embedding,L0 attn,L0 MLP,L1 attn,L1 MLP");
}

}  // namespace
}  // namespace sf
