// hf_pieces_test.cpp — the architecture choices the Hugging Face families need, each on hand
// values: tanh-GELU and Swish (and their derivatives), Marian's sines-then-cosines table, a
// configurable LayerNorm ε, the embedding scale, BERT's segment ids, and the config JSON (new
// fields written only when they differ from today's defaults).
#include <gtest/gtest.h>

#include <cmath>

#include "model/config.h"
#include "model/embedding.h"
#include "model/feed_forward.h"
#include "model/layer_norm.h"
#include "model/positional_encoding.h"

namespace sf {
namespace {

TEST(HfPieces, GeluTanhAndSwishHandValues) {
  Mat x(1, 3);
  x << -1.0f, 0.5f, 2.0f;
  Mat g = x, s = x;
  activation_forward(Activation::GeluTanh, g);
  activation_forward(Activation::Swish, s);
  // 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), computed in double.
  EXPECT_NEAR(g(0, 0), -0.158808009, 1e-6);
  EXPECT_NEAR(g(0, 1), 0.345714010, 1e-6);
  EXPECT_NEAR(g(0, 2), 1.954597694, 1e-6);
  // x·σ(x)
  EXPECT_NEAR(s(0, 0), -0.268941421, 1e-6);
  EXPECT_NEAR(s(0, 1), 0.311229666, 1e-6);
  EXPECT_NEAR(s(0, 2), 1.761594156, 1e-6);
}

TEST(HfPieces, ActivationDerivativesMatchFiniteDifferences) {
  for (Activation a : {Activation::GeluTanh, Activation::Swish}) {
    Mat x(1, 5);
    x << -2.5f, -0.7f, 0.0f, 0.3f, 1.9f;
    Mat d = Mat::Ones(1, 5);
    activation_backward(a, x, d);
    for (int i = 0; i < 5; ++i) {
      const float h = 1e-2f;
      Mat p = x, m = x;
      p(0, i) += h;
      m(0, i) -= h;
      activation_forward(a, p);
      activation_forward(a, m);
      EXPECT_NEAR(d(0, i), (p(0, i) - m(0, i)) / (2 * h), 2e-4) << to_string(a) << " at " << x(0, i);
    }
  }
}

TEST(HfPieces, MarianPositionsAreSinesThenCosines) {
  const Mat p = sinusoidal_halves_pe(3, 4);  // ω = 1, 1/100
  EXPECT_FLOAT_EQ(p(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(p(0, 2), 1.0f);
  EXPECT_FLOAT_EQ(p(1, 0), static_cast<float>(std::sin(1.0)));
  EXPECT_FLOAT_EQ(p(1, 1), static_cast<float>(std::sin(0.01)));
  EXPECT_FLOAT_EQ(p(1, 2), static_cast<float>(std::cos(1.0)));
  EXPECT_FLOAT_EQ(p(1, 3), static_cast<float>(std::cos(0.01)));
  EXPECT_FLOAT_EQ(p(2, 1), static_cast<float>(std::sin(0.02)));
  // The same numbers as the interleaved table, columns permuted.
  const Mat v = sinusoidal_pe(3, 4);
  EXPECT_FLOAT_EQ(p(2, 1), v(2, 2));
  EXPECT_FLOAT_EQ(p(2, 3), v(2, 3));
  // Odd d: ⌈d/2⌉ sines, ⌊d/2⌋ cosines.
  const Mat o = sinusoidal_halves_pe(2, 5);
  EXPECT_FLOAT_EQ(o(1, 2), static_cast<float>(std::sin(1.0 / std::pow(10000.0, 0.8))));
  EXPECT_FLOAT_EQ(o(1, 4), static_cast<float>(std::cos(1.0 / std::pow(10000.0, 0.4))));
  EXPECT_EQ(positional_table(Positional::Learned, 3, 4).size(), 0);
}

TEST(HfPieces, LayerNormEpsilonComesFromTheWeights) {
  Mat x(1, 2);
  x << 0.0f, 0.001f;  // σ² = 2.5e-7: ε matters
  LayerNormWeights w{RowVec::Ones(2), RowVec::Zero(2)};
  Mat y;
  layer_norm_forward(x, w, y, nullptr);
  EXPECT_NEAR(y(0, 1), 0.0005 / std::sqrt(2.5e-7 + 1e-5), 1e-5);  // default ε = 1e-5
  w.eps = 1e-12f;
  layer_norm_forward(x, w, y, nullptr);
  EXPECT_NEAR(y(0, 1), 0.0005 / std::sqrt(2.5e-7 + 1e-12), 1e-5);
}

TEST(HfPieces, EmbeddingScaleAndSegments) {
  Mat table(3, 2);
  table << 1, 2, 3, 4, 5, 6;
  Mat pos = Mat::Zero(4, 2);
  pos(1, 0) = 10;
  Mat types(2, 2);
  types << 0, 0, 100, 100;
  EmbeddingParams p;
  p.table = &table;
  p.positions = &pos;
  p.scale = 1.0f;
  p.token_types = &types;
  p.sep = 2;
  p.pad = 0;
  Mat x;
  EmbeddingTrace tr;
  embed(p, {1, 2, 1, 0}, 1, 0, true, x, &tr);
  EXPECT_EQ(tr.token_types, (std::vector<int>{0, 0, 1, 0}));  // after the first [SEP]: 1; pad: 0
  EXPECT_FLOAT_EQ(x(0, 0), 3.0f);
  EXPECT_FLOAT_EQ(x(1, 0), 5.0f + 10.0f);
  EXPECT_FLOAT_EQ(x(2, 1), 4.0f + 100.0f);
  EXPECT_FLOAT_EQ(x(3, 0), 1.0f);
  p.scale = 2.0f;
  p.token_types = nullptr;
  embed(p, {1}, 1, 0, true, x, nullptr);
  EXPECT_FLOAT_EQ(x(0, 1), 8.0f);
  EXPECT_EQ(segment_ids({4, 7, 5, 8, 9, 5, 0, 0}, 5, 0, 2), (std::vector<int>{0, 0, 0, 1, 1, 1, 0, 0}));
}

const char* kBase = R"({"arch":"encoder-decoder","d_model":8,"n_heads":2,"n_encoder_layers":1,"n_decoder_layers":1,
  "d_ff":16,"max_len":10,"norm":"post","activation":"relu","positional":"sinusoidal",
  "src_vocab":["<pad>","<s>","</s>","<unk>","a"],"tgt_vocab":["<pad>","<s>","</s>","<unk>","b"]})";

TEST(HfPieces, ConfigJsonUnchangedForExistingModels) {
  auto c = parse_config(kBase);
  ASSERT_TRUE(c.ok()) << c.error();
  const std::string j = config_to_json(*c);
  for (const char* key : {"scale_embeddings", "layer_norm_eps", "n_encoder_heads", "d_ff_encoder", "n_token_types",
                          "embed_norm", "mlm_head", "decoder_pad_mask"})
    EXPECT_EQ(j.find(key), std::string::npos) << key;
  EXPECT_TRUE(c->scale_embeddings);
  EXPECT_FLOAT_EQ(c->layer_norm_eps, 1e-5f);
  EXPECT_EQ(c->encoder_heads(), 2);
  EXPECT_EQ(c->encoder_d_k(), 4);  // d_model 8 over the same 2 heads as the decoder
  EXPECT_EQ(c->d_k(), 4);
}

TEST(HfPieces, ConfigNewChoicesRoundTrip) {
  std::string s = kBase;
  s.replace(s.find("\"relu\""), 6, "\"swish\"");
  s.replace(s.find("\"sinusoidal\""), 12, "\"sinusoidal_halves\"");
  s.insert(
      1,
      R"("scale_embeddings":false,"layer_norm_eps":1e-12,"n_encoder_heads":4,"d_ff_encoder":12,"decoder_pad_mask":false,)");
  auto c = parse_config(s);
  ASSERT_TRUE(c.ok()) << c.error();
  auto back = parse_config(config_to_json(*c));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->activation, Activation::Swish);
  EXPECT_EQ(back->positional, Positional::SinusoidalHalves);
  EXPECT_FALSE(back->scale_embeddings);
  EXPECT_FLOAT_EQ(back->layer_norm_eps, 1e-12f);
  EXPECT_EQ(back->encoder_heads(), 4);
  EXPECT_EQ(back->encoder_d_k(), 2);  // the encoder's 4 heads split d_model 8 into 2 columns each
  EXPECT_EQ(back->d_k(), 4);          // the decoder's 2 heads keep 4
  EXPECT_EQ(back->encoder_d_ff(), 12);
  EXPECT_FALSE(back->decoder_pad_mask);
}

TEST(HfPieces, EncoderOnlyConfig) {
  const std::string v = R"(["[PAD]","<pad>","<s>","</s>","<unk>","x"])";
  const std::string s = R"({"arch":"encoder-only","d_model":8,"n_heads":2,"n_encoder_layers":2,"n_decoder_layers":0,
    "d_ff":16,"max_len":10,"norm":"post","activation":"gelu","positional":"learned","share_embeddings":true,
    "n_token_types":2,"embed_norm":true,"mlm_head":true,"src_vocab":)" +
                        v + R"(,"tgt_vocab":)" + v + "}";
  auto c = parse_config(s);
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_TRUE(c->has_encoder());
  EXPECT_FALSE(c->has_decoder());
  EXPECT_FALSE(c->has_cross_attention());
  auto back = parse_config(config_to_json(*c));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->arch, Arch::EncoderOnly);
  EXPECT_EQ(back->n_token_types, 2);

  std::string bad = s;
  bad.replace(bad.find("\"n_decoder_layers\":0"), 20, "\"n_decoder_layers\":1");
  auto e = parse_config(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("encoder-only model expects n_decoder_layers 0, found 1"), std::string::npos) << e.error();
  std::string eps = kBase;
  eps.insert(1, R"("layer_norm_eps":2,)");
  e = parse_config(eps);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("'layer_norm_eps' expected a number in (0, 1), found 2"), std::string::npos) << e.error();
}

}  // namespace
}  // namespace sf
