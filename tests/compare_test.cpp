// Compare mode (core/analysis/compare.h): lockstep alignment of pre-LN and post-LN stage lists, stepping
// back and forth, runs of different lengths, determinism, and the placement switch.
#include <cmath>
#include <cstring>
#include <fstream>

#include "io/checkpoint.h"
#include "analysis/compare.h"
#include "analysis/layer_stats.h"
#include "test_util.h"

namespace sf {
namespace {

const char* kSrc = "3 5 7 2 1";

Comparison make(std::shared_ptr<const Model> a, std::shared_ptr<const Model> b, DecodeSettings d = {}) {
  auto c = Comparison::create(a, b, kSrc, "", d);
  EXPECT_TRUE(c.ok()) << c.error();
  return std::move(*c);
}

// Every fixture's stage keys increase strictly along its stage list (the property the alignment
// rests on).
TEST(Compare, WeightDifferenceOverTheCommonCells) {
  Mat a(2, 3), b(3, 2);
  a << 0.5f, 0.25f, 0.25f, 1, 0, 0;
  b << 0.75f, 0.25f, 0.5f, 0.5f, 1, 0;
  const WeightDifference d = weight_difference(a, b);
  ASSERT_EQ(d.diff.rows(), 2);
  ASSERT_EQ(d.diff.cols(), 2);
  EXPECT_FLOAT_EQ(d.diff(0, 0), -0.25f);
  EXPECT_FLOAT_EQ(d.diff(0, 1), 0.0f);
  EXPECT_FLOAT_EQ(d.diff(1, 0), 0.5f);
  EXPECT_FLOAT_EQ(d.diff(1, 1), -0.5f);
  EXPECT_FLOAT_EQ(d.max_abs, 0.5f);
  EXPECT_TRUE(d.cut);
  EXPECT_FALSE(weight_difference(a, a).cut);
  EXPECT_EQ(weight_difference(a, a).max_abs, 0.0f);
  EXPECT_EQ(weight_difference(Mat(0, 0), a).max_abs, 0.0f);
}

TEST(Compare, KeysIncreaseAlongEveryStageList) {
  for (const char* f :
       {"encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned", "encdec_pre_gelu_shared",
        "deconly_pre_gelu", "deconly_post_relu_learned", "encdec_pre_3layer_odd"}) {
    auto m = test::shared_fixture_model(f);
    const Vocab& v = m->config.has_encoder() ? m->config.src_vocab : m->config.tgt_vocab;
    std::string src;
    for (const std::string& t : v.tokens())
      if (t[0] != '<' && src.size() < 8) src += (src.empty() ? "" : " ") + t;
    DecodeSettings d;
    d.max_len = 4;
    auto s = Session::create(m, src, "", d);
    ASSERT_TRUE(s.ok()) << f << ": " << s.error();
    s->run_to_end();
    for (int i = 1; i < s->stage_count(); ++i)
      EXPECT_TRUE(align_key(*s, i - 1) < align_key(*s, i)) << f << " stage " << i << ": " << describe(align_key(*s, i));
  }
}

// The pairing rules of the header, checked at every point of a pre-LN vs post-LN walk.
TEST(Compare, LockstepPairsPreAndPostStages) {
  // Forced decoding on one target: both runs decode the same number of steps.
  DecodeSettings d;
  d.strategy = Strategy::Forced;
  auto made = Comparison::create(test::shared_fixture_model("encdec_pre_relu_sin"),
                                 test::shared_fixture_model("encdec_post_relu_sin"), kSrc, "3 5", d);
  ASSERT_TRUE(made.ok()) << made.error();
  Comparison c = std::move(*made);
  int points = 0;
  std::vector<AlignKey> seen;
  do {
    ++points;
    seen.push_back(c.key());
    const Session& pre = c.run(0);
    const Session& post = c.run(1);
    const Stage a = pre.current(), b = post.current();
    const AlignKey ka = align_key(pre, pre.cursor()), kb = align_key(post, post.cursor());
    EXPECT_TRUE(ka <= c.key() && kb <= c.key());
    EXPECT_TRUE(ka == c.key() || kb == c.key()) << describe(c.key());
    // Token by token: both runs on the same decoder step (they decode to the same length here).
    EXPECT_EQ(pre.current_step(), post.current_step()) << describe(c.key());
    EXPECT_EQ(a.side, b.side);
    switch (a.kind) {
      case StageKind::Norm:  // pre-LN norm before block (l, β) faces what post-LN had before it
        EXPECT_TRUE(b.kind == StageKind::AddNorm || b.kind == StageKind::Positional || b.kind == StageKind::Embed)
            << a.title << " | " << b.title;
        if (b.kind == StageKind::AddNorm) {
          EXPECT_TRUE(align_key(post, post.cursor()) < ka);
        }
        break;
      case StageKind::SelfAttention:
      case StageKind::CrossAttention:
      case StageKind::FeedForward:
        // The pre-LN sublayer (with its residual add) faces the post-LN sublayer or its AddNorm.
        EXPECT_EQ(b.layer, a.layer) << a.title << " | " << b.title;
        EXPECT_EQ(b.block, a.block) << a.title << " | " << b.title;
        EXPECT_TRUE(b.kind == a.kind || b.kind == StageKind::AddNorm) << a.title << " | " << b.title;
        break;
      case StageKind::FinalNorm:  // faces post-LN's last stage before it: the last AddNorm
        EXPECT_EQ(b.kind, StageKind::AddNorm) << b.title;
        EXPECT_EQ(b.block, Block::FeedForward);
        EXPECT_EQ(
            b.layer,
            (a.side == Side::Encoder ? pre.model().config.n_encoder_layers : pre.model().config.n_decoder_layers) - 1);
        break;
      default:  // embed, positional, memory, logits, choose: the same stage on both sides
        EXPECT_EQ(a.kind, b.kind) << a.title << " | " << b.title;
        EXPECT_EQ(a.step, b.step);
    }
  } while (c.forward());
  EXPECT_TRUE(c.finished());
  EXPECT_TRUE(c.at_end());
  // Every stage of both runs was visited: the timeline is the union of their keys.
  EXPECT_EQ(points, static_cast<int>(c.timeline().size()));
  EXPECT_EQ(c.position(), points - 1);

  // Back retraces the same points in reverse.
  for (int i = points - 2; i >= 0; --i) {
    ASSERT_TRUE(c.back());
    EXPECT_TRUE(c.key() == seen[static_cast<size_t>(i)])
        << describe(c.key()) << " vs " << describe(seen[static_cast<size_t>(i)]);
  }
  EXPECT_FALSE(c.back());
  EXPECT_EQ(c.run(0).cursor(), 0);
  EXPECT_EQ(c.run(1).cursor(), 0);
}

TEST(Compare, TokenStepsStayAligned) {
  DecodeSettings d;
  d.strategy = Strategy::Forced;  // both decode the target's 5 tokens and </s>
  auto made = Comparison::create(test::shared_fixture_model("encdec_pre_relu_sin"),
                                 test::shared_fixture_model("encdec_post_relu_sin"), kSrc, "3 5 7 2 1", d);
  ASSERT_TRUE(made.ok()) << made.error();
  Comparison c = std::move(*made);
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(c.next_token());
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(c.run(i).current_step(), t);
      EXPECT_EQ(c.run(i).current().kind, StageKind::Choose);
    }
    EXPECT_EQ(c.run(0).tokens().size(), c.run(1).tokens().size());
  }
  ASSERT_TRUE(c.prev_token());
  EXPECT_EQ(c.run(0).current_step(), 2);
  EXPECT_EQ(c.run(1).current_step(), 2);
  // Mixing stage steps and token steps keeps the alignment.
  ASSERT_TRUE(c.forward());
  EXPECT_EQ(c.run(0).current_step(), 3);
  EXPECT_EQ(c.run(1).current_step(), 3);
  EXPECT_EQ(c.run(1).current().kind, StageKind::Embed);
  ASSERT_TRUE(c.next_token());
  EXPECT_EQ(c.run(0).current().kind, StageKind::Choose);
  EXPECT_EQ(c.run(0).current_step(), 3);
  c.home();
  EXPECT_EQ(c.run(0).cursor(), 0);
  EXPECT_FALSE(c.prev_token());
}

