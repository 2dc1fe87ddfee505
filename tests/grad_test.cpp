// Gradient checks of the backward pass, two independent ways:
//   1. every parameter's gradient against the PyTorch reference (tests/fixtures, grad.<param>),
//      on all fixture cases: both norm placements, ReLU/GELU, sinusoidal/learned positions,
//      shared embeddings, decoder-only, padding in source and target;
//   2. central finite differences on tiny models, per component and for the whole model.
// Tolerance against the fixtures (tests/fixtures/README.md): |Δ| ≤ 1e-6 + 1e-4 · max|ref| per tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "model/decoder.h"
#include "model/encoder.h"
#include "model/mask.h"
#include "base/rng.h"
#include "test_util.h"
#include "train/backward.h"
#include "train/loss.h"
#include "train/trainer.h"

namespace sf {
namespace {

// Forward with a full trace (or a training recording), loss, backward: returns the loss and
// fills g. With matrices = Overwrite the backward writes the weight matrices' gradients over NaN
// (what a trainer's update leaves is whatever the last step wrote; NaN shows any not written).
double loss_and_grads(const Model& m, const std::vector<int>& src, const std::vector<int>& tgt,
                      const std::vector<int>& tgt_y, int batch, float smoothing, Weights* g, float dropout = 0,
                      Trace* recording = nullptr, GemmOut matrices = GemmOut::Accumulate) {
  Trace own;
  Trace& t = recording ? *recording : own;
  if (dropout > 0)
    draw_dropout_masks(t, m.config, batch, static_cast<int>(src.size()) / batch, static_cast<int>(tgt.size()) / batch,
                       dropout, 77);
  EncoderContext enc;
  Mat memory;
  if (m.config.has_encoder()) {
    memory = encode(m, src, batch, &t.encoder);
    enc = {&memory, &src};
  }
  Mat logits = decode(m, tgt, batch, enc, nullptr, &t.decoder);
  Mat dlogits;
  LossResult r = cross_entropy(logits, tgt_y, m.config.tgt_vocab.pad(), smoothing, g ? &dlogits : nullptr);
  if (g) {
    allocate(*g, m.config);
    for (ParamRef& p : param_table(*g, m.config)) {
      const bool written_over = matrices == GemmOut::Overwrite && p.kind == ParamRef::Matrix;
      std::fill(p.data, p.data + p.numel(), written_over ? std::nanf("") : 0.0f);
    }
    model_backward(m, t, dlogits, *g, true, matrices);
  }
  return r.loss;
}

// A fixture case's model, its PyTorch results and the example they were computed on.
struct FixtureCase {
  Model m;
  TensorFile ex;
  std::vector<int> src, tgt, tgt_y;
  explicit FixtureCase(const std::string& cs) : m(test::load_fixture_model(cs)), ex(test::load_expected(cs)) {
    if (m.config.has_encoder()) src = test::ids_of(*ex.find("src_ids"));
    tgt = test::ids_of(*ex.find("tgt_ids"));
    tgt_y = test::ids_of(*ex.find("tgt_y"));
  }
};

class GradFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GradFixture, EveryParameterMatchesPyTorch) {
  const std::string cs = GetParam();
  const FixtureCase f(cs);
  const Model& m = f.m;
  const TensorFile& ex = f.ex;
  const std::vector<int>&src = f.src, &tgt = f.tgt, &tgt_y = f.tgt_y;
  Weights g;
  const double loss = loss_and_grads(m, src, tgt, tgt_y, 1, 0.1f, &g);
  EXPECT_NEAR(loss, ex.find("loss")->f32[0], 1e-5) << cs;
  int compared = 0;
  for (const ParamRef& p : param_table(g, m.config)) {
    const Tensor* want = ex.find("grad." + p.name);
    ASSERT_TRUE(want) << cs << ": fixture has no grad." << p.name;
    ASSERT_EQ(want->numel(), p.numel()) << p.name;
    double max_ref = 0, max_diff = 0;
    for (int64_t i = 0; i < p.numel(); ++i) {
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(want->f32[static_cast<size_t>(i)])));
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(p.data[i]) - want->f32[static_cast<size_t>(i)]));
    }
    EXPECT_LE(max_diff, 1e-6 + 1e-4 * max_ref) << cs << ": grad." << p.name << " (max|ref| " << max_ref << ")";
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

