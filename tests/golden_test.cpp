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

// How the fixture's projections are held for the forward.
enum class Held {
  RowsAndPacked,  // rows and a packed second copy, as load_model holds a small model's
  Rows,           // rows only, as the trainer runs
  PackedOnly,     // packed only, as load_model holds a model over the second-copy bound (GPT-2)
};

// The forward of fixture `cs` against the reference's numbers, its weights held as `held` says.
void check_against_pytorch(const std::string& cs, Held held) {
  Model m = test::load_fixture_model(cs);
  // The first decoder layer's query projection: every model has one (not every model an MLP).
  const Linear& q = m.weights.decoder[0].self_attn.q_proj;
  ASSERT_TRUE(q.packed && q.weight.size() > 0) << cs << ": load_model packed nothing, or kept no rows";
  if (held != Held::RowsAndPacked) drop_packed(m.weights);
  if (held == Held::PackedOnly) pack_for_inference(m.weights, 0);
  ASSERT_EQ(q.packed != nullptr, held != Held::Rows) << cs;
  ASSERT_EQ(q.packed_only(), held == Held::PackedOnly) << cs;
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

TEST_P(Golden, LogitsAndAttentionMatchPyTorch) { check_against_pytorch(GetParam(), Held::RowsAndPacked); }
TEST_P(Golden, LogitsAndAttentionMatchPyTorchWithoutPackedWeights) { check_against_pytorch(GetParam(), Held::Rows); }
TEST_P(Golden, LogitsAndAttentionMatchPyTorchWithWeightsPackedOnly) {
  check_against_pytorch(GetParam(), Held::PackedOnly);
}

INSTANTIATE_TEST_SUITE_P(AllCases, Golden,
                         ::testing::Values("encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned",
                                           "encdec_pre_gelu_shared", "deconly_pre_gelu", "deconly_post_relu_learned",
                                           "encdec_pre_3layer_odd", "deconly_pre_attn_only"));

}  // namespace
}  // namespace sf
