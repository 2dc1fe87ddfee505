// The explorer's snapshot views (app/gui/snapshot.h, GL-free): moving the cursor rebuilds only the
// attention views whose rows changed; the others share the previous snapshot's data, with the maps
// and thumbnails already computed, and hold the same numbers as views built afresh.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
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

// A greedy run of fixture `name` on its vocabulary's words 5 and 6 (the source's, or the target's
// for a decoder-only model), at most max_len tokens, stepped to its end.
Session finished_run(const std::string& name, int max_len) {
  auto m = std::make_shared<const Model>(test::load_fixture_model(name));
  const Vocab& v = m->config.has_encoder() ? m->config.src_vocab : m->config.tgt_vocab;
  DecodeSettings greedy;
  greedy.max_len = max_len;
  auto made = Session::create(m, v.token(5) + " " + v.token(6), "", greedy, true);
  if (!made.ok()) throw std::runtime_error(name + ": " + made.error());
  Session s = std::move(*made);
  s.run_to_end();
  return s;
}

TEST(ExplorerViews, ViewsWhoseRowsDidNotChangeAreSharedWithThePreviousSnapshot) {
  Session s = finished_run("deconly_pre_gelu", 3);
  const Config& c = s.model_ptr()->config;
  ASSERT_GE(c.n_decoder_layers, 2);

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

// A snapshot holds the gathered K/V and the masks once: the KV cache view points into the
// attention views' K and V, and the attention views of one kind share one mask, at the end of a
// run and mid-step (where the layers not reached yet hold a row fewer).
TEST(ExplorerViews, KvCacheAndMasksAreHeldOnce) {
  Session s = finished_run("encdec_pre_relu_sin", 4);
  const Config& c = s.model_ptr()->config;
  ASSERT_GE(c.n_decoder_layers, 2);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "end of the run" : "mid-step");
    auto sn = snapshot_of(s);
    build_views(*sn);
    ASSERT_EQ(sn->kv.layers.size(), static_cast<size_t>(c.n_decoder_layers));
    for (int l = 0; l < c.n_decoder_layers; ++l) {
      const AttnView* self = sn->attn_view(AttnKind::DecoderSelf, l);
      const AttnView* cross = sn->attn_view(AttnKind::Cross, l);
      ASSERT_TRUE(self && cross) << l;
      const KvLayerView& kv = sn->kv.layers[static_cast<size_t>(l)];
      EXPECT_EQ(kv.self_k, &self->trace().k) << l;
      EXPECT_EQ(kv.self_v, &self->trace().v) << l;
      EXPECT_EQ(kv.cross_k, &cross->trace().k) << l;
      EXPECT_EQ(kv.cross_v, &cross->trace().v) << l;
      if (l == 0) continue;
      const AttnView* prev = sn->attn_view(AttnKind::DecoderSelf, l - 1);
      const bool same_rows = prev->trace().q.rows() == self->trace().q.rows();
      EXPECT_EQ(self->trace().masks.storage() == prev->trace().masks.storage(), same_rows) << l;
      EXPECT_EQ(cross->trace().masks.storage() == sn->attn_view(AttnKind::Cross, l - 1)->trace().masks.storage(),
                sn->attn_view(AttnKind::Cross, l - 1)->trace().q.rows() == cross->trace().q.rows())
          << l;
    }
    // Mid-step: the last step's layer 1 self-attention, layer 0 holds the newest row, layer 1 not.
    while (!(s.current().kind == StageKind::SelfAttention && s.current().layer == 1)) ASSERT_TRUE(s.back());
    ASSERT_TRUE(s.back());
  }
}

}  // namespace
}  // namespace sf::gui
