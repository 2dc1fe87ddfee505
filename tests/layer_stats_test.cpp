// Per-layer statistics (core/analysis/layer_stats.h): entropy and norms against hand-computed values, and
// the Session view against the recorded tensors.
#include <cmath>

#include "model/attention.h"
#include "analysis/layer_stats.h"
#include "model/layer_norm.h"
#include "model/mask.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

TEST(LayerStats, RowEntropyByHand) {
  Mat w(4, 4);
  w << 0.5f, 0.5f, 0, 0,           // two keys equally: ln 2
      1, 0, 0, 0,                  // one key: 0
      0.25f, 0.25f, 0.25f, 0.25f,  // uniform over 4: ln 4
      0.7f, 0.2f, 0.1f, 0;         // −(0.7 ln 0.7 + 0.2 ln 0.2 + 0.1 ln 0.1)
  EXPECT_NEAR(row_entropy(w, 0), std::log(2.0), 1e-7);
  EXPECT_EQ(row_entropy(w, 1), 0.0);
  EXPECT_NEAR(row_entropy(w, 2), std::log(4.0), 1e-7);
  EXPECT_NEAR(row_entropy(w, 3), 0.80182, 1e-5);
}

TEST(LayerStats, MaskedKeysDropOut) {
  // Causal mask over 3 keys with equal scores: row i spreads its weight over i + 1 keys, so its
  // entropy is ln(i + 1); the masked keys (weight exactly 0) add nothing.
  Mat s = Mat::Zero(3, 3);
  Mat mask(3, 3);
  mask << 0, kMasked, kMasked, 0, 0, kMasked, 0, 0, 0;
  masked_softmax(s, mask);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(row_entropy(s, i), std::log(i + 1.0), 1e-6) << "row " << i;

  AttentionTrace a;
  a.n_heads = 2;
  a.batch = 1;
  a.weights = {s, Mat::Identity(3, 3)};
  const std::vector<double> h = head_entropy(a, {0, 1, 2});
  ASSERT_EQ(h.size(), 2u);
  EXPECT_NEAR(h[0], (0 + std::log(2.0) + std::log(3.0)) / 3, 1e-6);
  EXPECT_EQ(h[1], 0.0);
  EXPECT_NEAR(head_entropy(a, {2})[0], std::log(3.0), 1e-6);
}

TEST(LayerStats, RowEntropiesCountTheVisibleKeys) {
  Mat s = Mat::Zero(3, 3);
  Mat mask(3, 3);
  mask << 0, kMasked, kMasked, 0, 0, kMasked, 0, 0, 0;
  masked_softmax(s, mask);
  const RowEntropies e = row_entropies(s, mask);
  EXPECT_EQ(e.visible, (std::vector<int>{1, 2, 3}));
  ASSERT_EQ(e.max.size(), 3u);
  EXPECT_EQ(e.max[0], 0.0f);  // one key: nothing to spread over
  EXPECT_NEAR(e.max[1], std::log(2.0), 1e-6);
  EXPECT_NEAR(e.max[2], std::log(3.0), 1e-6);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(e.entropy[static_cast<size_t>(i)], e.max[static_cast<size_t>(i)], 1e-6);
  EXPECT_NEAR(e.mean, (std::log(2.0) + std::log(3.0)) / 3, 1e-6);
  EXPECT_EQ(row_entropies(Mat(0, 3), Mat(0, 3)).mean, 0.0f);
}

TEST(LayerStats, BlockNormsAndLnStatsByHand) {
  ResidualTrace r;
  r.input.resize(2, 2);
  r.input << 3, 4, 0, 1;  // ‖·‖ = 5, 1
  r.output.resize(2, 2);
  r.output << 6, 8, 1, 0;  // 10, 1
  r.norm.mean.resize(2);
  r.norm.mean << 3.5f, 0.5f;
  r.norm.var.resize(2);
  r.norm.var << 0.25f, 0.25f;
  const BlockStat b = block_stat(Block::FeedForward, r, nullptr);
  ASSERT_EQ(b.tokens(), 2);
  EXPECT_FLOAT_EQ(b.norm_in[0], 5);
  EXPECT_FLOAT_EQ(b.norm_out[0], 10);
  EXPECT_DOUBLE_EQ(b.mean_norm_in(), 3);
  EXPECT_DOUBLE_EQ(b.mean_norm_out(), 5.5);
  EXPECT_DOUBLE_EQ(b.mean_ln_mean(), 2);
  EXPECT_DOUBLE_EQ(b.mean_ln_var(), 0.25);
  EXPECT_TRUE(b.entropy.empty());
  const BlockStat one = block_stat(Block::FeedForward, r, nullptr, {1});
  ASSERT_EQ(one.tokens(), 1);
  EXPECT_FLOAT_EQ(one.norm_out[0], 1);
}