// When one run stops decoding earlier, it stays on its last stage while the other goes on.
TEST(Compare, FinishedRunStaysOnItsLastStage) {
  // The same weights twice, B with room for only 4 output tokens: B stops first.
  const auto a = test::shared_fixture_model("encdec_pre_relu_sin");
  Config short_cfg = a->config;
  short_cfg.max_len = 5;
  auto shorter = std::make_shared<const Model>(Model::make(short_cfg, a->weights));
  auto made = Comparison::create(a, shorter, "3 5 7", "");
  ASSERT_TRUE(made.ok()) << made.error();
  Comparison c = std::move(*made);
  c.run_to_end();
  const int la = static_cast<int>(c.run(0).steps().size()), lb = static_cast<int>(c.run(1).steps().size());
  ASSERT_GT(la, lb);
  c.home();
  int last_b = -1;
  while (c.next_token()) {
    const int t = c.run(0).current_step();
    if (t < lb) {
      EXPECT_EQ(c.run(1).current_step(), t);
    } else {
      EXPECT_EQ(c.run(1).cursor(), c.run(1).stage_count() - 1) << "step " << t;
      if (last_b >= 0) {
        EXPECT_EQ(c.run(1).cursor(), last_b);
      }
      last_b = c.run(1).cursor();
    }
  }
  EXPECT_EQ(c.run(0).current_step(), la - 1);
  EXPECT_GE(last_b, 0);
  EXPECT_TRUE(c.at_end());
}

