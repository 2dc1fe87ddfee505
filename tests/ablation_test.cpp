// Ablation and activation patching against the independent float64 walk of tests/reference/
// make_inspect_fixtures.py (ablated logits, KL, recovered logit differences on the golden fixture
// models), and their identities on every family the project opens: ablating nothing is the clean
// run, patching nothing is the corrupted run, patching every activation is the clean run.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>

#include "analysis/ablation.h"
#include "analysis/patching.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "stepper/run.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

struct AblationCase {
  Model model;
  TensorFile want;
  PreparedInput in;  // the fixture's source and its target without trailing <pad>s
};

AblationCase load_case(const std::string& cs) {
  AblationCase c;
  c.model = test::load_fixture_model(cs);
  TensorFile ex = test::load_expected(cs);
  auto f = read_safetensors(test::fixture("inspect/" + cs + ".inspect.safetensors"));
  EXPECT_TRUE(f.ok()) << f.error();
  if (f.ok()) c.want = std::move(*f);
  if (c.model.config.has_encoder()) c.in.src_ids = test::ids_of(*ex.find("src_ids"));
  c.in.tgt_ids = test::ids_of(*c.want.find("run.tgt_ids"));
  return c;
}

double worst_diff(const Mat& have, const Tensor& want) {
  double worst = 0;
  for (Eigen::Index i = 0; i < have.rows(); ++i)
    for (Eigen::Index j = 0; j < have.cols(); ++j)
      worst = std::max(worst, std::abs(double(have(i, j)) - want.f32[size_t(i * have.cols() + j)]));
  return worst;
}

class Ablation : public ::testing::TestWithParam<std::string> {};

TEST_P(Ablation, AblatedLogitsAndKlMatchTheReference) {
  AblationCase c = load_case(GetParam());
  const char* modes[] = {"zero", "mean"};
  for (int k = 0; k < 2; ++k) {
    auto targets = parse_ablation(c.model, c.want.metadata.at(std::string("ablate.") + modes[k]));
    ASSERT_TRUE(targets.ok()) << targets.error();
    auto mode = parse_ablation_mode(modes[k]);
    ASSERT_TRUE(mode.ok());
    auto r = run_ablation(c.model, c.in, *targets, *mode);
    ASSERT_TRUE(r.ok()) << r.error();
    const Tensor* want = c.want.find(std::string("ablate.") + modes[k] + ".logits");
    ASSERT_TRUE(want);
    ASSERT_EQ(r->ablated.decoder.logits.rows(), want->shape[0]);
    EXPECT_LE(worst_diff(r->ablated.decoder.logits, *want), 1e-5) << GetParam() << " " << modes[k];
    EXPECT_NEAR(r->kl, c.want.find("ablate.kl")->f32[size_t(k)], 1e-5) << GetParam() << " " << modes[k];
    EXPECT_GT(r->kl, 0.0);
    EXPECT_EQ(r->position, int(c.in.tgt_ids.size()) - 1);
  }
}