// Rows gathered from two recordings (two decoding steps) one at a time: the same numbers as each
// recording's own rows, and the entropy means over every row appended.
// RMSNorm (Llama, Qwen2, Mistral): the block's statistic is the root mean square per token,
// √mean(x²) with no mean subtracted, i.e. ‖x‖/√d; there is no mean and no variance.
TEST(LayerStats, RmsNormBlocksGiveTheRmsPerToken) {
  ResidualTrace r;
  r.input.resize(3, 4);
  r.input << 3, 4, 0, 0,  // mean(x²) = 25/4: rms 2.5 (a LayerNorm would subtract the mean 1.75)
      1, 1, 1, 1,         // rms 1 (LayerNorm: mean 1, variance 0)
      -2, 2, -2, 2;       // rms 2 (LayerNorm: mean 0, variance 4)
  LayerNormWeights w;
  w.kind = NormKind::RMSNorm;
  w.eps = 0;
  w.weight = RowVec::Ones(4);
  w.bias = RowVec::Zero(4);
  Mat y;
  layer_norm_forward(r.input, w, y, &r.norm);
  r.output = r.input + y;
  const BlockStat b = block_stat(Block::SelfAttention, r, nullptr);
  ASSERT_EQ(b.tokens(), 3);
  EXPECT_TRUE(b.ln_mean.empty());
  EXPECT_TRUE(b.ln_var.empty());
  ASSERT_EQ(b.ln_rms.size(), 3u);
  EXPECT_FLOAT_EQ(b.ln_rms[0], 2.5f);
  EXPECT_FLOAT_EQ(b.ln_rms[1], 1.0f);
  EXPECT_FLOAT_EQ(b.ln_rms[2], 2.0f);
  for (int t = 0; t < 3; ++t) EXPECT_FLOAT_EQ(b.ln_rms[static_cast<size_t>(t)], b.norm_in[static_cast<size_t>(t)] / 2);
  EXPECT_NEAR(b.mean_ln_rms(), (2.5 + 1 + 2) / 3, 1e-6);
  // The normalised rows have rms 1: x / rms.
  EXPECT_FLOAT_EQ(y(0, 0), 3 / 2.5f);
  EXPECT_FLOAT_EQ(y(2, 1), 1.0f);
}

TEST(LayerStats, AppendRowsFromSeveralRecordings) {
  ResidualTrace a, b;
  a.input.resize(1, 2);
  a.input << 3, 4;  // 5
  a.output.resize(1, 2);
  a.output << 0, 2;  // 2
  a.norm.mean.resize(1);
  a.norm.mean << 3.5f;
  a.norm.var.resize(1);
  a.norm.var << 0.25f;
  b.input.resize(2, 2);
  b.input << 9, 9, 6, 8;  // row 1: 10
  b.output.resize(2, 2);
  b.output << 9, 9, 0, 4;  // row 1: 4
  b.norm.mean.resize(2);
  b.norm.mean << 9, 7;
  b.norm.var.resize(2);
  b.norm.var << 9, 1;
  AttentionTrace wa, wb;
  wa.n_heads = wb.n_heads = 1;
  wa.batch = wb.batch = 1;
  wa.weights = {(Mat(1, 2) << 1, 0).finished()};              // entropy 0
  wb.weights = {(Mat(2, 2) << 1, 0, 0.5f, 0.5f).finished()};  // row 1: ln 2
  BlockStat s;
  s.block = Block::SelfAttention;
  append_block_rows(s, a, &wa, {0});
  append_block_rows(s, b, &wb, {1});
  ASSERT_EQ(s.tokens(), 2);
  EXPECT_FLOAT_EQ(s.norm_in[1], 10);
  EXPECT_DOUBLE_EQ(s.mean_norm_in(), 7.5);
  EXPECT_DOUBLE_EQ(s.mean_norm_out(), 3);
  EXPECT_DOUBLE_EQ(s.mean_ln_mean(), 5.25);
  EXPECT_DOUBLE_EQ(s.mean_ln_var(), 0.625);
  ASSERT_EQ(s.entropy.size(), 1u);
  EXPECT_NEAR(s.entropy[0], std::log(2.0) / 2, 1e-7);
  // Without attention: norms and LN statistics only.
  BlockStat f;
  append_block_rows(f, b, nullptr, {1});
  EXPECT_FLOAT_EQ(f.ln_var[0], 1);
  EXPECT_TRUE(f.entropy.empty());
}

