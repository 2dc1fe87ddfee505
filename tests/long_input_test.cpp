// Long inputs in bounded memory: a head's attention map computed on demand (head_attention) is the
// one the forward computes, and a stepper Session keeps Q, K and the masks instead of the maps, and
// one copy of each matrix its blocks record, so that what it holds grows as O(n·d·layers), not
// O(n²·heads·layers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "model/attention.h"
#include "model/mask.h"
#include "analysis/head_thumbnail.h"
#include "analysis/layer_stats.h"
#include "io/checkpoint.h"
#include "model/weights.h"
#include "stepper/attention_view.h"
#include "stepper/run.h"
#include "stepper/session.h"
#include "model_shapes.h"
#include "test_util.h"

namespace sf {
namespace {

Mat random_mat(Eigen::Index rows, Eigen::Index cols) { return Mat::Random(rows, cols) * 2.0f; }

std::shared_ptr<const Model> fixture_model(const std::string& name) {
  if (name.rfind("hf/", 0) != 0) return std::make_shared<const Model>(test::load_fixture_model(name));
  auto m = load_model(test::fixture(name));
  EXPECT_TRUE(m.ok()) << m.error();
  return std::make_shared<const Model>(m.ok() ? std::move(*m) : Model{});
}

// head_attention against attend()'s recording of the same Q, K, V and mask: many queries (the
// transposed-K product), one query (a cached step's matrix-vector product), grouped-query heads.
TEST(HeadAttention, EqualsTheMapTheForwardRecords) {
  std::srand(7);
  struct Case {
    int nq, nk;
    Heads heads;
  };
  for (const Case& c :
       {Case{7, 7, Heads(4)}, Case{1, 9, Heads(4)}, Case{5, 12, Heads(4, 2)}, Case{1, 6, Heads(6, 3)}}) {
    const int dk = 8;
    const Mat q = random_mat(c.nq, c.heads.q * dk), k = random_mat(c.nk, c.heads.kv * dk);
    const Mat v = random_mat(c.nk, c.heads.kv * dk);
    std::vector<int> key_ids(static_cast<size_t>(c.nk), 5);
    key_ids[1] = 0;  // a padding key
    const std::vector<Mat> masks{make_mask(c.nq, key_ids, 0, true, c.nk - c.nq)};
    AttentionTrace tr;
    Mat concat;
    attend(q, k, v, c.heads, masks, concat, &tr);
    for (int h = 0; h < c.heads.q; ++h) {
      Mat w, raw;
      head_attention(q, k, c.heads, h, masks[0], w, &raw);
      const size_t hs = static_cast<size_t>(h);
      EXPECT_TRUE(w == tr.weights[hs]) << c.nq << "x" << c.nk << " head " << h << "\n" << w << "\n" << tr.weights[hs];
      EXPECT_TRUE(raw == tr.raw_scores[hs]) << c.nq << "x" << c.nk << " head " << h;
    }
  }
}

// A kept step holds no maps; Session::attention_weights gives them back as the full recording of
// the same run has them: a toy decoder-only model, an encoder-decoder (cross-attention too) and the
// GPT-2-shaped hub fixture.
class OnDemandAttention : public ::testing::TestWithParam<const char*> {};

TEST_P(OnDemandAttention, EqualsTheFullRecording) {
  const std::string name = GetParam();
  const auto m = fixture_model(name);
  const Config& c = m->config;
  const std::string src = c.has_encoder()
                              ? c.src_vocab.token(5) + " " + c.src_vocab.token(6) + " " + c.src_vocab.token(7)
                              : c.tgt_vocab.token(10) + " " + c.tgt_vocab.token(11) + " " + c.tgt_vocab.token(12) +
                                    " " + c.tgt_vocab.token(13);
  DecodeSettings greedy;
  greedy.max_len = 4;
  auto cached = Session::create(m, src, "", greedy, true);
  auto whole = Session::create(m, src, "", greedy, false);
  ASSERT_TRUE(cached.ok()) << cached.error();
  ASSERT_TRUE(whole.ok()) << whole.error();
  cached->run_to_end();
  whole->run_to_end();
  ASSERT_EQ(cached->steps().size(), whole->steps().size());
  for (size_t t = 0; t < cached->steps().size(); ++t) {
    const StepRecord& a = *cached->steps()[t];
    const DecoderTrace& full = *whole->steps()[t]->trace;  // every row, maps recorded
    const Eigen::Index m_rows = static_cast<Eigen::Index>(a.fed.size());
    for (int l = 0; l < c.n_decoder_layers; ++l) {
      for (bool cross : {false, true}) {
        if (cross && !c.has_cross_attention()) continue;
        const DecoderLayerTrace& la = a.trace->layers[static_cast<size_t>(l)];
        EXPECT_TRUE((cross ? la.cross_attn : la.self_attn).weights.empty()) << "a kept step holds no maps";
        const AttentionTrace& fa =
            cross ? full.layers[static_cast<size_t>(l)].cross_attn : full.layers[static_cast<size_t>(l)].self_attn;
        const std::vector<Mat> w = cached->attention_weights(static_cast<int>(t), l, cross);
        ASSERT_EQ(w.size(), fa.weights.size());
        for (size_t h = 0; h < w.size(); ++h) {
          const Mat expect = fa.weights[h].bottomRows(m_rows);
          ASSERT_EQ(w[h].rows(), expect.rows());
          ASSERT_EQ(w[h].cols(), expect.cols());
          // The same product and softmax on the same Q and K: equal within float rounding (a cached
          // step's single query is a matrix-vector product, the recomputation's a matrix product).
          EXPECT_LE(test::max_abs_diff(w[h], expect), 1e-6)
              << name << " step " << t << " layer " << l << (cross ? " cross" : " self") << " head " << h;
        }
      }
    }
  }
  // The prefill's maps are the very numbers the forward computed for those rows.
  const Trace forward = run_forward(*m, cached->input());
  if (!c.has_encoder()) {
    const std::vector<Mat> w0 = cached->attention_weights(0, 0, false);
    const auto& fw = forward.decoder.layers[0].self_attn.weights;
    ASSERT_EQ(w0.size(), fw.size());
    for (size_t h = 0; h < w0.size(); ++h) EXPECT_TRUE(w0[h] == fw[h]) << name << " head " << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnDemandAttention,
                         ::testing::Values("deconly_pre_gelu", "encdec_pre_relu_sin", "hf/gpt2-tiny"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '/' || ch == '-') ch = '_';
                           return s;
                         });

// A stacked view built without its maps (what the explorer keeps) gives each head's raw scores and
// weights on demand, equal to those of the view built with them.
TEST_P(OnDemandAttention, StackedViewMapsOnDemandEqualTheBuiltOnes) {
  const auto m = fixture_model(GetParam());
  const Config& c = m->config;
  const std::string src = c.has_encoder()
                              ? c.src_vocab.token(5) + " " + c.src_vocab.token(6)
                              : c.tgt_vocab.token(10) + " " + c.tgt_vocab.token(11) + " " + c.tgt_vocab.token(12);
  DecodeSettings greedy;
  greedy.max_len = 4;
  auto s = Session::create(m, src, "", greedy, true);
  ASSERT_TRUE(s.ok()) << s.error();
  s->run_to_end();
  const std::vector<DecodedRow> rows = lineage_rows(*s, static_cast<int>(s->steps().size()) - 1);
  for (bool cross : {false, true}) {
    if (cross && !c.has_cross_attention()) continue;
    const StackedAttention built = decoder_attention(*s, rows, c.n_decoder_layers - 1, cross);
    const StackedAttention bare = decoder_attention(*s, rows, c.n_decoder_layers - 1, cross, false);
    EXPECT_TRUE(bare.trace.weights.empty());
    EXPECT_TRUE(bare.trace.raw_scores.empty());
    ASSERT_EQ(built.runs.size(), bare.runs.size());
    for (int h = 0; h < built.trace.n_heads; ++h) {
      Mat raw, w;
      stacked_head_maps(bare.trace, bare.runs, h, raw, w);
      const size_t hs = static_cast<size_t>(h);
      EXPECT_TRUE(w == built.trace.weights[hs]) << GetParam() << " head " << h;
      EXPECT_TRUE(raw.array().isNaN().cast<int>().sum() ==
                  built.trace.raw_scores[hs].array().isNaN().cast<int>().sum());
      EXPECT_TRUE((raw.array() == built.trace.raw_scores[hs].array() || raw.array().isNaN()).all());
    }
  }
}

// A kept step holds no second copy of a block's matrices, and whole_trace gives them back: the
// prefill's recording equals, bit for bit, the same step recorded whole (cache off: step 0 feeds
// the same rows).
Session greedy_run(const std::shared_ptr<const Model>& m, bool cache) {
  const Config& c = m->config;
  const Vocab& v = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
  DecodeSettings greedy;
  greedy.max_len = 4;
  auto s = Session::create(m, v.token(5) + " " + v.token(6) + " " + v.token(7), "", greedy, cache);
  EXPECT_TRUE(s.ok()) << s.error();
  Session out = std::move(*s);
  out.run_to_end();
  return out;
}

class BlockCopies : public ::testing::TestWithParam<const char*> {};

TEST_P(BlockCopies, DroppedFromKeptStepsAndRestoredWhole) {
  const auto m = fixture_model(GetParam());
  const Config& c = m->config;
  const Session cached = greedy_run(m, true), whole = greedy_run(m, false);
  const DecoderTrace& kept = *cached.steps()[0]->trace;
  const DecoderTrace& full = *whole.steps()[0]->trace;
  const auto blocks = [&](const DecoderLayerTrace& l) {
    std::vector<const ResidualTrace*> b{&l.self_block, c.has_cross_attention() ? &l.cross_block : nullptr,
                                        c.has_ffn() ? &l.ffn_block : nullptr};
    b.erase(std::remove(b.begin(), b.end(), nullptr), b.end());
    return b;
  };
  const ResidualTrace* prev = nullptr;
  for (const DecoderLayerTrace& l : kept.layers)
    for (const ResidualTrace* b : blocks(l)) {
      EXPECT_EQ(b->sublayer_out.size(), 0) << "the sublayer's own `out` holds it";
      EXPECT_EQ(b->norm.out.size(), 0);
      if (c.norm == NormPlacement::Pre) {
        EXPECT_EQ(b->sum.size(), 0) << "pre-LN: the output holds it";
      }
      EXPECT_GT(b->output.size(), 0);
      if (prev) {
        EXPECT_EQ(b->input.size(), 0) << "the previous block's output holds it";
        EXPECT_EQ(&block_input(kept, *b), &prev->output);
      } else {
        EXPECT_GT(b->input.size(), 0);
      }
      prev = b;
    }
  const std::shared_ptr<const DecoderTrace> back = cached.whole_trace(0);
  ASSERT_EQ(back->layers.size(), full.layers.size());
  for (size_t i = 0; i < full.layers.size(); ++i) {
    const std::vector<const ResidualTrace*> a = blocks(back->layers[i]), b = blocks(full.layers[i]);
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_TRUE(a[k]->sum == b[k]->sum) << GetParam() << " layer " << i << " block " << k;
      EXPECT_TRUE(a[k]->norm.out == b[k]->norm.out) << GetParam() << " layer " << i << " block " << k;
      EXPECT_TRUE(a[k]->sublayer_out == b[k]->sublayer_out) << GetParam() << " layer " << i << " block " << k;
      EXPECT_TRUE(a[k]->output == b[k]->output);
      EXPECT_TRUE(a[k]->input == b[k]->input) << GetParam() << " layer " << i << " block " << k;
    }
  }
  // The explorer's and layer_stats' readers of a kept step (input, output, LayerNorm statistics)
  // find what they read.
  EXPECT_GT(cached.retained_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BlockCopies,
                         ::testing::Values("deconly_pre_gelu", "deconly_post_relu_learned", "encdec_pre_relu_sin",
                                           "encdec_post_gelu_learned", "deconly_pre_attn_only"));

// A thumbnail keeps a small map as it is and shrinks a large one by block maxima, so a single
// strong weight (a head attending to one token) stays visible; its maximum and entropy are the
// whole map's.
TEST(HeadThumbnail, ShrinksByBlockMaximaAndKeepsTheMapsNumbers) {
  const Mat small = Mat::Constant(5, 5, 0.2f);
  const Mat no_mask = Mat::Zero(5, 5);
  const HeadThumbnail s = head_thumbnail(small, no_mask, 8);
  EXPECT_TRUE(s.map == small);
  EXPECT_EQ(s.rows, 5);
  EXPECT_FLOAT_EQ(s.max, 0.2f);

  const int n = 1000;
  Mat w = Mat::Zero(n, n);
  Mat mask = Mat::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    w(i, 0) = 0.5f, w(i, i) += 0.5f;  // attention to the first token and to itself
    for (int j = i + 1; j < n; ++j) mask(i, j) = kMasked;
  }
  w(700, 3) = 0.9f, w(700, 0) = 0.1f, w(700, 700) = 0.0f;
  const HeadThumbnail t = head_thumbnail(w, mask, 96);
  EXPECT_EQ(t.rows, n);
  EXPECT_EQ(t.cols, n);
  EXPECT_LE(t.map.rows(), 96);
  EXPECT_LE(t.map.cols(), 96);
  const Eigen::Index block = (n + 95) / 96;  // 11 rows and columns a cell
  EXPECT_EQ(t.map.rows(), (n + block - 1) / block);
  EXPECT_FLOAT_EQ(t.map(700 / block, 3 / block), 0.9f);  // one strong weight survives
  for (Eigen::Index i = 0; i < t.map.rows(); ++i) {
    EXPECT_GE(t.map(i, i), 0.5f);  // the diagonal
    EXPECT_GE(t.map(i, 0), 0.1f);  // the first token's column
    if (i + 2 < t.map.cols()) {
      EXPECT_EQ(t.map(i, i + 2), 0.0f);  // the masked future
    }
  }
  EXPECT_FLOAT_EQ(t.max, w.maxCoeff());
  EXPECT_FLOAT_EQ(t.mean_entropy, row_entropies(w, mask).mean);
}

// GPT-2's shape (12 layers of 12 heads, 1024 positions, pre-LN, tanh-GELU, learned positions, tied
// output) at a small width, with random weights.
std::shared_ptr<const Model> gpt2_shaped_small_width() {
  Config c = gpt2_small_config();
  c.d_model = 48;
  c.d_ff = 192;
  return std::make_shared<const Model>(random_model(c, 300, 3));
}

// What a long run holds is bounded by its shapes: per layer and row a fixed number of d-wide
// vectors (Q, K, V, the heads' concat and output, the residual blocks' streams and LayerNorms),
// plus the prefill's one (n, n) mask, which its layers share — never the heads' (n, n) maps, which
// alone would be 12 × 12 × n² floats.
TEST(LongInput, SessionHoldsLinearlyManyVectorsNotTheMaps) {
  const auto m = gpt2_shaped_small_width();
  const Config& c = m->config;
  const int prompt = 1000;
  std::string src;
  for (int i = 0; i < prompt; ++i) src += (i ? " w" : "w") + std::to_string(4 + (i * 37) % 296);
  DecodeSettings s;
  s.max_len = 6;
  auto session = Session::create(m, src, "", s, true);
  ASSERT_TRUE(session.ok()) << session.error();
  session->run_to_end();
  ASSERT_EQ(session->steps().size(), 6u);
  const int64_t n = prompt + 1 + 6;  // <s>, the prompt, the steps
  const int64_t d = c.d_model, L = c.n_decoder_layers, H = c.n_heads, V = c.tgt_vocab.size();
  const int64_t f = sizeof(float);
  // 14 d-wide vectors per row and layer: a pre-LN layer keeps 10 — each block's LayerNorm output
  // and output, Q, K, V, the heads' concat and W_o's output, the feed-forward's output — and its
  // LayerNorms' statistics, not the copies its blocks hold twice (their inputs, sums, LayerNorm
  // outputs and sublayer outputs, drop_block_copies); and a few more per row for the embedding,
  // the first block's input and the final LayerNorm, a logits row per step.
  const int64_t per_row = f * (14 * d * L + 8 * d);
  const int64_t masks = f * n * (n + 8);  // the prefill's, shared by the layers; a row per step
  const int64_t bound = per_row * n + masks + f * V * 8;
  const int64_t maps = f * L * H * n * n;  // one copy of every head's weights
  const int64_t held = session->retained_bytes();
  EXPECT_GT(held, f * 4 * d * L * prompt) << "the accounting counts the kept Q, K, V and outputs";
  EXPECT_LE(held, bound) << "held " << held << " bytes; the shapes allow " << bound;
  EXPECT_LT(held, maps / 4) << "held " << held << " bytes: the heads' maps are back (" << maps << " bytes)";
  // The maps are still there on demand, as the forward computed them.
  const std::vector<Mat> w = session->attention_weights(0, 11, false);
  ASSERT_EQ(static_cast<int64_t>(w.size()), H);
  EXPECT_EQ(w[0].rows(), prompt + 1);
  EXPECT_NEAR(w[3].row(prompt).sum(), 1.0f, 1e-4);
  EXPECT_EQ(w[3](0, 1), 0.0f);  // the causal mask
}

}  // namespace
}  // namespace sf
