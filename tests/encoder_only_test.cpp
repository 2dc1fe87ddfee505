// Encoder-only models (BERT) in the stepper: the stage list is the encoder's, ending with the
// masked-LM head; the predictions at [MASK] are the head's numbers; padding keys get weight 0;
// token types follow [SEP]; every stage names tensors that exist with the stated shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "model/encoder.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

// A tiny random BERT: post-LN, learned positions, two token types, embedding LayerNorm, GELU,
// tied MLM decoder.
std::shared_ptr<const Model> bert(NormPlacement norm = NormPlacement::Post) {
  Config c;
  c.arch = Arch::EncoderOnly;
  c.d_model = 16;
  c.n_heads = 2;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 0;
  c.d_ff = 32;
  c.max_len = 16;
  c.norm = norm;
  c.activation = Activation::Gelu;
  c.positional = Positional::Learned;
  c.share_embeddings = true;
  c.scale_embeddings = false;
  c.layer_norm_eps = 1e-12f;
  c.n_token_types = 2;
  c.embed_norm = true;
  c.mlm_head = true;
  auto v = Vocab::make(
      {"<pad>", "<s>", "</s>", "<unk>", "[MASK]", "[SEP]", "the", "cat", "sat", "on", "a", "mat", "dog", "ran", "."},
      Tokenizer::Word, "test vocabulary");
  EXPECT_TRUE(v.ok()) << v.error();
  c.src_vocab = *v;
  c.tgt_vocab = *v;
  Weights w;
  init_xavier(w, c, 11);
  // Non-trivial biases and gains, so that a wrong head (missing bias, LN) cannot pass.
  for (int i = 0; i < w.generator.bias.size(); ++i) w.generator.bias(i) = 0.3f * static_cast<float>(i % 5) - 0.6f;
  for (int i = 0; i < w.mlm.dense.bias.size(); ++i) w.mlm.dense.bias(i) = 0.05f * static_cast<float>(i % 7) - 0.15f;
  for (int i = 0; i < w.mlm.norm.weight.size(); ++i) w.mlm.norm.weight(i) = 1.0f + 0.1f * static_cast<float>(i % 3);
  return std::make_shared<const Model>(Model::make(c, std::move(w)));
}

Session open(const std::shared_ptr<const Model>& m, const std::string& text) {
  auto r = Session::create(m, text);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(*r);
}

using K = StageKind;

TEST(EncoderOnly, StagesAreTheEncodersAndEndWithTheMaskedLmHead) {
  Session s = open(bert(), "the cat [MASK] on a mat");
  std::vector<K> kinds;
  for (const Stage& st : s.stages()) {
    EXPECT_EQ(st.side, Side::Encoder) << st.title;
    EXPECT_EQ(st.step, -1) << st.title;
    kinds.push_back(st.kind);
  }
  EXPECT_EQ(kinds, (std::vector<K>{K::Embed, K::Positional, K::SelfAttention, K::AddNorm, K::FeedForward, K::AddNorm,
                                   K::SelfAttention, K::AddNorm, K::FeedForward, K::AddNorm, K::Logits}));
  EXPECT_TRUE(s.steps().empty());
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.current_step(), -1);
  EXPECT_THAT(s.stage(1).title, HasSubstr("token types"));
  EXPECT_THAT(s.stage(10).title, HasSubstr("masked-LM head"));

  Session pre = open(bert(NormPlacement::Pre), "the cat [MASK]");
  EXPECT_EQ(pre.stage(pre.stage_count() - 2).kind, K::FinalNorm);
  EXPECT_EQ(pre.stage(pre.stage_count() - 1).kind, K::Logits);
}

TEST(EncoderOnly, MovementStopsAtTheHeadWithAMessage) {
  Session s = open(bert(), "the [MASK] sat");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(s.forward()) << i;
  EXPECT_EQ(s.cursor(), 10);
  EXPECT_TRUE(s.at_end());
  EXPECT_FALSE(s.forward());
  EXPECT_THAT(s.message(), HasSubstr("encoder-only"));
  EXPECT_FALSE(s.next_token());
  EXPECT_THAT(s.message(), HasSubstr("encoder-only"));
  EXPECT_EQ(s.cursor(), 10);
  EXPECT_TRUE(s.tokens().empty());
  s.jump(3);
  EXPECT_EQ(s.cursor(), 3);
  s.run_to_end();
  EXPECT_EQ(s.cursor(), 10);
  EXPECT_TRUE(s.cache().layers.empty());
}