// Everything the compare view shows, as numbers.
std::vector<double> numbers(Comparison c) {
  std::vector<double> out;
  c.home();
  do {
    for (int i = 0; i < 2; ++i) {
      const ModelStats st = layer_stats(c.run(i));
      for (const auto* stack : {&st.encoder, &st.decoder})
        for (const LayerStat& l : *stack)
          for (const BlockStat& b : l.blocks) {
            out.push_back(b.mean_norm_out());
            out.push_back(b.mean_ln_mean());
            out.push_back(b.mean_ln_var());
            for (double e : b.entropy) out.push_back(e);
          }
      if (auto r = c.run(i).current_record()) {
        const Mat p = probs_of(*r->trace);
        for (Eigen::Index j = 0; j < p.cols(); ++j) out.push_back(p(p.rows() - 1, j));
      }
      out.push_back(c.run(i).cursor());
    }
  } while (c.forward());
  return out;
}

TEST(Compare, DeterministicOnTheFixturePair) {
  DecodeSettings d;
  d.max_len = 5;
  const std::vector<double> a = numbers(
      make(test::shared_fixture_model("encdec_pre_relu_sin"), test::shared_fixture_model("encdec_post_relu_sin"), d));
  const std::vector<double> b = numbers(
      make(test::shared_fixture_model("encdec_pre_relu_sin"), test::shared_fixture_model("encdec_post_relu_sin"), d));
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 100u);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << "numbers differ between two runs";
}