// The trainer's recording keeps only what the backward reads: the gradients are the same, bit for
// bit, and the copies that only views read are not there.
TEST_P(GradFixture, ATrainingRecordingGivesTheSameGradients) {
  const std::string cs = GetParam();
  const FixtureCase f(cs);
  const Model& m = f.m;
  const std::vector<int>&src = f.src, &tgt = f.tgt, &tgt_y = f.tgt_y;
  Weights full, lean;
  Trace t;
  t.encoder.kind = t.decoder.kind = Recording::Training;
  const double loss_full = loss_and_grads(m, src, tgt, tgt_y, 1, 0.1f, &full);
  const double loss_lean = loss_and_grads(m, src, tgt, tgt_y, 1, 0.1f, &lean, 0, &t);
  EXPECT_EQ(loss_full, loss_lean) << cs;
  auto F = param_table(full, m.config), L = param_table(lean, m.config);
  ASSERT_EQ(F.size(), L.size());
  for (size_t i = 0; i < F.size(); ++i)
    EXPECT_TRUE(std::equal(F[i].data, F[i].data + F[i].numel(), L[i].data)) << cs << ": grad." << F[i].name;
  const DecoderLayerTrace& first = t.decoder.layers.front();
  EXPECT_TRUE(first.self_attn.raw_scores.empty());
  EXPECT_EQ(first.self_attn.out.size(), 0);
  EXPECT_EQ(first.self_block.sublayer_out.size(), 0);
  EXPECT_EQ(first.self_block.norm.out.size(), 0);
  EXPECT_EQ(first.ffn.out.size(), 0);
  EXPECT_EQ(first.ffn.hidden_pre.size() == 0, m.config.activation == Activation::Relu) << cs;
  if (t.decoder.layers.size() > 1) {
    EXPECT_EQ(first.ffn_block.output.size(), 0) << cs;
  }
  EXPECT_GT(t.decoder.layers.back().last_block(m.config).output.size(), 0) << cs;  // the final LayerNorm's input
  EXPECT_TRUE(t.decoder.probs.size() == 0 && t.decoder.log_probs.size() == 0);
  EXPECT_TRUE(t.decoder.embed.scaled.size() == 0 && t.decoder.embed.pe.size() == 0 && t.decoder.embed.sum.size() == 0);
  EXPECT_EQ(t.decoder.embed.ids, tgt);  // what embed_backward reads
}

// The trainer's backward writes each weight matrix's gradient with its one product, over what the
// last step left there: the same gradients, bit for bit, as adding onto zeros (every matrix
// written, none twice; a generator tied to the embedding still adds to the embedding's gradient).
TEST_P(GradFixture, OverwritingTheMatricesGivesTheSameGradients) {
  const std::string cs = GetParam();
  const FixtureCase f(cs);
  const std::vector<int>&src = f.src, &tgt = f.tgt, &tgt_y = f.tgt_y;
  Weights added, written;
  Trace t;
  t.encoder.kind = t.decoder.kind = Recording::Training;
  loss_and_grads(f.m, src, tgt, tgt_y, 1, 0.1f, &added);
  loss_and_grads(f.m, src, tgt, tgt_y, 1, 0.1f, &written, 0, &t, GemmOut::Overwrite);
  auto A = param_table(added, f.m.config), W = param_table(written, f.m.config);
  ASSERT_EQ(A.size(), W.size());
  for (size_t i = 0; i < A.size(); ++i)
    EXPECT_TRUE(std::equal(A[i].data, A[i].data + A[i].numel(), W[i].data)) << cs << ": grad." << A[i].name;
}

INSTANTIATE_TEST_SUITE_P(AllCases, GradFixture,
                         ::testing::Values("encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned",
                                           "encdec_pre_gelu_shared", "deconly_pre_gelu", "deconly_post_relu_learned",
                                           "encdec_pre_3layer_odd", "deconly_pre_attn_only"));

}  // namespace