TEST(EncoderOnly, ATargetIsRefused) {
  auto r = Session::create(bert(), "the [MASK]", "cat");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error(), HasSubstr("encoder-only model has no decoder"));
}

// The prediction at [MASK] is the MLM head's softmax, recomputed here from the weights:
// logits = LN(GELU(h W_tᵀ + b_t)) Eᵀ + b.
TEST(EncoderOnly, MaskedPredictionsAreTheHeadsSoftmax) {
  const auto m = bert();
  Session s = open(m, "the cat [MASK] on a [MASK] .");
  const std::vector<MaskedPrediction> p = s.masked_predictions(5);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].position, 2);
  EXPECT_EQ(p[1].position, 5);
  EXPECT_TRUE(p[0].masked);
  EXPECT_EQ(p[0].input_id, m->config.src_vocab.id("[MASK]"));

  const Weights& w = m->weights;
  const Mat& h = s.encoder()->trace.output;  // (n, d)
  const int V = m->config.src_vocab.size();
  for (const MaskedPrediction& mp : p) {
    Eigen::VectorXd x = (h.row(mp.position).cast<double>() * w.mlm.dense.weight.cast<double>().transpose() +
                         w.mlm.dense.bias.cast<double>())
                            .transpose();
    for (int i = 0; i < x.size(); ++i) x(i) = 0.5 * x(i) * (1.0 + std::erf(x(i) / std::sqrt(2.0)));
    const double mean = x.mean();
    const double var = (x.array() - mean).square().mean();
    Eigen::VectorXd y = (x.array() - mean) / std::sqrt(var + 1e-12);
    y = y.cwiseProduct(w.mlm.norm.weight.cast<double>().transpose()) + w.mlm.norm.bias.cast<double>().transpose();
    Eigen::VectorXd logits = w.tgt_embed.cast<double>() * y + w.generator.bias.cast<double>().transpose();
    Eigen::VectorXd prob = (logits.array() - logits.maxCoeff()).exp();
    prob /= prob.sum();
    Eigen::Index best;
    prob.maxCoeff(&best);
    ASSERT_EQ(mp.top.size(), 5u);
    EXPECT_EQ(mp.top[0].id, static_cast<int>(best)) << "position " << mp.position;
    for (size_t k = 0; k < mp.top.size(); ++k) {
      EXPECT_NEAR(mp.top[k].prob, prob(mp.top[k].id), 1e-5) << "position " << mp.position << " rank " << k;
      if (k) {
        EXPECT_GE(mp.top[k - 1].prob, mp.top[k].prob);
      }
    }
    // The recorded logits are the ones the head computes.
    for (int v = 0; v < V; ++v) EXPECT_NEAR(s.encoder()->trace.logits(mp.position, v), logits(v), 1e-4);
  }
  // Any position can be asked for, in position order with the masks.
  const auto also = s.masked_predictions(3, 1);
  ASSERT_EQ(also.size(), 3u);
  EXPECT_EQ(also[0].position, 1);
  EXPECT_FALSE(also[0].masked);
  EXPECT_EQ(also[0].input_id, m->config.src_vocab.id("cat"));
  // Every probability of the vocabulary: the row sums to 1.
  const std::vector<MaskedPrediction> all = s.masked_predictions(V);
  ASSERT_EQ(all[0].top.size(), static_cast<size_t>(V));
  float total = 0;
  for (const Alternative& a : all[0].top) total += a.prob;
  EXPECT_NEAR(total, 1.0f, 1e-5f);
}

