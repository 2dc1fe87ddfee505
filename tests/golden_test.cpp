// Golden tests: the C++ forward pass against the independent PyTorch reference
// (tests/reference/make_fixtures.py), on every fixture case.
#include <gtest/gtest.h>

#include "model/decoder.h"
#include "io/trace_export.h"
#include "model/encoder.h"
#include "test_util.h"

namespace sf {
namespace {

class Golden : public ::testing::TestWithParam<std::string> {};

// The forward of fixture `cs` against the reference's numbers; `packed`: with the packed weights
// load_model makes for inference (Linear::packed), or without them as the trainer runs.
void check_against_pytorch(const std::string& cs, bool packed) {
  Model m = test::load_fixture_model(cs);
  // The first decoder layer's query projection: every model has one (not every model an MLP).
  ASSERT_TRUE(m.weights.decoder[0].self_attn.q_proj.packed) << cs << ": load_model packed nothing";
  if (!packed) drop_packed(m.weights);
  ASSERT_EQ(m.weights.decoder[0].self_attn.q_proj.packed != nullptr, packed) << cs;
  TensorFile ex = test::load_expected(cs);
  ASSERT_TRUE(ex.find("tgt_ids"));

  Trace t;
  std::vector<int> src;
  EncoderContext enc;
  Mat memory;
  if (m.config.has_encoder()) {
    src = test::ids_of(*ex.find("src_ids"));
    ASSERT_TRUE(check_ids(m, src, true).ok());
    memory = encode(m, src, 1, &t.encoder);
    enc = {&memory, &src};
  }
  std::vector<int> tgt = test::ids_of(*ex.find("tgt_ids"));
  ASSERT_TRUE(check_ids(m, tgt, false).ok());
  decode(m, tgt, 1, enc, nullptr, &t.decoder);

  TensorFile got;
  append_trace_tensors(m, t, got);
  int compared = 0;
  for (auto& [name, want] : ex.tensors) {
    if (name == "tgt_y" || name == "loss" || name.rfind("grad.", 0) == 0) continue;  // training fixtures
    const Tensor* have = got.find(name);
    ASSERT_TRUE(have) << cs << ": the trace has no tensor '" << name << "'";
    if (want.dtype == DType::I64) {
      EXPECT_EQ(have->i64, want.i64) << cs << ": " << name;
      continue;
    }
    // The tolerances: 1e-4 absolute on logits, 1e-5 on attention weights.
    const bool is_weights = name.find(".weights") != std::string::npos;
    const double tol = is_weights ? 1e-5 : 1e-4;
    EXPECT_LE(test::max_abs_diff(*have, want), tol) << cs << ": " << name;
    ++compared;
  }
  EXPECT_GE(compared, 6) << cs;
}

TEST_P(Golden, LogitsAndAttentionMatchPyTorch) { check_against_pytorch(GetParam(), true); }
TEST_P(Golden, LogitsAndAttentionMatchPyTorchWithoutPackedWeights) { check_against_pytorch(GetParam(), false); }

INSTANTIATE_TEST_SUITE_P(AllCases, Golden,
                         ::testing::Values("encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned",
                                           "encdec_pre_gelu_shared", "deconly_pre_gelu", "deconly_post_relu_learned",
                                           "encdec_pre_3layer_odd", "deconly_pre_attn_only"));

}  // namespace
}  // namespace sf