TEST_P(Ablation, PatchingMatchesTheReference) {
  AblationCase c = load_case(GetParam());
  const bool encdec = c.model.config.has_encoder();
  PatchInputs p;
  p.clean = p.corrupt = c.in;
  (encdec ? p.clean.src_ids : p.clean.tgt_ids) = test::ids_of(*c.want.find("patch.clean_ids"));
  (encdec ? p.corrupt.src_ids : p.corrupt.tgt_ids) = test::ids_of(*c.want.find("patch.corrupt_ids"));
  const Tensor* q = c.want.find("patch.query");
  p.answer = int(q->i64[0]);
  p.wrong = int(q->i64[1]);
  std::vector<PatchWhat> kinds = {PatchWhat::Resid, PatchWhat::Attn, PatchWhat::Mlp, PatchWhat::Heads};
  if (encdec) kinds.insert(kinds.end(), {PatchWhat::Cross, PatchWhat::CrossHeads});
  for (PatchWhat w : kinds) {
    int calls = 0, last_total = 0;
    auto r = activation_patching(c.model, p, w, [&](int done, int total) {
      ++calls;
      EXPECT_EQ(done, calls);
      last_total = total;
    });
    ASSERT_TRUE(r.ok()) << r.error();
    const Tensor* want = c.want.find(std::string("patch.") + to_string(w));
    ASSERT_TRUE(want) << to_string(w);
    ASSERT_EQ(r->rows(), want->shape[0]);
    ASSERT_EQ(r->cols(), want->shape[1]);
    EXPECT_EQ(calls, r->rows() * r->cols());
    EXPECT_EQ(last_total, calls);
    EXPECT_NEAR(r->clean_ld, c.want.find("patch.ld")->f32[0], 1e-5);
    EXPECT_NEAR(r->corrupt_ld, c.want.find("patch.ld")->f32[1], 1e-5);
    for (int l = 0; l < r->rows(); ++l)
      for (int i = 0; i < r->cols(); ++i)
        EXPECT_NEAR(r->recovered[size_t(l)][size_t(i)], want->f32[size_t(l * r->cols() + i)], 1e-5)
            << GetParam() << " " << to_string(w) << " L" << l << " " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Ablation,
                         ::testing::Values("deconly_pre_gelu", "deconly_post_relu_learned", "encdec_post_relu_sin",
                                           "encdec_pre_gelu_shared", "encdec_pre_3layer_odd"));

// The Hugging Face families against tests/reference/hf/make_ablation_fixtures.py: the references
// of models.py / decoders.py with their attention (concatenated heads) and MLP output projection
// wrapped. Logits at 1e-4, as the families' own logits are checked (hf_decoders_test.cpp).
class HfAblation : public ::testing::TestWithParam<std::string> {};

TEST_P(HfAblation, AblatedLogitsMatchTheReference) {
  auto m = load_model(test::fixture("hf/" + GetParam()));
  ASSERT_TRUE(m.ok()) << m.error();
  auto f = read_safetensors(test::fixture("inspect/hf-" + GetParam() + ".ablate.safetensors"));
  ASSERT_TRUE(f.ok()) << f.error();
  PreparedInput in;
  (m->config.has_decoder() ? in.tgt_ids : in.src_ids) = test::ids_of(*f->find("ids"));
  for (const char* mode : {"zero", "mean"}) {
    auto targets = parse_ablation(*m, f->metadata.at(std::string("ablate.") + mode));
    ASSERT_TRUE(targets.ok()) << targets.error();
    auto r = run_ablation(*m, in, *targets, *parse_ablation_mode(mode));
    ASSERT_TRUE(r.ok()) << r.error();
    const Tensor* want = f->find(std::string("ablate.") + mode + ".logits");
    ASSERT_TRUE(want);
    const Mat& have = stack_logits(*m, r->ablated);
    ASSERT_EQ(have.rows(), want->shape[0]);
    ASSERT_EQ(have.cols(), want->shape[1]);
    EXPECT_LE(worst_diff(have, *want), 1e-4) << GetParam() << " " << mode;
    EXPECT_GT((have - stack_logits(*m, r->clean)).cwiseAbs().maxCoeff(), 1e-3) << "the ablation changes the logits";
  }
}

INSTANTIATE_TEST_SUITE_P(Families, HfAblation,
                         ::testing::Values("gpt2-tiny", "bert-tiny", "llama-tiny", "qwen2-tiny-bf16",
                                           "mistral-tiny-sharded", "pythia-tiny"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

// ---------------------------------------------------------------- identities, every family

struct Family {
  std::string path;   // a fixture model file or Hugging Face folder
  std::string clean;  // two prompts of the same token length
  std::string corrupt;
};

void PrintTo(const Family& f, std::ostream* os) { *os << f.path; }

class Identities : public ::testing::TestWithParam<Family> {
 protected:
  void SetUp() override {
    auto m = load_model(test::fixture(GetParam().path));
    ASSERT_TRUE(m.ok()) << m.error();
    model = std::move(*m);
    auto a = prepare_input(model, GetParam().clean);
    auto b = prepare_input(model, GetParam().corrupt);
    ASSERT_TRUE(a.ok()) << a.error();
    ASSERT_TRUE(b.ok()) << b.error();
    p.clean = *a;
    p.corrupt = *b;
    const int pos = prediction_position(model, p.clean);
    const Trace tc = run_forward(model, p.clean), tk = run_forward(model, p.corrupt);
    const Mat& lc = stack_logits(model, tc);
    // answer: the clean run's top token; wrong: the corrupted run's, or the clean run's second.
    Eigen::Index best, wrong;
    lc.row(pos).maxCoeff(&best);
    p.answer = int(best);
    stack_logits(model, tk).row(pos).maxCoeff(&wrong);
    if (int(wrong) == p.answer) {
      Mat row = lc.row(pos);
      row(0, p.answer) = -1e30f;
      row.row(0).maxCoeff(&wrong);
    }
    p.wrong = int(wrong);
  }
  Model model;
  PatchInputs p;
};

Stack stack_of(const Model& m) { return predicting_stack(m.config); }
int layers_of(const Model& m) {
  return stack_of(m) == Stack::Encoder ? m.config.n_encoder_layers : m.config.n_decoder_layers;
}

TEST_P(Identities, AblatingNothingIsTheCleanRun) {
  RunOptions opt;
  opt.intervention = std::make_shared<Intervention>();
  const Trace a = run_forward(model, p.clean), b = run_forward(model, p.clean, opt);
  EXPECT_EQ(stack_logits(model, a), stack_logits(model, b));
  auto r = run_ablation(model, p.clean, {}, EditMode::Zero);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->kl, 0.0);
  EXPECT_FALSE(r->top_changed());
}

// Largest |a − b| of two logit matrices of the same shape.
double logit_diff(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  return a.rows() == b.rows() && a.cols() == b.cols() ? double((a - b).cwiseAbs().maxCoeff()) : 1e30;
}

TEST_P(Identities, PatchingEverythingIsCleanAndNothingIsCorrupted) {
  const Trace clean = run_forward(model, p.clean), corrupt = run_forward(model, p.corrupt);
  // Everything the stack adds to its stream — the stream entering layer 0 and every sublayer
  // output of every layer, at every position — taken from the clean run.
  auto all = std::make_shared<Intervention>();
  std::vector<PatchWhat> kinds = {PatchWhat::Resid, PatchWhat::Attn, PatchWhat::Mlp};
  if (model.config.has_cross_attention()) kinds.push_back(PatchWhat::Cross);
  for (int l = 0; l < layers_of(model); ++l)
    for (PatchWhat w : kinds) {
      if (w == PatchWhat::Resid && l > 0) continue;
      const auto one = patch_intervention(model, clean, w, l, -1);
      for (const Edit& e : one->edits()) all->add(e);
    }
  RunOptions opt;
  opt.intervention = all;
  EXPECT_LE(logit_diff(stack_logits(model, run_forward(model, p.corrupt, opt)), stack_logits(model, clean)), 1e-5)
      << "patching everything gives the clean run";
  opt.intervention = std::make_shared<Intervention>();
  EXPECT_EQ(stack_logits(model, run_forward(model, p.corrupt, opt)), stack_logits(model, corrupt))
      << "patching nothing gives the corrupted run";
  // The whole stream entering layer 0 is everything a decoder-only or encoder-only stack reads.
  if (!model.config.has_encoder() || !model.config.has_decoder()) {
    opt.intervention = patch_intervention(model, clean, PatchWhat::Resid, 0, -1);
    EXPECT_LE(logit_diff(stack_logits(model, run_forward(model, p.corrupt, opt)), stack_logits(model, clean)), 1e-5);
    auto r = activation_patching(model, p, PatchWhat::Resid);
    ASSERT_TRUE(r.ok()) << r.error();
    // At layer 0 the stream at a position where the prompts agree is the same in both runs.
    const std::vector<int>& a = model.config.has_decoder() ? p.clean.tgt_ids : p.clean.src_ids;
    const std::vector<int>& b = model.config.has_decoder() ? p.corrupt.tgt_ids : p.corrupt.src_ids;
    std::vector<int> differing;
    for (int i = 0; i < r->cols(); ++i) {
      if (a[size_t(i)] != b[size_t(i)]) {
        differing.push_back(i);
        continue;
      }
      EXPECT_NEAR(r->recovered[0][size_t(i)], 0.0, 1e-5) << i;
    }
    ASSERT_GE(differing.size(), 1u) << "the prompts differ";
    if (differing.size() == 1) {  // the one differing token carries everything
      EXPECT_NEAR(r->recovered[0][size_t(differing[0])], 1.0, 1e-4);
    }
  }
}

TEST_P(Identities, AZeroedHeadIsZeroInTheRecordingAndTheOthersAreNot) {
  auto r = run_ablation(model, p.clean, {{SiteKind::SelfAttention, layers_of(model) - 1, 0}}, EditMode::Zero);
  ASSERT_TRUE(r.ok()) << r.error();
  const AttentionTrace& a = stack_of(model) == Stack::Encoder ? r->ablated.encoder.layers.back().self_attn
                                                              : r->ablated.decoder.layers.back().self_attn;
  const AttentionTrace& c = stack_of(model) == Stack::Encoder ? r->clean.encoder.layers.back().self_attn
                                                              : r->clean.decoder.layers.back().self_attn;
  const Eigen::Index dk = a.concat.cols() / a.n_heads;
  EXPECT_EQ(a.concat.leftCols(dk).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_EQ(a.concat.rightCols(a.concat.cols() - dk), c.concat.rightCols(c.concat.cols() - dk));
  EXPECT_GT(r->kl, 0.0);
  // Mean ablation keeps the head's average: its columns are constant over the positions.
  auto mean = run_ablation(model, p.clean, {{SiteKind::SelfAttention, layers_of(model) - 1, 0}}, EditMode::Mean);
  ASSERT_TRUE(mean.ok()) << mean.error();
  const AttentionTrace& m = stack_of(model) == Stack::Encoder ? mean->ablated.encoder.layers.back().self_attn
                                                              : mean->ablated.decoder.layers.back().self_attn;
  for (Eigen::Index i = 0; i < m.concat.rows(); ++i)
    for (Eigen::Index j = 0; j < dk; ++j) EXPECT_NEAR(m.concat(i, j), c.concat.col(j).mean(), 1e-5);
  // A whole MLP: its recorded output is zero.
  auto mlp = run_ablation(model, p.clean, {{SiteKind::Mlp, 0, -1}}, EditMode::Zero);
  ASSERT_TRUE(mlp.ok()) << mlp.error();
  const FeedForwardTrace& f =
      stack_of(model) == Stack::Encoder ? mlp->ablated.encoder.layers[0].ffn : mlp->ablated.decoder.layers[0].ffn;
  EXPECT_EQ(f.out.cwiseAbs().maxCoeff(), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Families, Identities,
                         ::testing::Values(Family{"deconly_pre_gelu.safetensors", "x1 x2 x3 x4", "x1 x5 x3 x4"},
                                           Family{"encdec_post_relu_sin.safetensors", "a b c", "a d c"},
                                           Family{"hf/gpt2-tiny", "the cat sat on the", "the dog sat on the"},
                                           Family{"hf/bert-tiny", "the cat sat on the [MASK] .",
                                                  "the dog sat on the [MASK] ."},
                                           Family{"hf/llama-tiny", "the man is a", "the men is a"},
                                           Family{"hf/qwen2-tiny-bf16", "the man is a", "the men is a"},
                                           Family{"hf/mistral-tiny-sharded", "the man is a", "the men is a"},
                                           Family{"hf/pythia-tiny", "the man is a", "the men is a"},
                                           Family{"hf/marian-tiny", "it is 2026", "it is 2025"}));

// ---------------------------------------------------------------- command line

TEST(AblateCli, TraceWritesTheAblatedRunUnderTheUsualNames) {
  const std::string model = test::fixture("deconly_pre_gelu.safetensors");
  const std::string out = test::temp_path("ablated.safetensors");
  std::string so, se;
  ASSERT_EQ(
      test::run_stepformer("trace --model " + model + " --src 'x1 x2 x3' --ablate 1.0,0.mlp --out " + out, so, se), 0)
      << se;
  EXPECT_THAT(so, HasSubstr("KL(clean || ablated)"));
  auto f = read_safetensors(out);
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f->metadata.at("ablate"), "1.0,0.mlp");
  EXPECT_EQ(f->metadata.at("ablate.mode"), "zero");
  // The same numbers as the core's ablated run.
  Model m = test::load_fixture_model("deconly_pre_gelu");
  auto in = prepare_input(m, "x1 x2 x3");
  ASSERT_TRUE(in.ok());
  auto targets = parse_ablation(m, "1.0,0.mlp");
  ASSERT_TRUE(targets.ok()) << targets.error();
  auto r = run_ablation(m, *in, *targets, EditMode::Zero);
  ASSERT_TRUE(r.ok());
  const Tensor* logits = f->find("logits");
  ASSERT_TRUE(logits);
  const Mat& want = r->ablated.decoder.logits;
  ASSERT_EQ(logits->f32.size(), size_t(want.size()));
  for (Eigen::Index i = 0; i < want.rows(); ++i)
    for (Eigen::Index j = 0; j < want.cols(); ++j) ASSERT_EQ(logits->f32[size_t(i * want.cols() + j)], want(i, j));
  const Tensor* ffn = f->find("decoder.layers.0.ffn.out");
  ASSERT_TRUE(ffn);
  for (float x : ffn->f32) ASSERT_EQ(x, 0.0f);
}

TEST(AblateCli, DecodeTakesTheSameOptions) {
  const std::string model = test::fixture("deconly_pre_gelu.safetensors");
  std::string so, se;
  ASSERT_EQ(
      test::run_stepformer("decode --model " + model + " --src 'x1 x2 x3' --max-len 3 --ablate 0.1,1.mlp", so, se), 0)
      << se;
  EXPECT_THAT(so, HasSubstr("output:"));
  ASSERT_EQ(test::run_stepformer(
                "decode --model " + model + " --src 'x1 x2 x3' --max-len 3 --ablate 0.1 --ablate-mode mean", so, se),
            0)
      << se;
  EXPECT_THAT(se, HasSubstr("recomputes the whole sequence"));
}

TEST(AblateCli, PatchWritesACsvWithAHeaderRow) {
  const std::string model = test::fixture("deconly_pre_gelu.safetensors");
  const std::string out = test::temp_path("patch.csv");
  std::string so, se;
  ASSERT_EQ(test::run_stepformer("patch --model " + model +
                                     " --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer x4 --wrong x6 --what resid "
                                     "--out " +
                                     out,
                                 so, se),
            0)
      << se;
  const std::string csv = test::read_text(out);
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "layer,position,token,recovered");
  int rows = 0;
  while (std::getline(lines, line)) ++rows;
  EXPECT_EQ(rows, 2 * 4);  // 2 layers × <s> + 3 tokens
  // The same numbers as the core.
  Model m = test::load_fixture_model("deconly_pre_gelu");
  PatchInputs p;
  p.clean = *prepare_input(m, "x1 x2 x3");
  p.corrupt = *prepare_input(m, "x1 x5 x3");
  p.answer = m.config.tgt_vocab.id("x4");
  p.wrong = m.config.tgt_vocab.id("x6");
  auto r = activation_patching(m, p, PatchWhat::Resid);
  ASSERT_TRUE(r.ok()) << r.error();
  std::istringstream again(csv);
  std::getline(again, line);
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < 4; ++i) {
      std::getline(again, line);
      EXPECT_NEAR(std::stod(line.substr(line.rfind(',') + 1)), r->recovered[size_t(l)][size_t(i)], 1e-7) << line;
    }
  ASSERT_EQ(test::run_stepformer("patch --model " + model +
                                     " --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer x4 --wrong x6 --what heads "
                                     "--out " +
                                     out,
                                 so, se),
            0)
      << se;
  EXPECT_EQ(test::read_text(out).substr(0, 20), "layer,head,recovered");
}

struct BadInput {
  std::string args;
  std::string message;
};
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.args; }

class AblateCliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(AblateCliBadInput, SaysWhatWasExpectedAndExitsWithOne) {
  const std::string model = test::fixture("deconly_pre_gelu.safetensors");
  const std::string out = test::temp_path("bad.out");
  std::string args = GetParam().args;
  for (size_t at; (at = args.find("MODEL")) != std::string::npos;) args.replace(at, 5, model);
  std::string so, se;
  EXPECT_EQ(test::run_stepformer(args + " --out " + out, so, se), 1) << se;
  EXPECT_THAT(se, HasSubstr(GetParam().message));
  std::ifstream written(out);
  EXPECT_FALSE(written.good()) << "nothing is written";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AblateCliBadInput,
    ::testing::Values(
        BadInput{"patch --model MODEL --clean 'x1 x2 x3' --corrupt 'x1 x5' --answer x4 --wrong x6 --what resid",
                 "expected the clean and corrupted prompts to have the same number of tokens, found 4 and 3"},
        BadInput{"patch --model MODEL --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer banana --wrong x6 --what resid",
                 "--answer: expected a token of the vocabulary, found 'banana'"},
        BadInput{"patch --model MODEL --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer x4 --wrong x4 --what heads",
                 "expected different answer and wrong tokens"},
        BadInput{"patch --model MODEL --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer x4 --wrong x6 --what cross",
                 "expected resid, attn, mlp or heads for a model without cross-attention, found cross"},
        BadInput{"patch --model MODEL --clean 'x1 x2 x3' --corrupt 'x1 x5 x3' --answer x4 --wrong x6 --what everything",
                 "what: expected resid, attn, cross, mlp, heads or cross-heads, found 'everything'"},
        BadInput{"trace --model MODEL --src 'x1 x2' --ablate 1.2", "ablate 1.2: expected a head in 0..1, found 2"},
        BadInput{"trace --model MODEL --src 'x1 x2' --ablate 5.0", "ablate 5.0: expected a layer in 0..1, found 5"},
        BadInput{"trace --model MODEL --src 'x1 x2' --ablate 0.x1", "found cross-attention in a"},
        BadInput{"trace --model MODEL --src 'x1 x2' --ablate 0.head", "ablate: expected LAYER.HEAD"},
        BadInput{"trace --model MODEL --src 'x1 x2' --ablate 0.1 --ablate-mode half",
                 "ablate-mode: expected zero or mean, found 'half'"},
        BadInput{"decode --model MODEL --src 'x1 x2' --ablate 0.7", "ablate 0.7: expected a head in 0..1, found 7"}));