// ---------------------------------------------------------------------------------------------
// Finite differences. Each component's backward is checked on a random scalar loss
// ℓ = Σ out ⊙ R (so d out = R) by central differences along a random direction v of its input
// and of one parameter: (ℓ(p + εv) − ℓ(p − εv)) / 2ε ≈ ⟨∇ℓ, v⟩. Float32 throughout, so ε = 1e-2
// and a 1% relative tolerance.
namespace {

Mat random_mat(Rng& rng, int r, int c, float scale = 1.0f) {
  Mat m(r, c);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = scale * rng.normal();
  return m;
}

double dot(const Mat& a, const Mat& b) { return static_cast<double>(a.cwiseProduct(b).sum()); }
double dot(const RowVec& a, const RowVec& b) { return static_cast<double>(a.cwiseProduct(b).sum()); }

// Directional derivative by central differences of f along v at x (x is restored).
template <class M, class F>
double central(M& x, const M& v, F&& f, float eps = 1e-2f) {
  const M x0 = x;
  x = x0 + eps * v;
  const double up = f();
  x = x0 - eps * v;
  const double down = f();
  x = x0;
  return (up - down) / (2.0 * eps);
}

void expect_close(double fd, double an, const std::string& what) {
  EXPECT_NEAR(fd, an, 1e-2 * std::max(1.0, std::fabs(an)))
      << what << ": finite difference " << fd << ", backward " << an;
}

AttentionWeights random_attention(Rng& rng, int d) {
  AttentionWeights w;
  for (Linear* l : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj}) {
    l->weight = random_mat(rng, d, d, 0.3f);
    l->bias = random_mat(rng, 1, d, 0.1f);
  }
  return w;
}

AttentionWeights zero_attention(int d) {
  AttentionWeights g;
  for (Linear* l : {&g.q_proj, &g.k_proj, &g.v_proj, &g.o_proj}) {
    l->weight = Mat::Zero(d, d);
    l->bias = RowVec::Zero(d);
  }
  return g;
}

}  // namespace

