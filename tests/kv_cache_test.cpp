// KV cache: decoding with the cache gives the same logits and attention weights as recomputing
// the whole decoder at every step (all fixture architectures × norm placements, source padding
// included); its rows, steps and byte counts are what the formula says.
#include <gtest/gtest.h>

#include <memory>

#include "stepper/cost.h"
#include "stepper/decoding.h"
#include "io/hf_model.h"
#include "model/encoder.h"
#include "stepper/attention_view.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

// Ordinary (non-special) tokens of a vocabulary, in id order.
std::vector<std::string> words(const Vocab& v) {
  std::vector<std::string> out;
  for (int i = 0; i < v.size(); ++i)
    if (i != v.pad() && i != v.bos() && i != v.eos() && i != v.unk()) out.push_back(v.token(i));
  return out;
}

// A source with two trailing <pad> (the padding mask must hide them in cross-attention), or a
// prompt for decoder-only models.
std::string source_text(const Model& m) {
  if (!m.config.has_encoder()) {
    auto w = words(m.config.tgt_vocab);
    return w[0] + " " + w[1] + " " + w[2];
  }
  auto w = words(m.config.src_vocab);
  return w[0] + " " + w[2] + " " + w[1] + " " + w[3] + " <pad> <pad>";
}

std::string target_text(const Model& m, int n) {
  auto w = words(m.config.tgt_vocab);
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? " " : "") + w[static_cast<size_t>((i * 3 + 1) % w.size())];
  return out;
}

Session make(const std::string& cs, const DecodeSettings& s, bool cache, int tgt_len = 9) {
  auto m = std::make_shared<const Model>(test::load_fixture_model(cs));
  auto r =
      Session::create(m, source_text(*m), s.strategy == Strategy::Forced ? target_text(*m, tgt_len) : "", s, cache);
  EXPECT_TRUE(r.ok()) << cs << ": " << r.error();
  return std::move(*r);
}

// Every step: the cached step's rows against the same rows of the recomputation.
void expect_same_steps(const Session& on, const Session& off, const std::string& what) {
  ASSERT_EQ(on.steps().size(), off.steps().size()) << what;
  for (size_t t = 0; t < on.steps().size(); ++t) {
    const StepRecord& a = *on.steps()[t];
    const StepRecord& b = *off.steps()[t];
    const std::string at = what + ", step " + std::to_string(t);
    ASSERT_TRUE(a.cached);
    ASSERT_FALSE(b.cached);
    EXPECT_EQ(a.fed, b.fed) << at;
    EXPECT_EQ(a.chosen, b.chosen) << at;
    const Eigen::Index m = static_cast<Eigen::Index>(a.fed.size());
    ASSERT_EQ(a.trace->logits.rows(), 1) << at << ": a kept step holds the last row's logits";
    ASSERT_EQ(on.whole_trace(static_cast<int>(t))->logits.rows(), m) << at;
    ASSERT_EQ(b.trace->logits.rows(), b.position0 + m) << at;
    EXPECT_LE(test::max_abs_diff(on.whole_trace(static_cast<int>(t))->logits, b.trace->logits.bottomRows(m)), 1e-5)
        << at << ": logits";
    for (size_t l = 0; l < a.trace->layers.size(); ++l) {
      const DecoderLayerTrace& la = a.trace->layers[l];
      const DecoderLayerTrace& lb = b.trace->layers[l];
      // The recording keeps only the rows this step added (bounded memory) ...
      EXPECT_EQ(la.self_attn.k.rows(), m) << at << ", layer " << l;
      EXPECT_EQ(la.self_attn.kv_row0, a.position0) << at << ", layer " << l;
      EXPECT_EQ(lb.self_attn.kv_row0, 0) << at << ", layer " << l << ": a recomputed step keeps everything";
      if (t > 0 && on.model().config.has_encoder()) {
        EXPECT_EQ(la.cross_attn.k.rows(), 0) << at << ", layer " << l << ": cross K/V are step 0's";
      }
      // ... and the gathered K/V are exactly what a recomputation produces for the same rows.
      const int li = static_cast<int>(l);
      for (bool cross : {false, true}) {
        if (cross && !on.model().config.has_encoder()) continue;
        const Session::Kv ka = on.attended_kv(static_cast<int>(t), li, cross);
        const Session::Kv kb = off.attended_kv(static_cast<int>(t), li, cross);
        const char* which = cross ? ": cross " : ": self ";
        ASSERT_EQ(ka.k.rows(), kb.k.rows()) << at << ", layer " << l << which << "K rows";
        EXPECT_LE(test::max_abs_diff(ka.k, kb.k), 1e-5) << at << ", layer " << l << which << "K";
        EXPECT_LE(test::max_abs_diff(ka.v, kb.v), 1e-5) << at << ", layer " << l << which << "V";
      }
      // An export sees the whole K as before.
      const auto whole = on.whole_trace(static_cast<int>(t));
      EXPECT_EQ(whole->layers[l].self_attn.k.rows(), a.position0 + m) << at << ", layer " << l;
      EXPECT_EQ(whole->layers[l].self_attn.kv_row0, 0) << at;
      // A kept step holds no attention maps; they are computed again from its Q, K and mask.
      EXPECT_TRUE(la.self_attn.weights.empty()) << at << ", layer " << l;
      const int ti = static_cast<int>(t);
      const std::vector<Mat> self = on.attention_weights(ti, li, false);
      ASSERT_EQ(static_cast<int>(self.size()), la.self_attn.n_heads) << at;
      const std::vector<Mat> cross = on.model().config.has_encoder() ? on.attention_weights(ti, li, true) : self;
      for (int h = 0; h < la.self_attn.n_heads; ++h) {
        const size_t hs = static_cast<size_t>(h);
        EXPECT_LE(test::max_abs_diff(self[hs], lb.self_attn.head_weights(0, h).bottomRows(m)), 1e-5)
            << at << ", layer " << l << ", head " << h << ": self-attention weights";
        if (on.model().config.has_encoder()) {
          EXPECT_LE(test::max_abs_diff(cross[hs], lb.cross_attn.head_weights(0, h).bottomRows(m)), 1e-5)
              << at << ", layer " << l << ", head " << h << ": cross-attention weights";
        }
      }
    }
  }
}