TEST(Patching, StopsWhenCancelledAndRefusesEqualRuns) {
  Model m = test::load_fixture_model("deconly_pre_gelu");
  PatchInputs p;
  p.clean = *prepare_input(m, "x1 x2 x3");
  p.corrupt = *prepare_input(m, "x1 x5 x3");
  p.answer = m.config.tgt_vocab.id("x4");
  p.wrong = m.config.tgt_vocab.id("x6");
  std::atomic<bool> cancel{false};
  int seen = 0;
  auto r = activation_patching(
      m, p, PatchWhat::Resid,
      [&](int done, int) {
        seen = done;
        if (done == 3) cancel = true;
      },
      &cancel);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(seen, 3);
  EXPECT_FALSE(std::isnan(r->recovered[0][2]));
  EXPECT_TRUE(std::isnan(r->recovered[0][3]));
  p.corrupt = p.clean;
  auto same = activation_patching(m, p, PatchWhat::Resid);
  ASSERT_FALSE(same.ok());
  EXPECT_THAT(same.error(), HasSubstr("expected the clean and corrupted runs to differ"));
  auto cell = patched_run(m, p, PatchWhat::Heads, 0, 2);
  ASSERT_FALSE(cell.ok());
  EXPECT_THAT(cell.error(), HasSubstr("expected a head in 0..1, found 2"));
}

}  // namespace
}  // namespace sf
