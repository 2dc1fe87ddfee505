// The reference path (core/reference/): the lectures' worked examples through its functions, its
// whole model against the independent PyTorch fixtures, the fast path (core/model/) against it on
// every fixture, and its KV-cache decoder step against its whole-target decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/ablation.h"
#include "io/trace_export.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "model/positional_encoding.h"
#include "stepper/decoding.h"
#include "stepper/run.h"
#include "reference/ablation.h"
#include "reference/attention.h"
#include "reference/feed_forward.h"
#include "reference/greedy.h"
#include "reference/kv_cache.h"
#include "reference/layer_norm.h"
#include "reference/mask.h"
#include "reference/positional_encoding.h"
#include "reference/residual.h"
#include "reference/transformer.h"
#include "test_util.h"

namespace sf {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------------------------
// Components, with the numbers the lectures write out.

// "Transformer Architecture", Scaled dot product: q·k₁ = 112 and q·k₂ = 96, d_k = 64,
// ÷ √64 → 14 and 12, softmax → 0.88 and 0.12 ("Thinking" attends 0.88 to itself).
TEST(Reference, LectureWorkedExampleOfScaledDotProductAttention) {
  const int d_k = 64;
  Mat q = Mat::Zero(1, d_k), k = Mat::Zero(2, d_k), v = Mat::Zero(2, d_k);
  q(0, 0) = 8.0f;
  k(0, 0) = 14.0f;  // q·k₁ = 8 · 14 = 112
  k(1, 0) = 12.0f;  // q·k₂ = 8 · 12 = 96
  v(0, 1) = 1.0f;   // the output's columns 1 and 2 pick out the two weights
  v(1, 2) = 1.0f;
  EXPECT_FLOAT_EQ((q * k.transpose())(0, 0), 112.0f);
  EXPECT_FLOAT_EQ((q * k.transpose())(0, 1), 96.0f);
  const ref::Attention a = ref::scaled_dot_product_attention(q, k, v, Mat::Zero(1, 2));
  const float e2 = std::exp(2.0f);  // softmax(14, 12) = (e²/(e² + 1), 1/(e² + 1))
  EXPECT_NEAR(a.weights(0, 0), e2 / (e2 + 1), 1e-6);
  EXPECT_NEAR(a.weights(0, 1), 1 / (e2 + 1), 1e-6);
  EXPECT_NEAR(a.weights(0, 0), 0.88f, 0.005f);
  EXPECT_NEAR(a.weights(0, 1), 0.12f, 0.005f);
  EXPECT_FLOAT_EQ(a.out(0, 1), a.weights(0, 0));
  EXPECT_FLOAT_EQ(a.out(0, 2), a.weights(0, 1));
}

// "Transformer From Scratch", Masking: the padded sequence [5 6 7 0 0] hides
// its last two keys; future_mask(5) is lower-triangular.
TEST(Reference, PaddingAndCausalMasksOfTheLecture) {
  const Mat pad = ref::padding_mask(3, {5, 6, 7, 0, 0}, /*pad=*/0);
  ASSERT_EQ(pad.rows(), 3);
  ASSERT_EQ(pad.cols(), 5);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(pad(i, j), j >= 3 ? -kInf : 0.0f) << i << "," << j;
  const Mat causal = ref::causal_mask(5, 5);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(causal(i, j), j > i ? -kInf : 0.0f) << i << "," << j;
  // A cached step: the query at position 3 sees keys 0..3 of 5.
  const Mat step = ref::causal_mask(1, 5, /*q_offset=*/3);
  EXPECT_EQ(step(0, 3), 0.0f);
  EXPECT_EQ(step(0, 4), -kInf);
}

// The same section: masking the 5th and the last key makes their weights exactly 0 for every query.
TEST(Reference, MaskedKeysGetExactlyZeroWeight) {
  const int n = 10, d = 5;
  const Mat q = Mat::Random(n, d), k = Mat::Random(n, d), v = Mat::Random(n, d);
  std::vector<int> ids(n, 1);
  ids[5] = ids[9] = 0;
  const ref::Attention a = ref::scaled_dot_product_attention(q, k, v, ref::padding_mask(n, ids, 0));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(a.weights(i, 5), 0.0f);
    EXPECT_EQ(a.weights(i, 9), 0.0f);
    EXPECT_NEAR(a.weights.row(i).sum(), 1.0f, 1e-6);
  }
  // A query with every key masked gets no distribution: weights 0, output 0 (not NaN).
  const Mat p = ref::softmax_rows(Mat::Constant(1, 3, -kInf));
  EXPECT_EQ(p.cwiseAbs().sum(), 0.0f);
}

