// The stacked attention view of the decoded sequence (stepper/attention_view.h): with the cache on,
// each row's weights and raw scores equal those of recomputing the whole sequence; keys a row did
// not see are masked, weight 0 and "not computed"; the encoder's is its recording.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "stepper/attention_view.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

std::string text_of(const Vocab& v, std::initializer_list<int> picks) {
  std::vector<std::string> w;
  for (int i = 0; i < v.size(); ++i)
    if (i != v.pad() && i != v.bos() && i != v.eos() && i != v.unk()) w.push_back(v.token(i));
  std::string out;
  for (int p : picks) out += (out.empty() ? "" : " ") + w[static_cast<size_t>(p) % w.size()];
  return out;
}

Session forced_session(const std::shared_ptr<const Model>& m, bool cache) {
  const Config& c = m->config;
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  const std::string src = c.has_encoder() ? text_of(c.src_vocab, {0, 2, 1, 3}) : text_of(c.tgt_vocab, {0, 1, 2});
  auto r = Session::create(m, src, text_of(c.tgt_vocab, {1, 4, 2, 5, 3}), s, cache);
  EXPECT_TRUE(r.ok()) << r.error();
  Session out = std::move(*r);
  out.run_to_end();
  return out;
}

class AttentionView : public ::testing::TestWithParam<const char*> {};

TEST_P(AttentionView, CachedRowsEqualTheWholeRecomputation) {
  auto m = std::make_shared<const Model>(test::load_fixture_model(GetParam()));
  const Config& c = m->config;
  const Session cached = forced_session(m, true), whole = forced_session(m, false);
  const int last = static_cast<int>(cached.steps().size()) - 1;
  const std::vector<DecodedRow> rows = lineage_rows(cached, last);
  // Recomputing without the cache: the last step's recording holds every row.
  const DecoderTrace& full = *whole.steps().back()->trace;
  ASSERT_EQ(static_cast<Eigen::Index>(rows.size()), full.output.rows());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].position, static_cast<int>(i));
  // The keys row i's step saw: every row fed at that step or before (a prefill scores its rows
  // together, the causal mask hiding the later ones).
  const auto seen = [&](Eigen::Index i) {
    Eigen::Index n = 0;
    for (const DecodedRow& r : rows) n += r.step <= rows[static_cast<size_t>(i)].step;
    return n;
  };
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    for (bool cross : {false, true}) {
      if (cross && !c.has_cross_attention()) continue;
      const StackedAttention v = decoder_attention(cached, rows, l, cross);
      const AttentionTrace& a = v.trace;
      const AttentionTrace& f =
          cross ? full.layers[static_cast<size_t>(l)].cross_attn : full.layers[static_cast<size_t>(l)].self_attn;
      ASSERT_EQ(a.weights[0].rows(), static_cast<Eigen::Index>(rows.size()));
      ASSERT_EQ(a.weights[0].cols(), f.weights[0].cols());
      EXPECT_EQ(v.q_step.back(), last);
      for (int h = 0; h < a.n_heads; ++h) {
        const Mat& w = a.weights[static_cast<size_t>(h)];
        const Mat& raw = a.raw_scores[static_cast<size_t>(h)];
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
          for (Eigen::Index j = 0; j < w.cols(); ++j) {
            EXPECT_NEAR(w(i, j), f.weights[static_cast<size_t>(h)](i, j), 1e-5) << l << cross << h << i << j;
            EXPECT_EQ(a.masks[0](i, j), f.masks[0](i, j));
            if (!cross && j > i) {
              EXPECT_EQ(w(i, j), 0.0f);
            }
            if (!cross && j >= seen(i)) {  // not fed yet when row i's step ran: not computed
              EXPECT_TRUE(std::isnan(raw(i, j)));
            } else {
              EXPECT_NEAR(raw(i, j), f.raw_scores[static_cast<size_t>(h)](i, j), 1e-4) << l << cross << h << i << j;
            }
          }
        }
      }
    }
  }
}

TEST_P(AttentionView, TheNewestRowScoresAsTheSessionsWholeTrace) {
  auto m = std::make_shared<const Model>(test::load_fixture_model(GetParam()));
  const Session s = forced_session(m, true);
  const int last = static_cast<int>(s.steps().size()) - 1;
  const std::vector<DecodedRow> rows = lineage_rows(s, last);
  const auto whole = s.whole_trace(last);
  const StackedAttention v = decoder_attention(s, rows, 0, false);
  const AttentionTrace& w = whole->layers[0].self_attn;
  const Eigen::Index i = v.trace.raw_scores[0].rows() - 1;
  for (int h = 0; h < v.trace.n_heads; ++h)
    for (Eigen::Index j = 0; j < w.raw_scores[0].cols(); ++j)
      EXPECT_EQ(v.trace.raw_scores[static_cast<size_t>(h)](i, j), w.raw_scores[static_cast<size_t>(h)](0, j));
}

