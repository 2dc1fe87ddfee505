// The stepper: the stage sequence, movement (forward/back, tokens, jumps, ends), back-then-forward
// identity, restarts on changes, snapshots, and stage descriptions that name real tensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

// encdec fixtures: source words a..h, target words x0..x6.
Session fixture_session(const std::string& cs, const DecodeSettings& s = test::forced(), bool cache = true) {
  const bool enc = cs.rfind("encdec", 0) == 0;
  auto r = Session::create(test::shared_fixture_model(cs), enc ? "a b c <pad>" : "x0 x1",
                           s.strategy == Strategy::Forced ? "x2 x3 x4 x5" : "", s, cache);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(*r);
}

std::vector<StageKind> kinds_of_step(const Session& s, int step) {
  std::vector<StageKind> out;
  for (const Stage& st : s.stages())
    if (st.step == step) out.push_back(st.kind);
  return out;
}

using K = StageKind;

TEST(Stages, PostLnEncoderDecoder) {
  Session s = fixture_session("encdec_post_relu_sin");
  s.run_to_end();
  std::vector<StageKind> enc;
  for (const Stage& st : s.stages())
    if (st.side == Side::Encoder) enc.push_back(st.kind);
  // embed, add PE, 2 × [self-attention, add&norm, feed-forward, add&norm], memory
  EXPECT_EQ(enc, (std::vector<K>{K::Embed, K::Positional, K::SelfAttention, K::AddNorm, K::FeedForward, K::AddNorm,
                                 K::SelfAttention, K::AddNorm, K::FeedForward, K::AddNorm, K::Memory}));
  const std::vector<K> step{K::Embed,       K::SelfAttention, K::AddNorm,       K::CrossAttention, K::AddNorm,
                            K::FeedForward, K::AddNorm,       K::SelfAttention, K::AddNorm,        K::CrossAttention,
                            K::AddNorm,     K::FeedForward,   K::AddNorm,       K::Logits,         K::Choose};
  for (int t = 0; t < 5; ++t) EXPECT_EQ(kinds_of_step(s, t), step) << "step " << t;
  EXPECT_EQ(s.stage_count(), 11 + 5 * 15);  // 4 target tokens + </s>
}

TEST(Stages, PreLnNormsComeFirstAndAFinalNormCloses) {
  Session s = fixture_session("encdec_pre_relu_sin");
  std::vector<StageKind> enc;
  for (const Stage& st : s.stages())
    if (st.side == Side::Encoder) enc.push_back(st.kind);
  EXPECT_EQ(enc, (std::vector<K>{K::Embed, K::Positional, K::Norm, K::SelfAttention, K::Norm, K::FeedForward, K::Norm,
                                 K::SelfAttention, K::Norm, K::FeedForward, K::FinalNorm, K::Memory}));
  s.run_to_end();
  const std::vector<K> step{K::Embed,       K::Norm,      K::SelfAttention, K::Norm,  K::CrossAttention, K::Norm,
                            K::FeedForward, K::Norm,      K::SelfAttention, K::Norm,  K::CrossAttention, K::Norm,
                            K::FeedForward, K::FinalNorm, K::Logits,        K::Choose};
  EXPECT_EQ(kinds_of_step(s, 2), step);
}

TEST(Stages, DecoderOnlyStartsWithThePrefillAndHasNoCrossAttention) {
  Session s = fixture_session("deconly_pre_gelu");
  EXPECT_EQ(s.cursor(), 0);
  const Stage first = s.current();
  EXPECT_EQ(first.side, Side::Decoder);
  EXPECT_EQ(first.step, 0);
  EXPECT_THAT(first.title, HasSubstr("prefill"));
  EXPECT_EQ(s.steps()[0]->fed.size(), 3u);  // <s> x0 x1
  s.run_to_end();
  EXPECT_EQ(kinds_of_step(s, 1),
            (std::vector<K>{K::Embed, K::Norm, K::SelfAttention, K::Norm, K::FeedForward, K::Norm, K::SelfAttention,
                            K::Norm, K::FeedForward, K::FinalNorm, K::Logits, K::Choose}));
}