TEST(EncoderOnly, PaddingKeysGetWeightZero) {
  Session s = open(bert(), "the [MASK] sat <pad> <pad>");
  const auto& layers = s.encoder()->trace.layers;
  ASSERT_EQ(layers.size(), 2u);
  for (const EncoderLayerTrace& l : layers) {
    ASSERT_EQ(l.self_attn.weights.size(), 2u);  // heads
    for (const Mat& wts : l.self_attn.weights) {
      ASSERT_EQ(wts.cols(), 5);
      for (int i = 0; i < wts.rows(); ++i) {
        EXPECT_EQ(wts(i, 3), 0.0f);
        EXPECT_EQ(wts(i, 4), 0.0f);
        EXPECT_NEAR(wts.row(i).sum(), 1.0f, 1e-6f);
        EXPECT_GT(wts(i, 0), 0.0f);
      }
    }
    EXPECT_TRUE(std::isinf(l.self_attn.masks[0](0, 3)));
    EXPECT_EQ(l.self_attn.masks[0](0, 2), 0.0f);
  }
}

TEST(EncoderOnly, TokenTypesSwitchAfterTheFirstSep) {
  const auto m = bert();
  Session s = open(m, "the cat [SEP] a dog [SEP]");
  const auto types = s.tensor("encoder.embed.types");
  ASSERT_TRUE(types.has_value());
  ASSERT_EQ(types->shape, (std::vector<int64_t>{6, 16}));
  const Mat& T = m->weights.type_embed;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 16; ++j) EXPECT_EQ(types->f32[static_cast<size_t>(i * 16 + j)], T(i <= 2 ? 0 : 1, j)) << i;
}

TEST(EncoderOnly, BackThenForwardIsBitIdentical) {
  Session s = open(bert(), "the cat [MASK] on a mat");
  s.run_to_end();
  const auto a = s.tensor("probs"), w1 = s.tensor("encoder.layers.1.self_attn.weights");
  ASSERT_TRUE(a && w1);
  const std::vector<Stage> before = s.stages();
  while (s.back()) {
  }
  EXPECT_EQ(s.cursor(), 0);
  while (s.forward()) {
  }
  const auto b = s.tensor("probs"), w2 = s.tensor("encoder.layers.1.self_attn.weights");
  ASSERT_TRUE(b && w2);
  ASSERT_EQ(a->f32.size(), b->f32.size());
  EXPECT_EQ(std::memcmp(a->f32.data(), b->f32.data(), a->f32.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(w1->f32.data(), w2->f32.data(), w1->f32.size() * sizeof(float)), 0);
  EXPECT_EQ(s.stages().size(), before.size());
}

TEST(EncoderOnly, StagesNameRecordedTensorsWithTheirShapes) {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    Session s = open(bert(norm), "the cat [MASK] [SEP] a mat <pad>");
    int checked = 0;
    for (const Stage& st : s.stages()) {
      EXPECT_FALSE(st.formula.empty()) << st.title;
      for (const auto* list : {&st.reads, &st.writes})
        for (const TensorRef& r : *list) {
          if (r.name.empty()) continue;
          const auto t = s.tensor(r.name);
          ASSERT_TRUE(t.has_value()) << "stage " << st.index << " (" << st.title << "): no tensor '" << r.name << "'";
          EXPECT_EQ(t->shape, r.shape) << r.name;
          ++checked;
        }
    }
    EXPECT_GT(checked, 60);
    const auto logits = s.tensor("logits");
    ASSERT_TRUE(logits.has_value());
    EXPECT_EQ(logits->shape, (std::vector<int64_t>{7, 15}));
  }
}

TEST(EncoderOnly, WithoutAnMlmHeadItEndsWithTheHiddenStates) {
  const auto with_head = bert();
  Config c = with_head->config;
  c.mlm_head = false;
  Weights w;
  init_xavier(w, c, 2);
  auto m = std::make_shared<const Model>(Model::make(c, std::move(w)));
  Session s = open(m, "the cat [MASK]");
  EXPECT_EQ(s.stage(s.stage_count() - 1).kind, K::Memory);
  EXPECT_THAT(s.stage(s.stage_count() - 1).title, HasSubstr("output"));
  EXPECT_TRUE(s.masked_predictions(5).empty());
}

}  // namespace
}  // namespace sf