// One mask per attention kind: a run's layers record the one list the forward built (the same
// storage, the prefill's and the encoder's), and the stacked view of a layer shares the previous
// layer's when its own would be the same, bit for bit — each equal to the mask it builds alone.
TEST_P(AttentionView, LayersShareOneMaskPerKind) {
  auto m = std::make_shared<const Model>(test::load_fixture_model(GetParam()));
  const Config& c = m->config;
  ASSERT_GE(c.n_decoder_layers, 2);
  const Session cached = forced_session(m, true);
  const DecoderTrace& prefill = *cached.steps()[0]->trace;
  const int last = static_cast<int>(cached.steps().size()) - 1;
  const std::vector<DecodedRow> rows = lineage_rows(cached, last);
  for (bool cross : {false, true}) {
    if (cross && !c.has_cross_attention()) continue;
    SCOPED_TRACE(cross ? "cross" : "self");
    const auto pick = [&](const DecoderLayerTrace& l) -> const AttentionTrace& {
      return cross ? l.cross_attn : l.self_attn;
    };
    const MaskList& first = pick(prefill.layers[0]).masks;
    ASSERT_NE(first.storage(), nullptr);
    for (const DecoderLayerTrace& l : prefill.layers) EXPECT_EQ(pick(l).masks.storage(), first.storage());
    StackedAttention prev;
    for (int l = 0; l < c.n_decoder_layers; ++l) {
      const StackedAttention alone = decoder_attention(cached, rows, l, cross, false);
      StackedAttention v = decoder_attention(cached, rows, l, cross, false, l > 0 ? &prev.trace.masks : nullptr);
      ASSERT_EQ(v.trace.masks.size(), 1u);
      EXPECT_TRUE(v.trace.masks[0] == alone.trace.masks[0]) << "layer " << l;
      if (l > 0) {
        EXPECT_EQ(v.trace.masks.storage(), prev.trace.masks.storage()) << "layer " << l;
      }
      EXPECT_NE(alone.trace.masks.storage(), v.trace.masks.storage());
      prev = std::move(v);
    }
    // A view over other rows has another mask: nothing is shared.
    const std::vector<DecodedRow> fewer = lineage_rows(cached, last - 1);
    const StackedAttention other = decoder_attention(cached, fewer, 0, cross, false, &prev.trace.masks);
    EXPECT_NE(other.trace.masks.storage(), prev.trace.masks.storage());
    MaskList copy = other.trace.masks;
    EXPECT_FALSE(share_if_same(copy, prev.trace.masks));
    EXPECT_EQ(copy.storage(), other.trace.masks.storage());
  }
  if (c.has_encoder()) {
    const EncoderTrace& e = cached.encoder()->trace;
    for (const EncoderLayerTrace& l : e.layers)
      EXPECT_EQ(l.self_attn.masks.storage(), e.layers[0].self_attn.masks.storage());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AttentionView,
                         ::testing::Values("encdec_post_relu_sin", "encdec_pre_gelu_shared", "deconly_pre_gelu",
                                           "deconly_post_relu_learned"));

TEST(AttentionView, KeysAreTheFedTokensOrTheSource) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("encdec_pre_relu_sin"));
  const Session s = forced_session(m, true);
  const std::vector<DecodedRow> rows = lineage_rows(s, 2);  // <s> and two target tokens
  ASSERT_EQ(rows.size(), 3u);
  const StackedAttention self = decoder_attention(s, rows, 0, false);
  EXPECT_EQ(self.q_ids, (std::vector<int>{rows[0].id, rows[1].id, rows[2].id}));
  EXPECT_EQ(self.q_step, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(self.k_ids, self.q_ids);
  const StackedAttention cross = decoder_attention(s, rows, 0, true);
  EXPECT_EQ(cross.k_ids, s.encoder()->src_ids);
  const StackedAttention enc = encoder_attention(s, 1);
  EXPECT_EQ(enc.q_ids, s.encoder()->src_ids);
  EXPECT_EQ(enc.q_step, std::vector<int>(s.encoder()->src_ids.size(), -1));
  EXPECT_EQ(enc.trace.weights[0], s.encoder()->trace.layers[1].self_attn.weights[0]);
}

}  // namespace
}  // namespace sf