// The shipped pair (when the training engineer's models are present): the same numbers twice, in
// two processes too (the `compare` command prints them).
TEST(Compare, DeterministicOnTheShippedPair) {
  const std::string pre = test::source_path("assets/models/copy-preln.safetensors");
  const std::string post = test::source_path("assets/models/copy-postln.safetensors");
  if (!std::ifstream(pre) || !std::ifstream(post)) GTEST_SKIP() << "no shipped copy-preln/copy-postln pair yet";
  auto a = load_model(pre), b = load_model(post);
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  auto ma = std::make_shared<const Model>(std::move(*a)), mb = std::make_shared<const Model>(std::move(*b));
  const std::vector<double> x = numbers(make(ma, mb)), y = numbers(make(ma, mb));
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0);
  // Trained on copy, both decode the source back.
  Comparison c = make(ma, mb);
  c.run_to_end();
  EXPECT_EQ(c.run(0).text(), kSrc);
  EXPECT_EQ(c.run(1).text(), kSrc);

  const std::string out1 = test::temp_path("compare1.txt"), out2 = test::temp_path("compare2.txt");
  const std::string cmd =
      std::string(STEPFORMER_BINARY) + " compare --a " + pre + " --b " + post + " --src \"" + kSrc + "\"";
  ASSERT_EQ(std::system((cmd + " > " + out1).c_str()), 0);
  ASSERT_EQ(std::system((cmd + " > " + out2).c_str()), 0);
  std::ifstream f1(out1), f2(out2);
  const std::string t1((std::istreambuf_iterator<char>(f1)), {}), t2((std::istreambuf_iterator<char>(f2)), {});
  EXPECT_GT(t1.size(), 200u);
  EXPECT_EQ(t1, t2);
}

TEST(Compare, PlacementSwitch) {
  const auto keep = test::shared_fixture_model("encdec_pre_relu_sin");
  const Model& pre = *keep;
  const Model post = with_norm_placement(pre, NormPlacement::Post);
  EXPECT_EQ(post.config.norm, NormPlacement::Post);
  EXPECT_EQ(post.weights.encoder_norm.weight.size(), 0);
  EXPECT_EQ(post.weights.decoder_norm.weight.size(), 0);
  // Every tensor a post-LN model has is the pre-LN model's, unchanged.
  const auto tp = param_table(pre.weights, pre.config);
  const auto tq = param_table(post.weights, post.config);
  EXPECT_EQ(tq.size() + 4, tp.size());  // encoder.norm and decoder.norm, weight and bias
  for (const ParamRef& q : tq) {
    bool found = false;
    for (const ParamRef& p : tp)
      if (p.name == q.name) {
        found = true;
        ASSERT_EQ(p.numel(), q.numel());
        EXPECT_EQ(std::memcmp(p.data, q.data, static_cast<size_t>(p.numel()) * sizeof(float)), 0) << q.name;
      }
    EXPECT_TRUE(found) << q.name;
  }
  // Back to pre-LN: fresh final norms (gain 1, bias 0).
  const Model back = with_norm_placement(post, NormPlacement::Pre);
  EXPECT_EQ(back.config.norm, NormPlacement::Pre);
  EXPECT_TRUE(back.weights.decoder_norm.weight.isOnes());
  EXPECT_TRUE(back.weights.encoder_norm.bias.isZero());
  // Saved and loaded like any model.
  const std::string path = test::temp_path("switched.safetensors");
  ASSERT_TRUE(save_model(path, post).ok());
  auto loaded = load_model(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->config.norm, NormPlacement::Post);
  // Same weights, other placement: a different function (an experiment, not an equivalent model).
  Comparison c = make(std::make_shared<const Model>(pre), std::make_shared<const Model>(post));
  ASSERT_TRUE(c.next_token());
  const Mat pa = probs_of(*c.run(0).current_record()->trace);
  const Mat pb = probs_of(*c.run(1).current_record()->trace);
  EXPECT_GT((pa - pb).cwiseAbs().maxCoeff(), 1e-4f);
  // Switching to the placement a model already has changes nothing.
  const Model same = with_norm_placement(pre, NormPlacement::Pre);
  EXPECT_TRUE(same.weights.decoder_norm.weight.isApprox(pre.weights.decoder_norm.weight));
}

TEST(Compare, RefusedInputNamesTheRun) {
  auto c = Comparison::create(test::shared_fixture_model("encdec_pre_relu_sin"),
                              test::shared_fixture_model("deconly_pre_gelu"), "", "");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("run A"), std::string::npos) << c.error();
}

}  // namespace
}  // namespace sf