TEST(FiniteDifferences, LayerNorm) {
  Rng rng(1);
  const int n = 5, d = 8;
  Mat x = random_mat(rng, n, d, 2.0f);
  LayerNormWeights w{random_mat(rng, 1, d), random_mat(rng, 1, d)};
  const Mat R = random_mat(rng, n, d);
  auto f = [&]() {
    Mat y;
    layer_norm_forward(x, w, y, nullptr);
    return dot(y, R);
  };
  LayerNormTrace tr;
  Mat y, dx;
  layer_norm_forward(x, w, y, &tr);
  LayerNormWeights g{RowVec::Zero(d), RowVec::Zero(d)};
  layer_norm_backward(x, w, tr, R, g, dx);
  const Mat vx = random_mat(rng, n, d);
  const RowVec vw = random_mat(rng, 1, d), vb = random_mat(rng, 1, d);
  expect_close(central(x, vx, f), dot(dx, vx), "dx");
  expect_close(central(w.weight, vw, f), dot(g.weight, vw), "d weight");
  expect_close(central(w.bias, vb, f), dot(g.bias, vb), "d bias");

  // With a skip path's gradient: dx = skip + LN'(R), the parameter grads as without it.
  const Mat skip = random_mat(rng, n, d);
  LayerNormWeights g2{RowVec::Zero(d), RowVec::Zero(d)};
  Mat dx2;
  layer_norm_backward(x, w, tr, R, g2, dx2, &skip);
  EXPECT_LT((dx2 - (skip + dx)).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_EQ(g2.weight, g.weight);
  EXPECT_EQ(g2.bias, g.bias);
}

TEST(FiniteDifferences, FeedForwardReluAndGelu) {
  for (Activation act : {Activation::Relu, Activation::Gelu}) {
    Rng rng(2);
    const int n = 4, d = 6, dff = 10;
    Mat x = random_mat(rng, n, d);
    FeedForwardWeights w{{random_mat(rng, dff, d, 0.4f), random_mat(rng, 1, dff, 0.1f), nullptr, {}},
                         {random_mat(rng, d, dff, 0.4f), random_mat(rng, 1, d, 0.1f), nullptr, {}},
                         {}};
    const Mat R = random_mat(rng, n, d);
    auto f = [&]() {
      Mat y;
      feed_forward(w, act, x, y, nullptr);
      return dot(y, R);
    };
    FeedForwardTrace tr;
    Mat y, dx;
    feed_forward(w, act, x, y, &tr);
    FeedForwardWeights g{
        {Mat::Zero(dff, d), RowVec::Zero(dff), nullptr, {}}, {Mat::Zero(d, dff), RowVec::Zero(d), nullptr, {}}, {}};
    feed_forward_backward(w, act, x, tr, R, g, dx);
    const std::string name = act == Activation::Relu ? "relu " : "gelu ";
    const Mat vx = random_mat(rng, n, d), v1 = random_mat(rng, dff, d), v2 = random_mat(rng, d, dff);
    expect_close(central(x, vx, f, 1e-3f), dot(dx, vx), name + "dx");
    expect_close(central(w.fc1.weight, v1, f, 1e-3f), dot(g.fc1.weight, v1), name + "d fc1.weight");
    expect_close(central(w.fc2.weight, v2, f, 1e-3f), dot(g.fc2.weight, v2), name + "d fc2.weight");
  }
}

TEST(FiniteDifferences, MaskedAttentionBatchOfTwo) {
  Rng rng(3);
  const int d = 8, heads = 2, nq = 4, nk = 5, B = 2;
  const AttentionWeights w0 = random_attention(rng, d);
  AttentionWeights w = w0;
  Mat xq = random_mat(rng, B * nq, d), xkv = random_mat(rng, B * nk, d);
  // Sequence 0: causal-like mask with a padded key; sequence 1: last two keys padded.
  std::vector<Mat> masks{make_mask(nq, {5, 6, 7, 8, 0}, 0, true), make_mask(nq, {5, 6, 7, 0, 0}, 0, false)};
  const Mat R = random_mat(rng, B * nq, d);
  auto f = [&]() {
    Mat y;
    attention_forward(w, heads, xq, xkv, masks, y, nullptr);
    return dot(y, R);
  };
  AttentionTrace tr;
  Mat y, dxq, dxkv;
  attention_forward(w, heads, xq, xkv, masks, y, &tr);
  AttentionWeights g = zero_attention(d);
  attention_backward(w, xq, xkv, tr, R, g, dxq, &dxkv);
  const Mat vq = random_mat(rng, B * nq, d), vkv = random_mat(rng, B * nk, d);
  expect_close(central(xq, vq, f), dot(dxq, vq), "dx_q");
  expect_close(central(xkv, vkv, f), dot(dxkv, vkv), "dx_kv");
  for (auto [name, p, gp] : {std::tuple{"q", &w.q_proj, &g.q_proj},
                             {"k", &w.k_proj, &g.k_proj},
                             {"v", &w.v_proj, &g.v_proj},
                             {"o", &w.o_proj, &g.o_proj}}) {
    const Mat vw = random_mat(rng, d, d);
    expect_close(central(p->weight, vw, f), dot(gp->weight, vw), std::string(name) + "_proj.weight");
  }
  // Padded keys receive no gradient at all: their K and V rows never reach the output.
  for (int r : {nk + 3, nk + 4, 4}) EXPECT_EQ(dxkv.row(r).cwiseAbs().maxCoeff(), 0.0f) << "padded key row " << r;

  // Accumulate adds the keys' and values' input grads to what dx_kv held (a decoder stack's
  // cross-attention layers share the memory's grad).
  const Mat held = random_mat(rng, B * nk, d);
  Mat dxq2, dxkv2 = held;
  AttentionWeights g2 = zero_attention(d);
  attention_backward(w, xq, xkv, tr, R, g2, dxq2, &dxkv2, GemmOut::Accumulate);
  EXPECT_EQ(dxq2, dxq);
  EXPECT_LT((dxkv2 - (held + dxkv)).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_EQ(g2.k_proj.weight, g.k_proj.weight);
}

// Self-attention passes no dx_kv: queries, keys and values read one input, and its grad is the
// three paths' sum (against finite differences of attention over x as all three).
TEST(FiniteDifferences, SelfAttentionSumsItsThreeInputGrads) {
  Rng rng(4);
  const int d = 8, heads = 2, n = 4, B = 2;
  const AttentionWeights w = random_attention(rng, d);
  Mat x = random_mat(rng, B * n, d);
  std::vector<Mat> masks{make_mask(n, {5, 6, 7, 8}, 0, true), make_mask(n, {5, 6, 7, 0}, 0, true)};
  const Mat R = random_mat(rng, B * n, d);
  auto f = [&]() {
    Mat y;
    attention_forward(w, heads, x, x, masks, y, nullptr);
    return dot(y, R);
  };
  AttentionTrace tr;
  Mat y, dx, dxq, dxkv;
  attention_forward(w, heads, x, x, masks, y, &tr);
  AttentionWeights g = zero_attention(d), g2 = zero_attention(d);
  attention_backward(w, x, x, tr, R, g, dx, nullptr);
  const Mat vx = random_mat(rng, B * n, d);
  expect_close(central(x, vx, f), dot(dx, vx), "dx");
  attention_backward(w, x, x, tr, R, g2, dxq, &dxkv);  // the same as the two grads summed
  EXPECT_LT((dx - (dxq + dxkv)).cwiseAbs().maxCoeff(), 1e-5f);
}

// The whole model, every parameter tensor, both norm placements, by directional differences of
// the label-smoothed loss (tiny models; complements the PyTorch fixtures).
namespace {

// Every parameter tensor of a whole model (d_ff 0: attention-only layers) against finite differences.
void check_whole_model(NormPlacement norm, Arch arch, Positional pos, float dropout, int d_ff) {
  Config c;
  c.arch = arch;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_encoder_layers = arch == Arch::EncoderDecoder ? 2 : 0;
  c.n_decoder_layers = 2;
  c.d_ff = d_ff;
  c.max_len = 8;
  c.norm = norm;
  c.activation = Activation::Gelu;
  c.positional = pos;
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>", "a", "b", "c", "d"};
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  if (arch == Arch::EncoderDecoder) c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  Weights w;
  init_xavier(w, c, 5);
  Model m = Model::make(c, std::move(w));
  // Two sequences with padding on both sides.
  const std::vector<int> src{4, 5, 6, 0, 7, 6, 5, 4};
  const std::vector<int> tgt{1, 4, 5, 0, 1, 6, 7, 4};
  const std::vector<int> y{4, 5, 2, 0, 6, 7, 4, 2};
  Weights g;
  loss_and_grads(m, src, tgt, y, 2, 0.1f, &g, dropout);
  Rng rng(9);
  auto G = param_table(g, c);
  auto P = param_table(m.weights, c);
  for (size_t i = 0; i < P.size(); ++i) {
    std::vector<float> dir(static_cast<size_t>(P[i].numel()));
    double an = 0;
    for (size_t j = 0; j < dir.size(); ++j) {
      dir[j] = rng.normal();
      an += static_cast<double>(dir[j]) * G[i].data[j];
    }
    const std::vector<float> p0(P[i].data, P[i].data + P[i].numel());
    const float eps = 4e-3f;  // 1e-2 leaves a 2 % truncation error on attention weights of post-LN + dropout
    auto at = [&](float s) {
      for (size_t j = 0; j < dir.size(); ++j) P[i].data[j] = p0[j] + s * dir[j];
      return loss_and_grads(m, src, tgt, y, 2, 0.1f, nullptr, dropout);
    };
    const double fd = (at(eps) - at(-eps)) / (2.0 * eps);
    std::copy(p0.begin(), p0.end(), P[i].data);
    EXPECT_NEAR(fd, an, 2e-3 + 2e-2 * std::fabs(an)) << P[i].name;
  }
}

}  // namespace

class WholeModelFd : public ::testing::TestWithParam<std::tuple<NormPlacement, Arch, Positional, float>> {};

TEST_P(WholeModelFd, EveryParameterTensor) {
  const auto [norm, arch, pos, dropout] = GetParam();
  check_whole_model(norm, arch, pos, dropout, 12);
}

// An attention-only decoder (no feed-forward sublayers): the stack's gradient flows through the
// self-attention blocks alone.
TEST(WholeModelFdAttentionOnly, EveryParameterTensor) {
  check_whole_model(NormPlacement::Pre, Arch::DecoderOnly, Positional::Sinusoidal, 0.0f, 0);
  check_whole_model(NormPlacement::Post, Arch::DecoderOnly, Positional::Learned, 0.0f, 0);
  check_whole_model(NormPlacement::Pre, Arch::DecoderOnly, Positional::Learned, 0.3f, 0);
}

INSTANTIATE_TEST_SUITE_P(
    PrePost, WholeModelFd,
    ::testing::Values(std::tuple{NormPlacement::Pre, Arch::EncoderDecoder, Positional::Sinusoidal, 0.0f},
                      std::tuple{NormPlacement::Post, Arch::EncoderDecoder, Positional::Learned, 0.0f},
                      std::tuple{NormPlacement::Pre, Arch::DecoderOnly, Positional::Learned, 0.0f},
                      std::tuple{NormPlacement::Post, Arch::DecoderOnly, Positional::Sinusoidal, 0.0f},
                      // With fixed dropout masks in the trace (training mode).
                      std::tuple{NormPlacement::Pre, Arch::EncoderDecoder, Positional::Learned, 0.3f},
                      std::tuple{NormPlacement::Post, Arch::EncoderDecoder, Positional::Sinusoidal, 0.3f}));

}  // namespace sf
