// The reference path's hub-family decoder (core/reference/decoder_family: rotary, rms_norm,
// gated_feed_forward, grouped_attention, sliding_window composed) against the fast path
// (core/model) on the tiny fixtures of tests/fixtures/hf: the same attention weights (1e-5) and
// logits (1e-4), the reference's logits against PyTorch's (1e-4), and the pieces' own formulas
// checked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "io/hf_model.h"
#include "model/decoder.h"
#include "reference/decoder_family.h"
#include "reference/rms_norm.h"
#include "reference/rotary.h"
#include "reference/sliding_window.h"
#include "hf_fixture.h"
#include "test_util.h"

namespace sf {
namespace {

class ReferenceDecoders : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferenceDecoders, FastPathEqualsTheReferencePath) {
  const Model m = test::open_hf_stand_in(GetParam());
  ASSERT_GT(m.config.n_decoder_layers, 0);
  auto ex = read_safetensors(test::fixture(std::string("hf/") + GetParam() + "/expected.safetensors"));
  ASSERT_TRUE(ex.ok()) << ex.error();
  const Tensor* want = ex->find("logits");  // PyTorch's (tests/reference/hf/decoders.py)
  ASSERT_TRUE(want) << GetParam();
  const std::vector<int> ids = test::ids_of(*ex->find("tgt_ids"));
  DecoderTrace t;
  const Mat logits = decode(m, ids, 1, {}, nullptr, &t);
  const ref::FamilyDecoder r = ref::family_decoder(m, ids);
  ASSERT_EQ(r.self_weights.size(), t.layers.size()) << GetParam();
  for (size_t l = 0; l < r.self_weights.size(); ++l)
    for (int h = 0; h < m.config.n_heads; ++h)
      EXPECT_LE(
          (t.layers[l].self_attn.head_weights(0, h) - r.self_weights[l][static_cast<size_t>(h)]).cwiseAbs().maxCoeff(),
          1e-5)
          << GetParam() << " layer " << l << " head " << h;
  EXPECT_LE((logits - r.logits).cwiseAbs().maxCoeff(), 1e-4) << GetParam();
  EXPECT_LE(test::max_abs_diff(Tensor::from_mat(r.logits), *want), 1e-4) << GetParam() << ": reference vs PyTorch";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceDecoders,
                         ::testing::Values("llama-tiny", "qwen2-tiny-bf16", "mistral-tiny-sharded", "pythia-tiny"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(ReferencePieces, RotaryTurnsEachPairByPositionTimesFrequency) {
  // One head of 4 dimensions, θ = (1, 0.5): at position 2 the pair (x_0, x_2) turns by 2 rad and
  // (x_1, x_3) by 1 rad; rotate_half pairs i with i + 2, not 2i with 2i + 1.
  RowVec theta(2);
  theta << 1.0f, 0.5f;
  Mat x(1, 4);
  x << 1, 0, 0, 1;
  const Mat y = ref::rotary(x, theta, 2);
  EXPECT_NEAR(y(0, 0), std::cos(2.0), 1e-6);
  EXPECT_NEAR(y(0, 2), std::sin(2.0), 1e-6);
  EXPECT_NEAR(y(0, 1), -std::sin(1.0), 1e-6);
  EXPECT_NEAR(y(0, 3), std::cos(1.0), 1e-6);
  // q_m·k_n depends on m − n only.
  Mat q(1, 4), k(1, 4);
  q << 0.3f, -1.2f, 0.7f, 0.4f;
  k << -0.5f, 0.9f, 0.2f, 1.1f;
  const float s1 = (ref::rotary(q, theta, 5) * ref::rotary(k, theta, 3).transpose())(0, 0);
  const float s2 = (ref::rotary(q, theta, 9) * ref::rotary(k, theta, 7).transpose())(0, 0);
  EXPECT_NEAR(s1, s2, 1e-5);
}

TEST(ReferencePieces, RmsNormAndTheSlidingWindow) {
  Mat x(1, 2);
  x << 3, 4;  // mean(x²) = 12.5
  LayerNormWeights w;
  w.weight = RowVec::Ones(2);
  w.eps = 0.0f;
  const Mat y = ref::rms_norm(x, w);
  EXPECT_NEAR(y(0, 0), 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(y(0, 1), 4 / std::sqrt(12.5), 1e-6);
  const Mat band = ref::sliding_window_mask(4, 4, 2);
  // row 3 sees keys 2 and 3 only
  EXPECT_TRUE(std::isinf(band(3, 1)));
  EXPECT_EQ(band(3, 2), 0.0f);
  EXPECT_EQ(band(3, 3), 0.0f);
  EXPECT_TRUE(std::isinf(band(2, 3)));
}

}  // namespace
}  // namespace sf