// Every tensor a stage says it read or wrote exists under that name, with that shape.
TEST(Stages, ReadsAndWritesNameRecordedTensorsWithTheirShapes) {
  for (const char* cs : {"encdec_post_relu_sin", "encdec_pre_gelu_shared", "deconly_post_relu_learned"}) {
    for (bool cache : {true, false}) {
      Session s = fixture_session(cs, test::forced(), cache);
      s.jump_to_step(2);
      int checked = 0;
      for (const Stage& st : s.stages()) {
        EXPECT_FALSE(st.title.empty());
        EXPECT_FALSE(st.formula.empty()) << st.title;
        for (const auto* list : {&st.reads, &st.writes})
          for (const TensorRef& r : *list) {
            if (r.name.empty()) continue;
            const auto t = s.tensor(r.name);
            ASSERT_TRUE(t.has_value()) << cs << " stage " << st.index << " (" << st.title << "): no tensor '" << r.name
                                       << "'";
            EXPECT_EQ(t->shape, r.shape) << cs << " " << r.name;
            ++checked;
          }
      }
      EXPECT_GT(checked, 100) << cs;
    }
  }
}

TEST(Stages, FormulasCarryActualShapes) {
  Session s = fixture_session("encdec_post_relu_sin");  // d 16, 2 heads (d_k 8), source 4 tokens
  s.jump_to_step(3);
  // Step 3, layer 0 self-attention: one query over 4 cached keys.
  const int E = encoder_stage_count(s.model().config), D = decoder_stage_count(s.model().config);
  const Stage st = s.stage(E + 3 * D + 1);
  ASSERT_EQ(st.kind, StageKind::SelfAttention);
  EXPECT_THAT(st.formula, HasSubstr("(1, 16)"));
  EXPECT_THAT(st.formula, HasSubstr("(1, 4)"));
  EXPECT_THAT(st.formula, HasSubstr("√8"));
  EXPECT_THAT(st.note, HasSubstr("appends row 3"));
  EXPECT_THAT(s.stage(E + 3 * D + 3).note, HasSubstr("read from the cache"));
  EXPECT_THAT(s.stage(E + 3 * D + D - 1).formula, HasSubstr("forced: the target's next token 'x5'"));
}

// ---- movement ---------------------------------------------------------------------------------

// Bitwise comparison of two matrices (same numbers, bit for bit).
bool same_bits(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(float)) == 0;
}

struct Seen {
  int cursor, step;
  std::vector<int> tokens;
  Mat logits, self_k;
  int self_rows;
};

Seen look(const Session& s) {
  Seen v{s.cursor(), s.current_step(), s.tokens(), {}, {}, 0};
  if (auto r = s.current_record()) v.logits = r->trace->logits;
  const KvCacheView c = s.cache();
  if (c.layers[0].self_k) v.self_k = c.layers[0].self_k->topRows(c.layers[0].self_rows);
  v.self_rows = c.layers[0].self_rows;
  return v;
}

void expect_same(const Seen& a, const Seen& b) {
  EXPECT_EQ(a.cursor, b.cursor);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_TRUE(same_bits(a.logits, b.logits));
  EXPECT_TRUE(same_bits(a.self_k, b.self_k));
  EXPECT_EQ(a.self_rows, b.self_rows);
}

TEST(Movement, BackThenForwardIsBitIdentical) {
  DecodeSettings sample;
  sample.strategy = Strategy::Sample;
  sample.seed = 7;
  for (const DecodeSettings& ds : {DecodeSettings{}, sample, test::forced()}) {
    Session s = fixture_session("encdec_pre_gelu_shared", ds);
    for (int i = 0; i < 40; ++i) s.forward();
    const Seen here = look(s);
    for (int i = 0; i < 25; ++i) ASSERT_TRUE(s.back());
    for (int i = 0; i < 25; ++i) ASSERT_TRUE(s.forward());
    expect_same(here, look(s));
    // And a fresh session stepped to the same stage computes the very same numbers.
    Session fresh = fixture_session("encdec_pre_gelu_shared", ds);
    fresh.jump(here.cursor);
    expect_same(here, look(fresh));
  }
}

TEST(Movement, EndsAreNoOpsWithAMessage) {
  Session s = fixture_session("encdec_post_relu_sin");
  EXPECT_FALSE(s.back());
  EXPECT_EQ(s.cursor(), 0);
  EXPECT_THAT(s.message(), HasSubstr("already at the first stage"));
  EXPECT_FALSE(s.prev_token());
  EXPECT_THAT(s.message(), HasSubstr("still on the encoder side"));
  s.run_to_end();
  const int last = s.cursor();
  EXPECT_TRUE(s.at_end());
  EXPECT_FALSE(s.forward());
  EXPECT_EQ(s.cursor(), last);
  EXPECT_THAT(s.message(), HasSubstr("already at the last stage: decoding finished (</s>)"));
  EXPECT_FALSE(s.next_token());
  EXPECT_THAT(s.message(), HasSubstr("no next token"));
  EXPECT_FALSE(s.jump(-1));
  EXPECT_THAT(s.message(), HasSubstr("stage -1 does not exist"));
  s.jump(100000);
  EXPECT_EQ(s.cursor(), last);
  EXPECT_THAT(s.message(), HasSubstr("stage 100000 does not exist"));
  s.jump_to_step(99);
  EXPECT_THAT(s.message(), HasSubstr("step 99 does not exist"));
}