class CacheVsRecompute : public ::testing::TestWithParam<const char*> {};

TEST_P(CacheVsRecompute, ForcedDecodingEveryStep) {
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  Session on = make(GetParam(), s, true), off = make(GetParam(), s, false);
  on.run_to_end();
  off.run_to_end();
  EXPECT_EQ(on.steps().size(), 10u);  // 9 target tokens, then </s>
  expect_same_steps(on, off, GetParam());
}

TEST_P(CacheVsRecompute, GreedyDecodingEveryStep) {
  Session on = make(GetParam(), {}, true), off = make(GetParam(), {}, false);
  on.run_to_end();
  off.run_to_end();
  expect_same_steps(on, off, GetParam());
}

TEST_P(CacheVsRecompute, BeamSearchEveryBeam) {
  DecodeSettings s;
  s.strategy = Strategy::Beam;
  s.beam_width = 3;
  s.max_len = 8;
  Session on = make(GetParam(), s, true), off = make(GetParam(), s, false);
  on.run_to_end();
  off.run_to_end();
  ASSERT_EQ(on.steps().size(), off.steps().size());
  for (size_t t = 0; t < on.steps().size(); ++t) {
    const StepRecord& a = *on.steps()[t];
    const StepRecord& b = *off.steps()[t];
    ASSERT_EQ(a.beam_traces.size(), b.beam_traces.size());
    for (size_t k = 0; k < a.beam_traces.size(); ++k) {
      if (!a.beam_traces[k]) continue;
      const Eigen::Index m = a.beam_traces[k]->logits.rows();
      EXPECT_LE(test::max_abs_diff(a.beam_traces[k]->logits, b.beam_traces[k]->logits.bottomRows(m)), 1e-5)
          << GetParam() << " step " << t << " beam " << k;
    }
    ASSERT_EQ(a.beams.size(), b.beams.size());
    for (size_t k = 0; k < a.beams.size(); ++k) EXPECT_EQ(a.beams[k].tokens, b.beams[k].tokens);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFixtures, CacheVsRecompute, ::testing::ValuesIn(test::kDecodingCases));

// Cross-attention K/V are computed once from the memory and then only read.
TEST(KvCache, CrossKeysComputedOnceAndReused) {
  const Model m = test::load_fixture_model("encdec_pre_relu_sin");
  const std::vector<int> src = m.config.src_vocab.tokenize("a b c <pad>").ids;
  const Mat memory = encode(m, src, 1, nullptr);
  const EncoderContext enc{&memory, &src};
  Hypothesis h;
  start_hypothesis(m, {m.config.tgt_vocab.bos()}, true, h);
  next_logits(m, enc, h, true, nullptr);
  ASSERT_TRUE(h.cache.layers[0].cross_ready);
  const Mat k0 = h.cache.layers[0].cross_k;
  const float* data0 = h.cache.layers[0].cross_k.data();
  for (int t = 0; t < 4; ++t) {
    h.ids.push_back(4 + t);
    next_logits(m, enc, h, true, nullptr);
  }
  EXPECT_EQ(h.cache.layers[0].cross_k.data(), data0);  // never reallocated
  EXPECT_EQ(test::max_abs_diff(h.cache.layers[0].cross_k, k0), 0.0);
  EXPECT_EQ(h.cache.layers[0].cross_k.rows(), 4);  // (n_src, d), padding rows included
}

TEST(KvCache, RowsRecordTheStepTheyCameIn) {
  // Decoder-only: the prefill (<s> + 3 prompt tokens) is step 0, then one row per step.
  Session s = make("deconly_pre_gelu", test::forced(), true);
  ASSERT_TRUE(s.jump_to_step(3));
  const std::vector<int> want{0, 0, 0, 0, 1, 2, 3};
  EXPECT_EQ(s.steps()[3]->row_step, want);
  EXPECT_EQ(s.cache().row_step, want);
  // Encoder-decoder: <s> at step 0, then one per step.
  Session e = make("encdec_post_relu_sin", test::forced(), true);
  ASSERT_TRUE(e.jump_to_step(2));
  EXPECT_EQ(e.cache().row_step, (std::vector<int>{0, 1, 2}));
}

TEST(KvCache, ByteCountMatchesFormula) {
  const Model m = test::load_fixture_model("encdec_pre_3layer_odd");
  const Config& c = m.config;
  const std::vector<int> src = c.src_vocab.tokenize("a b c d e").ids;
  const Mat memory = encode(m, src, 1, nullptr);
  Hypothesis h;
  start_hypothesis(m, {c.tgt_vocab.bos()}, true, h);
  for (int t = 1; t <= 6; ++t) {
    next_logits(m, {&memory, &src}, h, true, nullptr);
    h.ids.push_back(4);
    // 2 (K and V) × layers × tokens × d × 4 bytes, the "Transformer Architecture" lecture's formula.
    EXPECT_EQ(h.cache.self_bytes(), 2LL * c.n_decoder_layers * t * c.d_model * 4);
    EXPECT_EQ(h.cache.self_bytes(), kv_cache_bytes(c, t));
    EXPECT_EQ(h.cache.cross_bytes(), cross_kv_bytes(c, 5));
    EXPECT_EQ(h.cache.length, t);
  }
}

TEST(KvCache, ViewAsOfAStageShowsLayersFillingInOrder) {
  Session s = make("encdec_post_relu_sin", test::forced(), true);
  ASSERT_TRUE(s.jump_to_step(2));  // step 2 done: 3 rows everywhere
  ASSERT_TRUE(s.forward());        // step 3, stage "embed": nothing appended yet
  KvCacheView v = s.cache();
  EXPECT_EQ(v.step, 3);
  for (const KvLayerView& l : v.layers) {
    EXPECT_EQ(l.self_rows, 3);
    EXPECT_EQ(l.new_rows, 0);
    ASSERT_TRUE(l.cross_k);
    EXPECT_FALSE(l.cross_new);
  }
  ASSERT_TRUE(s.forward());  // layer 0 self-attention: layer 0 has its 4th row, layer 1 not yet
  EXPECT_EQ(s.current().kind, StageKind::SelfAttention);
  v = s.cache();
  EXPECT_EQ(v.layers[0].self_rows, 4);
  EXPECT_EQ(v.layers[0].new_rows, 1);
  EXPECT_EQ(v.layers[1].self_rows, 3);
  EXPECT_EQ(v.row_step, (std::vector<int>{0, 1, 2, 3}));
  const Config& c = s.model().config;
  EXPECT_EQ(v.self_bytes, 2LL * (4 + 3) * c.d_model * 4);
  EXPECT_EQ(v.table.mha_bytes, v.self_bytes);  // every head its own K/V
  EXPECT_EQ(v.cross_bytes, cross_kv_bytes(c, 6));
  // The view's rows are the cache's contents: head h is columns [h·dk, (h+1)·dk).
  EXPECT_GE(v.layers[0].self_k->rows(), 4);
  EXPECT_EQ(v.layers[0].self_k->cols(), c.d_model);
  ASSERT_TRUE(s.next_token());
  v = s.cache();
  for (const KvLayerView& l : v.layers) EXPECT_EQ(l.self_rows, 4);
  EXPECT_EQ(v.self_bytes, kv_cache_bytes(c, 4));
  EXPECT_EQ(s.current_record()->cache_bytes, kv_cache_bytes(c, 4) + cross_kv_bytes(c, 6));
}

// A grouped-query model (llama-tiny: 4 query heads share 2 K/V heads, d_k 12): the real cache
// holds rows of h_kv · d_k floats, and the view's table agrees with it at every stage, beside a
// multi-head cache twice its size.
TEST(KvCache, GroupedQueryCacheMatchesTheTable) {
  auto loaded = load_hf_model(test::fixture("hf/llama-tiny"));
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  auto m = std::make_shared<const Model>(std::move(*loaded));
  const Config& c = m->config;
  ASSERT_EQ(c.n_heads, 4);
  ASSERT_EQ(c.kv_heads(), 2);
  ASSERT_EQ(c.d_k(), 12);
  Hypothesis h;
  start_hypothesis(*m, {c.tgt_vocab.bos(), 40, 41}, true, h);
  for (int t = 3; t <= 6; ++t) {
    next_logits(*m, {}, h, true, nullptr);
    EXPECT_EQ(h.cache.length, t);
    EXPECT_EQ(h.cache.layers[0].self_k.cols(), 2 * 12);
    EXPECT_EQ(h.cache.self_bytes(), 2LL * c.n_decoder_layers * 2 * 12 * t * 4);
    EXPECT_EQ(h.cache.self_bytes(), kv_cache_bytes(c, t));
    EXPECT_EQ(mha_kv_cache_bytes(c, t), 2 * h.cache.self_bytes());
    h.ids.push_back(42);
  }
  DecodeSettings d;
  d.max_len = 6;
  auto made = Session::create(m, "hello world", "", d, true);
  ASSERT_TRUE(made.ok()) << made.error();
  Session& s = *made;
  ASSERT_TRUE(s.jump_to_step(1));
  const int n = s.current_record()->position0 + 1;  // prompt + the one token of step 1
  KvCacheView v = s.cache();
  EXPECT_EQ(v.table.group, 2);
  EXPECT_EQ(v.table.bytes, kv_cache_bytes(c, n));
  EXPECT_EQ(v.table.mha_bytes, mha_kv_cache_bytes(c, n));
  EXPECT_EQ(v.self_bytes, v.table.bytes);
  EXPECT_EQ(s.current_record()->cache_bytes, v.table.bytes);  // the real caches' bytes()
  EXPECT_DOUBLE_EQ(v.table.saved(), 2.0);
  // Mid-step: layer 0 has the new row, layer 1 not yet.
  ASSERT_TRUE(s.forward());
  while (s.current().kind != StageKind::SelfAttention) ASSERT_TRUE(s.forward());
  v = s.cache();
  ASSERT_EQ(v.table.layers.size(), 2u);
  EXPECT_EQ(v.table.layers[0].tokens, n + 1);
  EXPECT_EQ(v.table.layers[1].tokens, n);
  EXPECT_EQ(v.table.bytes, kv_cache_bytes(c, n + 1) / 2 + kv_cache_bytes(c, n) / 2);
  EXPECT_EQ(v.table.layers[1].mha_bytes, 2 * v.table.layers[1].bytes);
}

// The view points into K/V an attention view already gathered (one copy, no second gathering)
// wherever they hold its rows: the cursor's step, or with the cache on an earlier step's rows,
// which the later steps only extend; it shows the same numbers as the K/V it gathers itself.
TEST(KvCache, ViewSharesTheAttentionViewsKeysAndValues) {
  for (bool cached : {true, false}) {
    SCOPED_TRACE(cached ? "cache on" : "cache off");
    Session s = make("encdec_post_relu_sin", test::forced(), cached);
    ASSERT_TRUE(s.jump_to_step(2));
    while (s.current_step() < 3 || s.current().kind != StageKind::SelfAttention) ASSERT_TRUE(s.forward());
    ASSERT_EQ(s.current().layer, 0);  // layer 0 holds step 3's row, layer 1 not yet
    const int L = s.model().config.n_decoder_layers;
    ASSERT_GE(L, 2);
    std::vector<GatheredKv> self, cross;
    for (int l = 0; l < L; ++l) {
      const std::vector<DecodedRow> rows = lineage_rows(s, l == 0 ? 3 : 2);
      for (bool x : {false, true}) {
        auto st = std::make_shared<const StackedAttention>(decoder_attention(s, rows, l, x, false));
        (x ? cross : self).push_back({rows.back().step, &st->trace.k, &st->trace.v, st});
      }
    }
    const KvCacheView alone = s.cache();
    const KvCacheView v = s.cache(self, cross);
    for (int l = 0; l < L; ++l) {
      const KvLayerView& a = alone.layers[static_cast<size_t>(l)];
      const KvLayerView& b = v.layers[static_cast<size_t>(l)];
      const bool shared = l == 0 || cached;  // layer 1's rows were gathered for step 2
      EXPECT_EQ(b.self_k == self[static_cast<size_t>(l)].k, shared) << "layer " << l;
      EXPECT_EQ(b.self_v == self[static_cast<size_t>(l)].v, shared) << "layer " << l;
      EXPECT_EQ(b.cross_k == cross[static_cast<size_t>(l)].k, shared) << "layer " << l;
      EXPECT_EQ(b.self_rows, a.self_rows);
      ASSERT_GE(b.self_k->rows(), b.self_rows);
      EXPECT_TRUE(b.self_k->topRows(b.self_rows) == a.self_k->topRows(a.self_rows));
      EXPECT_TRUE(b.self_v->topRows(b.self_rows) == a.self_v->topRows(a.self_rows));
      ASSERT_TRUE(b.cross_k && a.cross_k);
      EXPECT_TRUE(*b.cross_k == *a.cross_k);
      EXPECT_TRUE(*b.cross_v == *a.cross_v);
    }
    // The view keeps what it points into alive.
    const Mat k0 = *v.layers[0].self_k;
    self.clear();
    cross.clear();
    EXPECT_TRUE(*v.layers[0].self_k == k0);
  }
}

TEST(KvCache, CrossKeysAppearAtTheirLayerOnStepZero) {
  Session s = make("encdec_pre_relu_sin", {}, true);
  while (s.current_step() < 0) ASSERT_TRUE(s.forward());
  EXPECT_EQ(s.cache().layers[0].cross_k, nullptr);
  while (s.current().kind != StageKind::CrossAttention) ASSERT_TRUE(s.forward());
  const KvCacheView v = s.cache();
  ASSERT_NE(v.layers[0].cross_k, nullptr);
  EXPECT_TRUE(v.layers[0].cross_new);
  EXPECT_EQ(v.layers[1].cross_k, nullptr);
}

TEST(KvCache, SwitchedOffHoldsNothing) {
  Session s = make("encdec_post_relu_sin", test::forced(), false);
  ASSERT_TRUE(s.jump_to_step(3));
  const KvCacheView v = s.cache();
  EXPECT_FALSE(v.enabled);
  EXPECT_EQ(v.self_bytes, 0);
  EXPECT_EQ(v.cross_bytes, 0);
  EXPECT_EQ(s.current_record()->cache_bytes, 0);
  // What was recomputed is still shown: K for all 4 rows.
  EXPECT_EQ(v.layers[0].self_rows, 4);
}

// The teaching point of the "no causal mask" switch: the cache froze what earlier rows saw, a
// recomputation lets them see later tokens, so the two disagree — caching is valid only because
// of the causal mask.
TEST(KvCache, WithoutTheCausalMaskCacheAndRecomputationDisagree) {
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  s.run.causal_mask = false;
  Session on = make("deconly_pre_gelu", s, true), off = make("deconly_pre_gelu", s, false);
  on.run_to_end();
  off.run_to_end();
  const Eigen::Index last = static_cast<Eigen::Index>(on.steps().size()) - 1;
  const StepRecord& a = *on.steps()[static_cast<size_t>(last)];
  const StepRecord& b = *off.steps()[static_cast<size_t>(last)];
  EXPECT_GT(test::max_abs_diff(a.trace->logits, b.trace->logits.bottomRows(1)), 1e-4);
}

}  // namespace
}  // namespace sf
