// The stepper's stages for the hub families (tests/fixtures/hf): RMSNorm stages say rms, not mean
// and variance; SwiGLU stages say down(silu(gate(x)) ⊙ up(x)); rotary models add nothing at the
// embedding and turn q and k in attention; a parallel-residual layer's MLP reads the layer's
// input. Every tensor a stage names exists in the recording with the shape it states.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "io/hf_model.h"
#include "io/safetensors.h"
#include "stepper/session.h"
#include "hf_fixture.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const Model> open_hf(const std::string& name) {
  return std::make_shared<const Model>(test::open_hf_stand_in(name));
}

Session session(const std::string& name, bool cache = true) {
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  auto r = Session::create(open_hf(name), "t5 t6 t7", "t8 t9 t10", s, cache);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(*r);
}

// The first stage of step `step` of the given kind and block in layer `layer`.
std::optional<Stage> find(const Session& s, int step, StageKind k, Block b = Block::None, int layer = 0) {
  for (const Stage& st : s.stages())
    if (st.step == step && st.kind == k && (b == Block::None || st.block == b) && (st.layer == layer || st.layer < 0))
      return st;
  return std::nullopt;
}

std::vector<std::string> names(const std::vector<TensorRef>& l) {
  std::vector<std::string> out;
  for (const TensorRef& r : l) out.push_back(r.name.substr(r.name.rfind('.') + 1));
  return out;
}

TEST(FamilyStages, EveryNamedTensorIsRecordedWithItsShape) {
  for (const char* f : {"llama-tiny", "qwen2-tiny-bf16", "mistral-tiny-sharded", "pythia-tiny"}) {
    for (bool cache : {true, false}) {
      Session s = session(f, cache);
      s.jump_to_step(2);
      int checked = 0;
      for (const Stage& st : s.stages()) {
        EXPECT_FALSE(st.formula.empty()) << st.title;
        for (const auto* list : {&st.reads, &st.writes})
          for (const TensorRef& r : *list) {
            if (r.name.empty()) continue;
            const auto t = s.tensor(r.name);
            ASSERT_TRUE(t.has_value()) << f << " stage " << st.index << " (" << st.title << "): no tensor '" << r.name
                                       << "'";
            EXPECT_EQ(t->shape, r.shape) << f << " " << r.name;
            ++checked;
          }
      }
      EXPECT_GT(checked, 100) << f;
    }
  }
}

TEST(FamilyStages, RmsNormStagesSayRmsAndSwiGluStagesSayGateTimesUp) {
  Session s = session("llama-tiny");
  s.jump_to_step(1);
  const auto norm = find(s, 1, StageKind::Norm, Block::SelfAttention);
  ASSERT_TRUE(norm);
  EXPECT_THAT(norm->title, HasSubstr("RMSNorm before"));
  EXPECT_THAT(norm->formula, HasSubstr("x̂ = x / √(mean(x²) + 1e-05) ⊙ g"));
  EXPECT_THAT(norm->formula, Not(HasSubstr("var")));
  EXPECT_EQ(names(norm->writes), (std::vector<std::string>{"rms", "out"}));
  const auto final_norm = find(s, 1, StageKind::FinalNorm);
  ASSERT_TRUE(final_norm);
  EXPECT_THAT(final_norm->formula, HasSubstr("mean(x²)"));
  EXPECT_EQ(names(final_norm->writes), (std::vector<std::string>{"rms", "out"}));
  const auto ffn = find(s, 1, StageKind::FeedForward);
  ASSERT_TRUE(ffn);
  EXPECT_THAT(ffn->title, HasSubstr("SwiGLU"));
  // d 32, d_ff 48, one fed token at step 1.
  EXPECT_THAT(ffn->formula, HasSubstr("down(silu(gate(x̂)) ⊙ up(x̂)): gate, up (1, 32) → (1, 48)"));
  EXPECT_EQ(names(ffn->writes), (std::vector<std::string>{"gate_pre", "gate", "up", "hidden", "out", "output"}));
  EXPECT_EQ(names(ffn->reads), (std::vector<std::string>{"sublayer_in", "weight", "weight", "weight"}));
  EXPECT_EQ(ffn->reads[1].name, "decoder.layers.0.ffn.gate.weight");
}

TEST(FamilyStages, RotaryTurnsQAndKInAttentionAndAddsNothingAtTheEmbedding) {
  Session s = session("llama-tiny");
  s.jump_to_step(1);
  const auto embed = find(s, 1, StageKind::Embed);
  ASSERT_TRUE(embed);
  EXPECT_THAT(embed->formula, HasSubstr("x = E[id], position 4"));
  EXPECT_THAT(embed->formula, HasSubstr("no position added"));
  EXPECT_EQ(names(embed->writes), (std::vector<std::string>{"scaled", "sum"}));
  const auto att = find(s, 1, StageKind::SelfAttention);
  ASSERT_TRUE(att);
  // 4 query heads of 12 over 2 K/V heads; step 1 appends one row to 4 cached ones.
  EXPECT_THAT(att->formula, HasSubstr("Q = RoPE(x̂ W_qᵀ + b_q) (1, 48)"));
  EXPECT_THAT(att->formula, HasSubstr("k = RoPE(x̂ W_kᵀ + b), v = x̂ W_vᵀ + b (1, 24)"));
  EXPECT_THAT(att->formula, HasSubstr("2 query heads per K/V head"));
  EXPECT_THAT(att->formula, HasSubstr("dimensions i and i + 6 of each head by p·θ_i"));
  EXPECT_EQ(att->writes[0].label, "Q (rotated)");
  EXPECT_EQ(att->writes[0].name, "steps.1.decoder.layers.0.self_attn.q");
  EXPECT_EQ(att->writes[1].label, "K (rotated)");
}