// The Session view reads the same numbers the recording holds.
TEST(LayerStats, SessionMatchesRecording) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("encdec_pre_relu_sin"));
  auto s = Session::create(m, "3 5 7 2", "");
  ASSERT_TRUE(s.ok()) << s.error();
  ModelStats none = layer_stats(*s);  // stage 0: nothing has run
  EXPECT_TRUE(none.encoder.empty());
  EXPECT_TRUE(none.decoder.empty());

  s->jump(3);  // past the decoder's first steps: 2 steps computed, cursor inside step 0
  s->jump_to_step(1);
  const ModelStats st = layer_stats(*s);
  const Config& c = m->config;
  ASSERT_EQ(st.encoder.size(), static_cast<size_t>(c.n_encoder_layers));
  ASSERT_EQ(st.decoder.size(), static_cast<size_t>(c.n_decoder_layers));
  EXPECT_EQ(st.decoder_steps, (std::vector<int>{0, 1}));

  // Encoder layer 1 self-attention: entropy of every head from the recorded weights (h, n, n).
  const auto w = s->tensor("encoder.layers.1.self_attn.weights");
  ASSERT_TRUE(w.has_value());
  const int64_t H = w->shape[0], n = w->shape[1], nk = w->shape[2];
  const BlockStat* b = st.encoder[1].find(Block::SelfAttention);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->entropy.size(), static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < nk; ++j) {
        const double p = w->f32[static_cast<size_t>((h * n + i) * nk + j)];
        if (p > 0) sum -= p * std::log(p);
      }
    EXPECT_NEAR(b->entropy[static_cast<size_t>(h)], sum / static_cast<double>(n), 1e-6) << "head " << h;
  }
  // LayerNorm statistics are the recorded ones; the residual norm is the recorded output's.
  const EncoderLayerTrace& L = s->encoder()->trace.layers[1];
  const BlockStat* f = st.encoder[1].find(Block::FeedForward);
  ASSERT_NE(f, nullptr);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(f->ln_mean[static_cast<size_t>(i)], L.ffn_block.norm.mean(i));
    EXPECT_EQ(f->ln_var[static_cast<size_t>(i)], L.ffn_block.norm.var(i));
    EXPECT_EQ(f->norm_out[static_cast<size_t>(i)], L.ffn_block.output.row(i).norm());
  }
  EXPECT_DOUBLE_EQ(st.encoder[1].resid_norm(), f->mean_norm_out());

  // Decoder rows: step t's self-attention row attends over t + 1 keys.
  const BlockStat* d = st.decoder[0].find(Block::SelfAttention);
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->tokens(), 2);
  for (int h = 0; h < c.n_heads; ++h) {
    const Mat w0 = s->attention_weights(0, 0, false)[static_cast<size_t>(h)];
    EXPECT_EQ(row_entropy(w0, 0), 0.0);  // one key: all weight on <s>
    EXPECT_LE(d->entropy_rows[static_cast<size_t>(h)][1], std::log(2.0) + 1e-6);
  }
}

// Blocks appear as the cursor completes them: post-LN at its AddNorm stage.
TEST(LayerStats, FollowsTheCursor) {
  auto m = std::make_shared<const Model>(test::load_fixture_model("encdec_post_relu_sin"));
  auto s = Session::create(m, "3 5 7 2", "");
  ASSERT_TRUE(s.ok()) << s.error();
  const auto layout = encoder_layout(m->config);
  int self0 = -1, add0 = -1;
  for (size_t i = 0; i < layout.size(); ++i) {
    if (layout[i].layer == 0 && layout[i].kind == StageKind::SelfAttention) self0 = static_cast<int>(i);
    if (layout[i].layer == 0 && layout[i].kind == StageKind::AddNorm && layout[i].block == Block::SelfAttention)
      add0 = static_cast<int>(i);
  }
  ASSERT_GE(self0, 0);
  ASSERT_EQ(add0, self0 + 1);
  s->jump(self0);
  EXPECT_TRUE(layer_stats(*s).encoder.empty());
  s->jump(add0);
  const ModelStats st = layer_stats(*s);
  ASSERT_EQ(st.encoder.size(), 1u);
  ASSERT_EQ(st.encoder[0].blocks.size(), 1u);
  EXPECT_EQ(st.encoder[0].blocks[0].block, Block::SelfAttention);
  // Post-LN: the stream leaving a block is a LayerNorm output with gain ≈ 1: ‖x‖ ≈ √d.
  for (float v : st.encoder[0].blocks[0].norm_out) EXPECT_NEAR(v, std::sqrt(16.0f), 2.5f);
}

}  // namespace
}  // namespace sf
