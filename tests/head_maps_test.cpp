// An attention view of a long input computes a head's map and thumbnail on first use and keeps it
// where readers of other heads cannot see it being written (analysis/head_maps.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/head_maps.h"
#include "stepper/attention_view.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

Session run_session(const std::shared_ptr<const Model>& m, bool cache, int words = 5) {
  DecodeSettings greedy;
  greedy.max_len = 4;
  auto s = Session::create(m, test::prompt_of(m->config, words), "", greedy, cache);
  EXPECT_TRUE(s.ok()) << s.error();
  Session out = std::move(*s);
  out.run_to_end();
  return out;
}

bool same(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.array() == b.array() || (a.array().isNaN() && b.array().isNaN())).all();
}

// A view's heads come one by one, each the map stacked_head_maps computes, at an address that does
// not move; a thumbnail is made without keeping its map.
TEST(HeadMaps, ComputesEachHeadOnceOnDemand) {
  const auto m = test::shared_fixture_model("deconly_pre_gelu");
  const Session s = run_session(m, true);
  const std::vector<DecodedRow> rows = lineage_rows(s, static_cast<int>(s.steps().size()) - 1);
  const int layer = m->config.n_decoder_layers - 1;
  const HeadMaps maps(decoder_attention(s, rows, layer, false, /*maps=*/false), 4);
  const StackedAttention built = decoder_attention(s, rows, layer, false);
  ASSERT_GE(maps.n_heads(), 2);
  for (int h = 0; h < maps.n_heads(); ++h) EXPECT_FALSE(maps.has_head(h));
  EXPECT_EQ(maps.thumbnail(0), nullptr);

  const HeadMap h1 = maps.head(1);
  EXPECT_TRUE(maps.has_head(1));
  EXPECT_FALSE(maps.has_head(0)) << "asking for one head computes that head only";
  EXPECT_TRUE(same(h1.weights, built.trace.weights[1]));
  EXPECT_TRUE(same(h1.raw, built.trace.raw_scores[1]));
  EXPECT_EQ(&maps.head(1).weights, &h1.weights) << "a head once computed is kept where it is";

  maps.make_thumbnail(0);
  ASSERT_NE(maps.thumbnail(0), nullptr);
  EXPECT_FALSE(maps.has_head(0)) << "a thumbnail does not keep its map";
  const HeadThumbnail expect = head_thumbnail(built.trace.weights[0], built.trace.masks[0], 4);
  EXPECT_TRUE(maps.thumbnail(0)->map == expect.map);
  EXPECT_EQ(maps.thumbnail(0)->max, expect.max);
  EXPECT_EQ(maps.thumbnail(0)->mean_entropy, expect.mean_entropy);
  EXPECT_FALSE(maps.thumbnails_done());
  for (int h = 0; h < maps.n_heads(); ++h) maps.make_thumbnail(h);
  EXPECT_TRUE(maps.thumbnails_done());

  EXPECT_THROW(maps.head(maps.n_heads()), std::out_of_range);
  EXPECT_THROW(maps.head(-1), std::out_of_range);
  EXPECT_EQ(maps.thumbnail(maps.n_heads()), nullptr);
}

// Readers of different heads on several threads: each gets its head's map, whole, while the others
// are being computed (the map of a head is never written after it is returned).
TEST(HeadMaps, ReadersOfOtherHeadsOnOtherThreads) {
  const auto m = test::shared_fixture_model("deconly_pre_gelu");
  const Session s = run_session(m, true, 7);
  const std::vector<DecodedRow> rows = lineage_rows(s, static_cast<int>(s.steps().size()) - 1);
  const StackedAttention built = decoder_attention(s, rows, 0, false);
  for (int round = 0; round < 20; ++round) {
    const HeadMaps maps(decoder_attention(s, rows, 0, false, /*maps=*/false), 8);
    const int H = maps.n_heads();
    std::vector<int> ok(static_cast<size_t>(2 * H), 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2 * H; ++t)
      threads.emplace_back([&, t] {
        const int h = (t * 7 + round) % H;
        const HeadMap a = maps.head(h);
        if (t % 3 == 0) maps.make_thumbnail(h);
        ok[static_cast<size_t>(t)] = same(a.weights, built.trace.weights[static_cast<size_t>(h)]) &&
                                     same(a.raw, built.trace.raw_scores[static_cast<size_t>(h)]);
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < 2 * H; ++t) EXPECT_TRUE(ok[static_cast<size_t>(t)]) << "round " << round << " reader " << t;
  }
}

// The encoder's recording holds its maps: a view of it returns them, computing nothing.
TEST(HeadMaps, RecordedMapsAreReturnedAsTheyAre) {
  const auto m = test::shared_fixture_model("encdec_pre_relu_sin");
  const Session s = run_session(m, true);
  const HeadMaps maps(encoder_attention(s, 0), 96);
  const AttentionTrace& rec = s.encoder()->trace.layers[0].self_attn;
  for (int h = 0; h < maps.n_heads(); ++h) {
    EXPECT_TRUE(maps.has_head(h));
    EXPECT_TRUE(maps.head(h).weights == rec.weights[static_cast<size_t>(h)]);
  }
}

}  // namespace
}  // namespace sf