TEST(FamilyStages, PartialRotaryAndParallelResidual) {
  Session s = session("pythia-tiny");
  s.jump_to_step(0);
  const auto att = find(s, 0, StageKind::SelfAttention);
  ASSERT_TRUE(att);
  EXPECT_THAT(att->formula, HasSubstr("the first 4 of 16 dimensions rotate, the rest pass through"));
  EXPECT_THAT(att->formula, HasSubstr("parallel residual: the MLP reads the same x"));
  const auto norm2 = find(s, 0, StageKind::Norm, Block::FeedForward);
  ASSERT_TRUE(norm2);
  EXPECT_THAT(norm2->title, HasSubstr("LayerNorm before"));
  EXPECT_THAT(norm2->formula, HasSubstr("(x − mean)"));
  EXPECT_THAT(norm2->formula, HasSubstr("both branches read the same x"));
  // LN2 reads the layer's input: the same numbers the attention's LN1 read.
  const auto x1 = s.tensor(find(s, 0, StageKind::Norm, Block::SelfAttention)->reads[0].name);
  const auto x2 = s.tensor(norm2->reads[0].name);
  ASSERT_TRUE(x1 && x2);
  EXPECT_EQ(x1->f32, x2->f32);
  const auto ffn = find(s, 0, StageKind::FeedForward);
  ASSERT_TRUE(ffn);
  EXPECT_THAT(ffn->formula, HasSubstr("GELU("));
  EXPECT_THAT(ffn->formula, HasSubstr("x = x + attention(LN1(x)) + FFN(LN2(x))"));
  // A sequential model keeps its residual text.
  Session l = session("llama-tiny");
  const auto seq = find(l, 0, StageKind::FeedForward);
  ASSERT_TRUE(seq);
  EXPECT_THAT(seq->formula, HasSubstr("; x = x + FFN(x̂)"));
}

// `stepformer trace` writes every tensor docs/trace-names.md names for these families, with its
// documented shape: the rotated q/k beside the un-rotated ones, the gated MLP's products and the
// RMS per token. With --no-pe a rotary model turns nothing: q is the projection itself.
TEST(FamilyTrace, TheCommandLineWritesTheDocumentedNames) {
  const std::string out_file = test::temp_path("family_trace.safetensors");
  const std::string nope_file = test::temp_path("family_trace_nope.safetensors");
  std::string out, err;
  const std::string model = " --model " + test::fixture("hf/llama-tiny") + " --src 'Hello world' --out ";
  ASSERT_EQ(test::run_stepformer("trace" + model + out_file, out, err), 0) << err;
  ASSERT_EQ(test::run_stepformer("trace --no-pe" + model + nope_file, out, err), 0) << err;
  auto f = read_safetensors(out_file);
  ASSERT_TRUE(f.ok()) << f.error();
  const Tensor* ids = f->find("tgt_ids");
  ASSERT_TRUE(ids);
  const int64_t m = ids->shape[0], d = 32, dff = 48, dq = 48, dkv = 24;  // llama-tiny
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"decoder.layers.1.self_attn.q", {m, dq}},
      {"decoder.layers.1.self_attn.q_unrotated", {m, dq}},
      {"decoder.layers.1.self_attn.k", {m, dkv}},
      {"decoder.layers.1.self_attn.k_unrotated", {m, dkv}},
      {"decoder.layers.1.ffn.gate_pre", {m, dff}},
      {"decoder.layers.1.ffn.gate", {m, dff}},
      {"decoder.layers.1.ffn.up", {m, dff}},
      {"decoder.layers.1.ffn.hidden", {m, dff}},
      {"decoder.layers.1.ffn.out", {m, d}},
      {"decoder.layers.1.norm1.rms", {m}},
      {"decoder.layers.1.norm2.rms", {m}},
      {"decoder.norm.rms", {m}},
      {"decoder.layers.1.self_attn.weights", {4, m, m}}};
  for (const auto& [name, shape] : want) {
    const Tensor* t = f->find(name);
    ASSERT_TRUE(t) << "no tensor '" << name << "'";
    EXPECT_EQ(t->shape, shape) << name;
  }
  EXPECT_FALSE(f->find("decoder.layers.1.norm1.mean"));  // RMSNorm: no mean, no variance
  EXPECT_FALSE(f->find("decoder.layers.1.ffn.hidden_pre"));
  // hidden = gate ⊙ up, element by element.
  const Tensor &g = *f->find("decoder.layers.1.ffn.gate"), &u = *f->find("decoder.layers.1.ffn.up"),
               &h = *f->find("decoder.layers.1.ffn.hidden");
  for (size_t i = 0; i < h.f32.size(); ++i) EXPECT_NEAR(h.f32[i], g.f32[i] * u.f32[i], 1e-5) << i;
  // Without positions the queries are the un-rotated projections of the run with them.
  auto nope = read_safetensors(nope_file);
  ASSERT_TRUE(nope.ok()) << nope.error();
  const Tensor* q = nope->find("decoder.layers.1.self_attn.q");
  const Tensor* q0 = f->find("decoder.layers.0.self_attn.q_unrotated");
  const Tensor* q0_nope = nope->find("decoder.layers.0.self_attn.q");
  ASSERT_TRUE(q && q0 && q0_nope);
  EXPECT_LE(test::max_abs_diff(*q0_nope, *q0), 1e-6);  // layer 0 reads the same input either way
}

}  // namespace
}  // namespace sf
