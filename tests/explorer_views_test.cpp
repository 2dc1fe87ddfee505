// The explorer's snapshot views (app/gui/snapshot.h, GL-free): moving the cursor rebuilds only the
// attention views whose rows changed; the others share the previous snapshot's data, with the maps
// and thumbnails already computed, and hold the same numbers as views built afresh.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "snapshot.h"
#include "test_util.h"

namespace sf::gui {
namespace {

std::shared_ptr<Snapshot> snapshot_of(const Session& s) {
  auto out = std::make_shared<Snapshot>();
  out->model = s.model_ptr();
  out->session = std::make_shared<const Session>(s);
  return out;
}

TEST(ExplorerViews, ViewsWhoseRowsDidNotChangeAreSharedWithThePreviousSnapshot) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("deconly_pre_gelu"));
  const Config& c = m->config;
  ASSERT_GE(c.n_decoder_layers, 2);
  DecodeSettings greedy;
  greedy.max_len = 3;
  auto made = Session::create(m, c.tgt_vocab.token(5) + " " + c.tgt_vocab.token(6), "", greedy, true);
  ASSERT_TRUE(made.ok()) << made.error();
  Session s = std::move(*made);
  s.run_to_end();

  auto a = snapshot_of(s);
  build_views(*a);
  // The same cursor again: every view is shared, its maps included.
  const AttnView* a0 = a->attn_view(AttnKind::DecoderSelf, 0);
  ASSERT_NE(a0, nullptr);
  const HeadMap first = a0->head(0);
  a0->data->maps.make_thumbnail(1);
  auto b = snapshot_of(s);
  build_views(*b, a.get());
  for (int l = 0; l < c.n_decoder_layers; ++l)
    EXPECT_EQ(b->attn_view(AttnKind::DecoderSelf, l)->data, a->attn_view(AttnKind::DecoderSelf, l)->data) << l;
  EXPECT_EQ(&b->attn_view(AttnKind::DecoderSelf, 0)->head(0).weights, &first.weights);
  EXPECT_NE(b->attn_view(AttnKind::DecoderSelf, 0)->thumb(1), nullptr);

  // Back until the last layer's view loses the newest row: that view is new, the others shared.
  const int L = c.n_decoder_layers - 1;
  const auto rows = [](const Snapshot& sn, int l) {
    const AttnView* v = sn.attn_view(AttnKind::DecoderSelf, l);
    return v ? v->trace().q.rows() : -1;
  };
  std::shared_ptr<Snapshot> prev = b, next;
  for (int guard = 0; guard < 64; ++guard) {
    ASSERT_TRUE(s.back());
    next = snapshot_of(s);
    build_views(*next, prev.get());
    if (rows(*next, L) != rows(*prev, L)) break;
    for (int l = 0; l < c.n_decoder_layers; ++l)
      EXPECT_EQ(next->attn_view(AttnKind::DecoderSelf, l)->data, prev->attn_view(AttnKind::DecoderSelf, l)->data);
    prev = next;
  }
  ASSERT_NE(rows(*next, L), rows(*prev, L)) << "stepping back reached the last layer's attention";
  EXPECT_NE(next->attn_view(AttnKind::DecoderSelf, L)->data, prev->attn_view(AttnKind::DecoderSelf, L)->data);
  EXPECT_EQ(next->attn_view(AttnKind::DecoderSelf, 0)->data, prev->attn_view(AttnKind::DecoderSelf, 0)->data);
  // The cursor-dependent marks are the snapshot's own.
  EXPECT_FALSE(prev->attn_view(AttnKind::DecoderSelf, 0)->live);

  // Shared or not, the numbers are those of views built afresh.
  auto fresh = snapshot_of(s);
  build_views(*fresh);
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    const AttnView* x = next->attn_view(AttnKind::DecoderSelf, l);
    const AttnView* y = fresh->attn_view(AttnKind::DecoderSelf, l);
    ASSERT_EQ(x == nullptr, y == nullptr);
    if (!x) continue;
    EXPECT_EQ(x->new_row0, y->new_row0);
    EXPECT_EQ(x->new_rows, y->new_rows);
    EXPECT_EQ(x->live, y->live);
    EXPECT_EQ(x->stage, y->stage);
    EXPECT_EQ(x->q_labels(), y->q_labels());
    for (int h = 0; h < x->trace().n_heads; ++h) EXPECT_TRUE(x->head(h).weights == y->head(h).weights) << l << " " << h;
  }
}

// A new session (another input) shares nothing with the views of the one before.
TEST(ExplorerViews, ANewInputSharesNothing) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("deconly_pre_gelu"));
  const Config& c = m->config;
  DecodeSettings greedy;
  greedy.max_len = 3;
  auto one = Session::create(m, c.tgt_vocab.token(5), "", greedy, true);
  auto two = Session::create(m, c.tgt_vocab.token(5), "", greedy, true);
  ASSERT_TRUE(one.ok() && two.ok());
  one->run_to_end();
  two->run_to_end();
  auto a = snapshot_of(*one);
  build_views(*a);
  auto b = snapshot_of(*two);
  build_views(*b, a.get());
  for (int l = 0; l < c.n_decoder_layers; ++l)
    EXPECT_NE(b->attn_view(AttnKind::DecoderSelf, l)->data, a->attn_view(AttnKind::DecoderSelf, l)->data);
}

}  // namespace
}  // namespace sf::gui
