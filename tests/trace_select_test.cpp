// `stepformer trace --only`: a pattern over the trace's names, refused with what was expected
// when it is not a regular expression or finds nothing; the run records what its selection needs
// and writes the same numbers as a full recording (stepper/trace_select.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "io/trace_export.h"
#include "stepper/trace_select.h"
#include "test_util.h"

namespace sf {
namespace {

// --only: a bad pattern and one that finds nothing are refused with what was expected.
TEST(TraceSelection, RefusesABadPatternAndOneThatFindsNothing) {
  const auto bad = parse_trace_selection("self_attn.(weights");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("expected a regular expression"), std::string::npos) << bad.error();
  EXPECT_NE(bad.error().find("self_attn.(weights"), std::string::npos) << bad.error();
  EXPECT_FALSE(parse_trace_selection("").ok());

  const auto m = test::shared_fixture_model("deconly_pre_gelu");
  auto in = prepare_input(*m, test::prompt_of(m->config, 4));
  ASSERT_TRUE(in.ok()) << in.error();
  const std::vector<std::string> names = trace_names(*m, *in);
  ASSERT_GT(names.size(), 20u);
  EXPECT_EQ(names.front(), "tgt_ids");
  const auto none = selected_names(*parse_trace_selection("no_such_tensor"), names);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("found 'no_such_tensor', which finds none"), std::string::npos) << none.error();
  EXPECT_NE(none.error().find("tgt_ids"), std::string::npos) << "it names some of the names there are";
  const auto some = selected_names(*parse_trace_selection("^decoder\\.layers\\.1\\.self_attn\\.weights$"), names);
  ASSERT_TRUE(some.ok()) << some.error();
  EXPECT_EQ(*some, std::vector<std::string>{"decoder.layers.1.self_attn.weights"});
}

// What a selection writes equals the full recording's tensors of those names, and nothing else;
// the run holds no map it was not asked for.
class TraceSelectionRun : public ::testing::TestWithParam<const char*> {};

TEST_P(TraceSelectionRun, WritesTheFullRecordingsNumbersForTheSelectedNamesOnly) {
  const auto m = test::shared_fixture_model(GetParam());
  const Config& c = m->config;
  auto in = prepare_input(*m, test::prompt_of(c, 5), c.has_encoder() ? c.tgt_vocab.token(6) : "");
  ASSERT_TRUE(in.ok()) << in.error();
  const Trace full = run_forward(*m, *in);
  TensorFile all;
  append_trace_tensors(*m, full, all);
  int ran = 0;
  for (const char* pattern : {"layers\\.1\\.self_attn\\.(weights|scores)$", "ffn\\.hidden", "^(logits|probs)$",
                              "^decoder\\.layers\\.0\\.", "cross_attn\\.raw_scores", "norm2\\.out|\\.sum$", "."}) {
    const auto sel = parse_trace_selection(pattern);
    ASSERT_TRUE(sel.ok()) << sel.error();
    const auto names = selected_names(*sel, trace_names(*m, *in));
    if (!names.ok()) continue;  // this model has no such tensor (cross-attention of a decoder-only model)
    ++ran;
    const Trace t = run_selected(*m, *in, {}, *sel);
    TensorFile some;
    append_trace_tensors(*m, t, some, "", [&](const std::string& n) { return (*sel)(n); });
    std::vector<std::string> wrote;
    for (const auto& [name, tensor] : some.tensors) {
      wrote.push_back(name);
      const Tensor* expect = all.find(name);
      ASSERT_NE(expect, nullptr) << pattern << ": " << name;
      EXPECT_EQ(tensor.shape, expect->shape) << pattern << ": " << name;
      EXPECT_TRUE(tensor.f32 == expect->f32 && tensor.i64 == expect->i64) << pattern << ": " << name;
    }
    EXPECT_EQ(wrote, *names) << pattern;
    // Maps only where asked for.
    for (size_t i = 0; i < t.decoder.layers.size(); ++i) {
      const std::string p = "decoder.layers." + std::to_string(i) + ".self_attn";
      const bool asked = (*sel)(p + ".weights") || (*sel)(p + ".raw_scores") || (*sel)(p + ".scores");
      EXPECT_EQ(!t.decoder.layers[i].self_attn.weights.empty(), asked) << pattern << " " << p;
    }
  }
  EXPECT_GE(ran, 5);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TraceSelectionRun,
                         ::testing::Values("deconly_pre_gelu", "encdec_post_relu_sin", "deconly_pre_attn_only"));

}  // namespace
}  // namespace sf