TEST(Movement, RunForStopsAfterItsTimeWithAtLeastOneStep) {
  Session whole = fixture_session("encdec_post_relu_sin");
  whole.run_to_end();
  ASSERT_GT(whole.steps().size(), 2u);
  Session s = fixture_session("encdec_post_relu_sin");
  EXPECT_FALSE(s.run_for(0.0));  // no time: one step, not finished
  EXPECT_EQ(s.steps().size(), 1u);
  EXPECT_EQ(s.cursor(), s.stage_count() - 1);
  EXPECT_EQ(s.current().kind, StageKind::Choose);
  EXPECT_FALSE(s.run_for(0.0));  // and one more
  EXPECT_EQ(s.steps().size(), 2u);
  EXPECT_TRUE(s.run_for(3600.0));  // time enough: the whole decode, as run_to_end
  EXPECT_TRUE(s.at_end());
  EXPECT_EQ(s.text(), whole.text());
  EXPECT_EQ(s.stage_count(), whole.stage_count());
  EXPECT_TRUE(s.run_for(0.0));  // nothing left: no step, still at the end
  EXPECT_TRUE(s.at_end());
}

TEST(Movement, TokenSteps) {
  Session s = fixture_session("encdec_post_relu_sin");
  const int E = encoder_stage_count(s.model().config), D = decoder_stage_count(s.model().config);
  ASSERT_TRUE(s.next_token());  // from the encoder to the first choice
  EXPECT_EQ(s.cursor(), E + D - 1);
  EXPECT_EQ(s.current().kind, StageKind::Choose);
  EXPECT_EQ(s.tokens().size(), 1u);
  ASSERT_TRUE(s.next_token());
  EXPECT_EQ(s.cursor(), E + 2 * D - 1);
  EXPECT_EQ(s.tokens().size(), 2u);
  ASSERT_TRUE(s.back());  // inside step 1: its token is not chosen yet
  EXPECT_EQ(s.tokens().size(), 1u);
  ASSERT_TRUE(s.next_token());  // to the choice of this same step
  EXPECT_EQ(s.cursor(), E + 2 * D - 1);
  ASSERT_TRUE(s.prev_token());
  EXPECT_EQ(s.cursor(), E + D - 1);
  ASSERT_TRUE(s.prev_token());  // before step 0 lies the memory
  EXPECT_EQ(s.cursor(), E - 1);
  EXPECT_EQ(s.current().kind, StageKind::Memory);
  ASSERT_TRUE(s.jump_to_step(3));
  EXPECT_EQ(s.current_step(), 3);
  EXPECT_EQ(s.text(), "x2 x3 x4 x5");  // forced; </s> dropped from the text
  s.reset();
  EXPECT_EQ(s.cursor(), 0);
  EXPECT_TRUE(s.steps().empty());
}

TEST(Movement, CopiesAreSnapshots) {
  Session s = fixture_session("encdec_pre_relu_sin");
  s.jump_to_step(1);
  const Session snap = s;  // what a worker would publish
  const auto rec = snap.current_record();
  s.run_to_end();
  EXPECT_EQ(snap.steps().size(), 2u);
  EXPECT_EQ(snap.current_record(), rec);
  EXPECT_EQ(snap.cache().layers[0].self_rows, 2);
  // The snapshot can still go on by itself: its live cache was left untouched by the original.
  Session later = snap;
  later.run_to_end();
  ASSERT_EQ(later.steps().size(), s.steps().size());
  EXPECT_TRUE(same_bits(later.steps().back()->trace->logits, s.steps().back()->trace->logits));
}