// Multi-head attention with identity projections and zero biases: each head is scaled
// dot-product attention on its own d_k columns, and the heads sit side by side.
TEST(Reference, MultiHeadAttentionIsTheHeadsSideBySide) {
  const int n = 4, d = 6, h = 2;
  AttentionWeights w;
  for (Linear* l : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj}) {
    l->weight = Mat::Identity(d, d);
    l->bias = RowVec::Zero(d);
  }
  const Mat x = Mat::Random(n, d);
  const Mat mask = ref::causal_mask(n, n);
  const ref::MultiHeadAttention mha = ref::multi_head_attention(w, h, x, x, mask);
  ASSERT_EQ(mha.weights.size(), 2u);
  for (int head = 0; head < h; ++head) {
    const Mat xh = x.middleCols(head * 3, 3);  // (n, d_k)
    const ref::Attention a = ref::scaled_dot_product_attention(xh, xh, xh, mask);
    EXPECT_LE((mha.weights[static_cast<size_t>(head)] - a.weights).cwiseAbs().maxCoeff(), 1e-6f);
    EXPECT_LE((mha.out.middleCols(head * 3, 3) - a.out).cwiseAbs().maxCoeff(), 1e-6f);
  }
}

// "Transformer in details", Positional Encoding:
// p_t[2k] = sin(t/10000^(2k/d)), p_t[2k+1] = cos(…); Marian puts the sines first.
TEST(Reference, SinusoidalPositionsByHand) {
  const Mat p = ref::sinusoidal_positions(3, 4);  // d = 4: ω₀ = 1, ω₁ = 1/100
  EXPECT_FLOAT_EQ(p(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(p(0, 1), 1.0f);
  EXPECT_FLOAT_EQ(p(2, 0), std::sin(2.0f));
  EXPECT_FLOAT_EQ(p(2, 1), std::cos(2.0f));
  EXPECT_FLOAT_EQ(p(2, 2), std::sin(0.02f));
  EXPECT_FLOAT_EQ(p(2, 3), std::cos(0.02f));
  const Mat halves = ref::sinusoidal_positions_halves(3, 4);  // sin ω₀t, sin ω₁t, cos ω₀t, cos ω₁t
  EXPECT_FLOAT_EQ(halves(2, 1), std::sin(0.02f));
  EXPECT_FLOAT_EQ(halves(2, 2), std::cos(2.0f));
  // A step at position 2 reads the same row as the table.
  EXPECT_EQ(ref::sinusoidal_positions(1, 4, /*pos0=*/2), p.bottomRows(1));
  // The fast path's tables (model/positional_encoding.h), odd d included.
  for (int d : {16, 7}) {
    EXPECT_LE((ref::sinusoidal_positions(40, d) - sinusoidal_pe(40, d)).cwiseAbs().maxCoeff(), 1e-6f) << d;
    EXPECT_LE((ref::sinusoidal_positions_halves(40, d) - sinusoidal_halves_pe(40, d)).cwiseAbs().maxCoeff(), 1e-6f)
        << d;
  }
}

// LayerNorm of (1, 2, 3, 4): μ = 2.5, σ² = 1.25 (biased), so x̂ = (x − 2.5)/√1.25.
TEST(Reference, LayerNormByHand) {
  LayerNormWeights w;
  w.weight = RowVec::Constant(4, 2.0f);
  w.bias = RowVec::Constant(4, 0.5f);
  w.eps = 0.0f;
  Mat x(1, 4);
  x << 1, 2, 3, 4;
  const Mat y = ref::layer_norm(x, w);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(y(0, j), 2.0f * (x(0, j) - 2.5f) / std::sqrt(1.25f) + 0.5f, 1e-6) << j;
}

// Post-LN normalises the sum; pre-LN normalises the sublayer's input and adds x untouched.
TEST(Reference, PostAndPreLayerNormConnections) {
  LayerNormWeights ln;
  ln.weight = RowVec::Ones(4);
  ln.bias = RowVec::Zero(4);
  const Mat x = Mat::Random(3, 4);
  const ref::Sublayer twice = [](const Mat& h) -> Mat { return 2.0f * h; };
  EXPECT_LE((ref::post_ln(x, ln, twice) - ref::layer_norm(3.0f * x, ln)).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_LE((ref::pre_ln(x, ln, twice) - (x + 2.0f * ref::layer_norm(x, ln))).cwiseAbs().maxCoeff(), 1e-6f);
}

// The activations at a few points: ReLU, GELU (erf) and its tanh form, swish.
TEST(Reference, ActivationsByHand) {
  Mat x(1, 3);
  x << -1.0f, 0.0f, 2.0f;
  const Mat relu = ref::relu(x), gelu = ref::gelu_erf(x), tanh_gelu = ref::gelu_tanh(x), swish = ref::swish(x);
  EXPECT_EQ(relu(0, 0), 0.0f);
  EXPECT_EQ(relu(0, 2), 2.0f);
  EXPECT_NEAR(gelu(0, 2), 2.0 * 0.97724986805182, 1e-6);  // 2·Φ(2)
  EXPECT_NEAR(gelu(0, 0), -0.15865525393145, 1e-6);       // −Φ(−1)
  EXPECT_NEAR(tanh_gelu(0, 2), 1.95459769, 1e-5);         // within 1e-3 of the erf form
  EXPECT_NEAR(swish(0, 2), 2.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_EQ(swish(0, 1), 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Whole models: every fixture, through the reference and the fast path.

struct ReferenceCase {
  const char* label;
  const char* model;     // a toy fixture's .safetensors or a Hugging Face folder, under tests/fixtures
  const char* expected;  // its expected.safetensors
  const char* prefix;    // the expected tensors' name prefix ("pair." for BERT's sentence pair)
};

// The fixtures with a decoder: the eight toy models (one attention-only), GPT-2 (stored as F32 and as F16) and Marian.
const ReferenceCase kDecoderCases[] = {
    {"encdec_post_relu_sin", "encdec_post_relu_sin.safetensors", "encdec_post_relu_sin.expected.safetensors", ""},
    {"encdec_pre_relu_sin", "encdec_pre_relu_sin.safetensors", "encdec_pre_relu_sin.expected.safetensors", ""},
    {"encdec_post_gelu_learned", "encdec_post_gelu_learned.safetensors",
     "encdec_post_gelu_learned.expected.safetensors", ""},
    {"encdec_pre_gelu_shared", "encdec_pre_gelu_shared.safetensors", "encdec_pre_gelu_shared.expected.safetensors", ""},
    {"deconly_pre_gelu", "deconly_pre_gelu.safetensors", "deconly_pre_gelu.expected.safetensors", ""},
    {"deconly_post_relu_learned", "deconly_post_relu_learned.safetensors",
     "deconly_post_relu_learned.expected.safetensors", ""},
    {"encdec_pre_3layer_odd", "encdec_pre_3layer_odd.safetensors", "encdec_pre_3layer_odd.expected.safetensors", ""},
    {"deconly_pre_attn_only", "deconly_pre_attn_only.safetensors", "deconly_pre_attn_only.expected.safetensors", ""},
    {"gpt2_tiny", "hf/gpt2-tiny", "hf/gpt2-tiny/expected.safetensors", ""},
    {"gpt2_tiny_f16", "hf/gpt2-tiny-f16", "hf/gpt2-tiny-f16/expected.safetensors", ""},
    {"marian_tiny", "hf/marian-tiny", "hf/marian-tiny/expected.safetensors", ""},
};
// BERT, encoder-only with its masked-LM head: one sentence and a sentence pair (token types 0 and 1).
const ReferenceCase kEncoderOnlyCases[] = {
    {"bert_tiny", "hf/bert-tiny", "hf/bert-tiny/expected.safetensors", ""},
    {"bert_tiny_pair", "hf/bert-tiny", "hf/bert-tiny/expected.safetensors", "pair."},
};

std::vector<ReferenceCase> all_cases() {
  std::vector<ReferenceCase> all(std::begin(kDecoderCases), std::end(kDecoderCases));
  all.insert(all.end(), std::begin(kEncoderOnlyCases), std::end(kEncoderOnlyCases));
  return all;
}

// A loaded fixture: the model, its reference numbers and the ids they were computed on.
struct Loaded {
  Model model;
  TensorFile expected;
  std::vector<int> src, tgt;  // empty where the architecture has no such side
};

Loaded load(const ReferenceCase& c) {
  Loaded f;
  auto m = load_model(test::fixture(c.model));
  EXPECT_TRUE(m.ok()) << c.label << ": " << m.error();
  if (m.ok()) f.model = std::move(*m);
  auto ex = read_safetensors(test::fixture(c.expected));
  EXPECT_TRUE(ex.ok()) << c.label << ": " << ex.error();
  if (ex.ok()) f.expected = std::move(*ex);
  const std::string p = c.prefix;
  if (f.model.config.has_encoder()) f.src = test::ids_of(*f.expected.find(p + "src_ids"));
  if (f.model.config.has_decoder()) f.tgt = test::ids_of(*f.expected.find(p + "tgt_ids"));
  return f;
}

// Every attention map of a reference run, named as the fixtures name them, stacked (h, n_q, n_k).
std::vector<std::pair<std::string, Tensor>> named_maps(const ref::Output& out, const std::string& prefix) {
  std::vector<std::pair<std::string, Tensor>> maps;
  const auto add = [&](const ref::AttentionMaps& layers, const std::string& stack, const char* kind) {
    for (size_t l = 0; l < layers.size(); ++l)
      maps.emplace_back(prefix + stack + ".layers." + std::to_string(l) + "." + kind + ".weights",
                        stack_heads(layers[l], static_cast<int>(layers[l].size()), 0));
  };
  add(out.encoder_self, "encoder", "self_attn");
  add(out.decoder_self, "decoder", "self_attn");
  add(out.decoder_cross, "decoder", "cross_attn");
  return maps;
}

class ReferenceModel : public ::testing::TestWithParam<ReferenceCase> {};

// The reference against the independent PyTorch fixtures: logits within 1e-4, every attention
// weight within 1e-5, the encoder's output within 1e-4.
TEST_P(ReferenceModel, MatchesThePyTorchFixtures) {
  const ReferenceCase c = GetParam();
  const Loaded f = load(c);
  const ref::Output out = ref::forward(f.model, f.src, f.tgt);
  const std::string p = c.prefix;
  EXPECT_LE(test::max_abs_diff(Tensor::from_mat(out.logits), *f.expected.find(p + "logits")), 1e-4) << c.label;
  if (const Tensor* memory = f.expected.find(p + "encoder.output")) {
    EXPECT_LE(test::max_abs_diff(Tensor::from_mat(out.memory), *memory), 1e-4) << c.label;
  }
  int maps = 0;
  for (const auto& [name, have] : named_maps(out, p)) {
    const Tensor* want = f.expected.find(name);
    ASSERT_TRUE(want) << c.label << ": the fixture has no '" << name << "'";
    EXPECT_LE(test::max_abs_diff(have, *want), 1e-5) << c.label << ": " << name;
    ++maps;
  }
  const Config& cfg = f.model.config;
  const int layers =
      cfg.n_encoder_layers * cfg.has_encoder() + cfg.n_decoder_layers * (cfg.has_decoder() + cfg.has_cross_attention());
  EXPECT_EQ(maps, layers) << c.label;
}

// |a − b| / (1 + |b|) at most `tol` everywhere (an absolute bound near 0, a relative one on large
// logits), and the same shape.
::testing::AssertionResult near(const Mat& a, const Mat& b, double tol) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shapes (" << a.rows() << ", " << a.cols() << ") and (" << b.rows() << ", "
                                         << b.cols() << ")";
  double worst = 0;
  for (Eigen::Index i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(double{a.data()[i]} - b.data()[i]) / (1.0 + std::fabs(double{b.data()[i]})));
  if (worst <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "differ by " << worst << " (relative), more than " << tol;
}

// Float rounding: the two paths sum the same products in different orders (blocked kernels,
// vectorised exp), a few ulp per operation through a few layers — a few 1e-6 on the Hugging Face
// models' logits, far below any error in a formula (the PyTorch fixtures catch those at 1e-4).
constexpr double kRounding = 1e-5;

// The fast path (what the explorer and the command line run) against the reference: logits and
// every attention map of every layer and head.
TEST_P(ReferenceModel, FastPathEqualsTheReference) {
  const ReferenceCase c = GetParam();
  const Loaded f = load(c);
  const Model& m = f.model;
  const ref::Output want = ref::forward(m, f.src, f.tgt);
  Trace t;
  Mat memory, logits;
  EncoderContext enc;
  if (m.config.has_encoder()) {
    memory = encode(m, f.src, 1, &t.encoder);
    enc = {&memory, &f.src};
    logits = t.encoder.logits;
    EXPECT_TRUE(near(memory, want.memory, kRounding)) << c.label << ": encoder output";
  }
  if (m.config.has_decoder()) logits = decode(m, f.tgt, 1, enc, nullptr, &t.decoder);
  EXPECT_TRUE(near(logits, want.logits, kRounding)) << c.label << ": logits";
  const auto each_head = [&](const std::vector<AttentionTrace*>& fast, const ref::AttentionMaps& ref,
                             const char* what) {
    ASSERT_EQ(fast.size(), ref.size()) << c.label << ": " << what;
    for (size_t l = 0; l < ref.size(); ++l)
      for (size_t h = 0; h < ref[l].size(); ++h)
        EXPECT_TRUE(near(fast[l]->head_weights(0, static_cast<int>(h)), ref[l][h], kRounding))
            << c.label << ": " << what << " layer " << l << " head " << h;
  };
  std::vector<AttentionTrace*> enc_self, dec_self, dec_cross;
  for (EncoderLayerTrace& l : t.encoder.layers) enc_self.push_back(&l.self_attn);
  for (DecoderLayerTrace& l : t.decoder.layers) {
    dec_self.push_back(&l.self_attn);
    if (m.config.has_cross_attention()) dec_cross.push_back(&l.cross_attn);
  }
  each_head(enc_self, want.encoder_self, "encoder self-attention");
  each_head(dec_self, want.decoder_self, "decoder self-attention");
  each_head(dec_cross, want.decoder_cross, "cross-attention");
}

// Decoding token by token with the reference's KV cache gives, at every step, the row of the
// whole-target decoder's logits and attention weights; and the fast path's cached decoding gives
// the same logits.
class ReferenceDecoder : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(ReferenceDecoder, KvCacheStepsEqualTheWholeTarget) {
  const ReferenceCase c = GetParam();
  const Loaded f = load(c);
  const Model& m = f.model;
  ASSERT_TRUE(m.config.has_decoder()) << c.label;
  const ref::Output whole = ref::forward(m, f.src, f.tgt);
  const Mat* memory = m.config.has_cross_attention() ? &whole.memory : nullptr;
  ref::KvCache cache = ref::start_cache(m, memory, f.src);
  KvCache fast_cache;
  fast_cache.reset(m.config.n_decoder_layers, m.config.max_len, m.config.d_model);
  const EncoderContext enc{memory, memory ? &f.src : nullptr};
  for (size_t t = 0; t < f.tgt.size(); ++t) {
    const int row = static_cast<int>(t);
    const ref::DecoderStep step = ref::decoder_step(m, cache, f.tgt[t]);
    EXPECT_EQ(cache.layers[0].k.rows(), row + 1) << c.label << ": one cached key per token";
    EXPECT_TRUE(near(step.logits, whole.logits.row(row), kRounding)) << c.label << " step " << t;
    for (size_t l = 0; l < step.self_weights.size(); ++l)
      for (size_t h = 0; h < step.self_weights[l].size(); ++h) {
        EXPECT_TRUE(near(step.self_weights[l][h], whole.decoder_self[l][h].block(row, 0, 1, row + 1), kRounding))
            << c.label << " step " << t << " layer " << l << " head " << h;
        if (memory) {
          EXPECT_TRUE(near(step.cross_weights[l][h], whole.decoder_cross[l][h].row(row), kRounding))
              << c.label << " step " << t << " layer " << l << " head " << h << " (cross)";
        }
      }
    const Mat fast = decode(m, {f.tgt[t]}, 1, enc, &fast_cache, nullptr);  // (1, V)
    EXPECT_TRUE(near(fast, step.logits, kRounding)) << c.label << " step " << t << ": the fast cached step";
  }
}

// Head and MLP ablation: the fast path's intervention hooks (what `trace --ablate` and the
// explorer run) against the reference's ablated forward, zero and mean, on every decoder fixture:
// the first and the last self-attention head, a cross-attention head, and the first and the last
// feed-forward sublayer. Each ablation moves the logits, so an ignored one would fail.
TEST_P(ReferenceDecoder, AblatedFastPathEqualsTheReferenceAblation) {
  const ReferenceCase c = GetParam();
  const Loaded f = load(c);
  const Model& m = f.model;
  const Config& cfg = m.config;
  const int last = cfg.n_decoder_layers - 1;
  const ref::Output clean = ref::forward(m, f.src, f.tgt);
  EXPECT_TRUE(near(ref::ablated_forward(m, f.src, f.tgt, {}).logits, clean.logits, kRounding))
      << c.label << ": ablating nothing is the forward pass";
  PreparedInput in;
  in.src_ids = f.src;
  in.tgt_ids = f.tgt;
  struct Ablation {
    const char* what;
    std::vector<AblationTarget> fast;
    ref::DecoderAblation ref;
  };
  std::vector<Ablation> ablations;
  Ablation heads{"heads", {{SiteKind::SelfAttention, 0, 0}, {SiteKind::SelfAttention, last, cfg.n_heads - 1}}, {}};
  heads.ref.self_heads = {{0, 0}, {last, cfg.n_heads - 1}};
  if (cfg.has_cross_attention()) {
    heads.fast.push_back({SiteKind::CrossAttention, last, 1 % cfg.n_heads});
    heads.ref.cross_heads = {{last, 1 % cfg.n_heads}};
  }
  ablations.push_back(heads);
  if (cfg.has_ffn()) {
    Ablation mlps{"mlps", {{SiteKind::Mlp, 0, -1}, {SiteKind::Mlp, last, -1}}, {}};
    mlps.ref.mlps = {0, last};
    ablations.push_back(mlps);
  }
  for (Ablation& a : ablations)
    for (const ref::Ablate mode : {ref::Ablate::Zero, ref::Ablate::Mean}) {
      const char* name = mode == ref::Ablate::Zero ? "zero" : "mean";
      a.ref.mode = mode;
      const ref::Output want = ref::ablated_forward(m, f.src, f.tgt, a.ref);
      EXPECT_FALSE(near(want.logits, clean.logits, 1e-4)) << c.label << ": " << a.what << " " << name << " moves";
      RunOptions opt;
      opt.intervention = ablation(m, a.fast, mode == ref::Ablate::Zero ? EditMode::Zero : EditMode::Mean);
      const Trace t = run_forward(m, in, opt);
      EXPECT_TRUE(near(t.decoder.logits, want.logits, kRounding)) << c.label << ": " << a.what << " " << name;
    }
}

// The shipped models (assets/models), decoded greedily by the reference with its KV cache: each
// answers its task's example (assets/models/README.md), with the tokens the fast path's greedy
// decoding gives.
TEST(ReferenceShippedModels, GreedyDecodingAnswersEveryTask) {
  struct Example {
    const char* task;
    const char* input;  // the source, or a decoder-only model's prompt
    const char* output;
  };
  const Example examples[] = {
      {"copy", "3 1 4 1 5 9 2 6", "3 1 4 1 5 9 2 6"}, {"reverse", "3 1 4 1 5 9 2 6", "6 2 9 5 1 4 1 3"},
      {"sort", "3 1 4 1 5 9 2 6", "1 1 2 3 4 5 6 9"}, {"add", "3 4 7 + 5 8", "4 0 5"},
      {"dates", "21 November 2026", "2026-11-21"},    {"copy-lm", "3 1 4 1 5 =", "3 1 4 1 5"},
  };
  for (const Example& e : examples)
    for (const char* norm : {"-preln", "-postln"}) {
      const std::string name = std::string(e.task) + norm;
      auto m = load_model(test::source_path("assets/models/" + name + ".safetensors"));
      ASSERT_TRUE(m.ok()) << m.error();
      const Config& c = m->config;
      const std::vector<int> input = (c.has_encoder() ? c.src_vocab : c.tgt_vocab).tokenize(e.input).ids;
      const std::vector<int> src = c.has_encoder() ? input : std::vector<int>{};
      const std::vector<int> prompt = c.has_encoder() ? std::vector<int>{} : input;
      const std::vector<int> got = ref::greedy_decode(*m, src, prompt, 16);
      EXPECT_EQ(c.tgt_vocab.detokenize(got), e.output) << name << " on '" << e.input << "'";
      EXPECT_EQ(got, greedy_decode_batch(*m, {input}, 16)[0]) << name << ": the fast path's greedy decoding";
    }
}

std::string case_name(const ::testing::TestParamInfo<ReferenceCase>& info) { return info.param.label; }
INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceModel, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceDecoder, ::testing::ValuesIn(kDecoderCases), case_name);

}  // namespace
}  // namespace sf
