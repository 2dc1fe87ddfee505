// The Masks panel's tables (analysis/mask_tables.h): the padding and causal rules add up to the
// mask the forward used, the scores are the recording's raw scores × 1/√d_k bit for bit, and the
// masked scores are −∞ exactly where the mask is and the scores elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "analysis/mask_tables.h"
#include "model/mask.h"
#include "stepper/attention_view.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

void expect_tables(const StackedAttention& st, int pad_key, bool causal) {
  const AttentionTrace& a = st.trace;
  const Mat& m = a.masks[0];
  for (int h = 0; h < a.n_heads; ++h) {
    Mat raw, w;
    stacked_head_maps(a, st.runs, h, raw, w);
    const MaskTables t = mask_tables(a, raw, st.k_ids, pad_key, causal, 0);
    EXPECT_EQ(t.outside_window.size(), 0);
    ASSERT_EQ(t.scores.rows(), m.rows());
    ASSERT_EQ(t.scores.cols(), m.cols());
    int padded = 0;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        EXPECT_EQ(t.padding(i, j) + t.causal(i, j), m(i, j)) << i << "," << j;
        EXPECT_EQ(std::isinf(t.padding(i, j)), st.k_ids[static_cast<size_t>(j)] == pad_key);
        EXPECT_EQ(std::isinf(t.causal(i, j)), causal && j > i);
        padded += std::isinf(t.padding(i, j));
        const float s = raw(i, j) * a.scale;
        if (std::isnan(s)) {
          EXPECT_TRUE(std::isnan(t.scores(i, j)));
        } else {
          EXPECT_EQ(t.scores(i, j), s);
        }
        if (std::isinf(m(i, j))) {
          EXPECT_EQ(t.masked(i, j), kMasked);
        } else {
          EXPECT_EQ(t.masked(i, j), s);
        }
      }
    }
    if (pad_key >= 0 && !causal) {
      EXPECT_GT(padded, 0);
    }
  }
}

TEST(MaskTables, RulesAddUpToTheForwardsMaskAndScoresAreTheRecordings) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("encdec_post_relu_sin"));
  const Config& c = m->config;
  DecodeSettings d;
  d.strategy = Strategy::Forced;
  auto made = Session::create(m, "a b c <pad>", "x2 x3 x4 x5", d, true);
  ASSERT_TRUE(made.ok()) << made.error();
  Session& s = *made;
  s.run_to_end();
  const std::vector<DecodedRow> rows = lineage_rows(s, static_cast<int>(s.steps().size()) - 1);
  expect_tables(encoder_attention(s, 0), source_pad_key(c), false);
  expect_tables(decoder_attention(s, rows, 1, false, false), decoder_pad_key(c), true);
  expect_tables(decoder_attention(s, rows, 0, true, false), source_pad_key(c), false);
}

}  // namespace
}  // namespace sf