TEST(Changes, CacheToggleKeepsTheStageAndTheNumbers) {
  Session s = fixture_session("encdec_post_gelu_learned");
  s.jump(40);
  const Mat on = s.current_record()->trace->logits;
  s.set_use_cache(false);
  EXPECT_EQ(s.cursor(), 40);
  EXPECT_FALSE(s.use_cache());
  EXPECT_THAT(s.message(), HasSubstr("cache off"));
  const Mat off = s.current_record()->trace->logits.bottomRows(1);
  EXPECT_LE((on - off).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Changes, NewInputOrSettingsRestartCleanly) {
  Session s = fixture_session("encdec_post_relu_sin");
  s.jump_to_step(2);
  ASSERT_TRUE(s.set_input("b b a", "x6 x6"));
  EXPECT_EQ(s.cursor(), 0);
  EXPECT_TRUE(s.steps().empty());
  s.run_to_end();
  EXPECT_EQ(s.text(), "x6 x6");
  DecodeSettings g;
  g.max_len = 2;
  ASSERT_TRUE(s.set_settings(g));
  s.run_to_end();
  EXPECT_EQ(s.steps().size(), 2u);
  EXPECT_EQ(s.steps().back()->finish_reason, "max length 2");
}

TEST(Changes, ABadChangeLeavesEverythingAsItWas) {
  Session s = fixture_session("encdec_post_relu_sin");
  s.jump_to_step(1);
  const int cursor = s.cursor();
  auto r = s.set_input("");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error(), HasSubstr("source: expected at least one token"));
  DecodeSettings bad;
  bad.strategy = Strategy::Beam;
  bad.beam_width = 0;
  ASSERT_FALSE(s.set_settings(bad).ok());
  EXPECT_EQ(s.cursor(), cursor);
  EXPECT_EQ(s.steps().size(), 2u);
  EXPECT_EQ(s.settings().strategy, Strategy::Forced);
}

TEST(SessionCost, FollowsTheCurrentStep) {
  Session s = fixture_session("encdec_post_relu_sin");
  s.jump_to_step(3);
  const CostReport c = s.cost();
  EXPECT_EQ(c.t, 4);
  EXPECT_EQ(c.n_src, 4);
  EXPECT_EQ(c.kv_self_bytes, kv_cache_bytes(s.model().config, 4));
  EXPECT_LT(c.step_cached.total(), c.step_uncached.total());
  EXPECT_EQ(c.params_total, count_params(s.model().weights, s.model().config));
}

// A kept step's residual blocks after the first refer to the block before them for their input
// instead of holding a copy: block_input is that block's output (the same matrix), equal to the
// input a whole recording (cache off) holds, and whole_trace restores the copy.
TEST(Session, KeptBlocksReferToThePreviousBlocksOutput) {
  for (const char* cs : {"deconly_pre_gelu", "encdec_post_relu_sin", "encdec_pre_3layer_odd"}) {
    SCOPED_TRACE(cs);
    Session kept = fixture_session(cs), whole = fixture_session(cs, test::forced(), false);
    kept.run_to_end();
    whole.run_to_end();
    const int last = static_cast<int>(kept.steps().size()) - 1;
    const DecoderTrace& k = *kept.steps()[static_cast<size_t>(last)]->trace;
    const DecoderTrace& w = *whole.steps()[static_cast<size_t>(last)]->trace;
    ASSERT_EQ(k.kind, Recording::Compact);
    const int row = static_cast<int>(w.output.rows()) - 1;  // the step's row in the whole recording
    const ResidualTrace* prev = nullptr;
    for (size_t l = 0; l < k.layers.size(); ++l) {
      const DecoderLayerTrace &kl = k.layers[l], &wl = w.layers[l];
      const bool cross = !kl.cross_attn.masks.empty();
      const std::vector<std::pair<const ResidualTrace*, const ResidualTrace*>> blocks =
          cross ? std::vector<std::pair<const ResidualTrace*, const ResidualTrace*>>{{&kl.self_block, &wl.self_block},
                                                                                     {&kl.cross_block, &wl.cross_block},
                                                                                     {&kl.ffn_block, &wl.ffn_block}}
                : std::vector<std::pair<const ResidualTrace*, const ResidualTrace*>>{{&kl.self_block, &wl.self_block},
                                                                                     {&kl.ffn_block, &wl.ffn_block}};
      for (const auto& [kb, wb] : blocks) {
        const Mat& in = block_input(k, *kb);
        if (prev) {
          EXPECT_EQ(kb->input.size(), 0) << "layer " << l << ": a copy of the previous block's output";
          EXPECT_EQ(&in, &prev->output) << "layer " << l;
        } else {
          EXPECT_EQ(&in, &kb->input);
        }
        ASSERT_EQ(in.rows(), 1);
        EXPECT_LT((in.row(0) - wb->input.row(row)).cwiseAbs().maxCoeff(), 1e-4f) << "layer " << l;
        prev = kb;
      }
    }
    const std::shared_ptr<const DecoderTrace> restored = kept.whole_trace(last);
    for (size_t l = 0; l < k.layers.size(); ++l) {
      const DecoderLayerTrace& rl = restored->layers[l];
      EXPECT_TRUE(rl.self_block.input == block_input(k, k.layers[l].self_block)) << "layer " << l;
      EXPECT_TRUE(rl.ffn_block.input == block_input(k, k.layers[l].ffn_block)) << "layer " << l;
    }
  }
}

}  // namespace
}  // namespace sf
