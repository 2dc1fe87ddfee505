// Cost accounting (the "Transformer Architecture" lecture's tables) against hand counts on a tiny model, and against
// the real weights and the real cache.
#include <gtest/gtest.h>

#include "io/hf_model.h"
#include "model_shapes.h"
#include "stepper/cost.h"
#include "test_util.h"

namespace sf {
namespace {

// d 4, 2 heads, 1 + 1 layers, d_ff 8, vocabularies of 6, post-LN, sinusoidal, nothing shared.
Config tiny() {
  Config c;
  c.arch = Arch::EncoderDecoder;
  c.d_model = 4;
  c.n_heads = 2;
  c.n_encoder_layers = c.n_decoder_layers = 1;
  c.d_ff = 8;
  c.max_len = 8;
  c.norm = NormPlacement::Post;
  const std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>", "a", "b"};
  c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  return c;
}

int64_t count_of(const std::vector<ParamCount>& p, const std::string& name) {
  for (const auto& x : p)
    if (x.component == name) return x.count;
  return -1;
}

TEST(Params, HandCountOnATinyModel) {
  const auto p = param_counts(tiny());
  EXPECT_EQ(count_of(p, "src_embed"), 24);  // 6 × 4
  EXPECT_EQ(count_of(p, "tgt_embed"), 24);
  EXPECT_EQ(count_of(p, "encoder.layers.0.self_attn"), 80);  // 4 × (4·4 + 4) = 4d² + 4d
  EXPECT_EQ(count_of(p, "encoder.layers.0.norm1"), 8);       // γ, β
  EXPECT_EQ(count_of(p, "encoder.layers.0.ffn"), 76);        // 4·8 + 8 + 8·4 + 4 = 2·d·dff + dff + d
  EXPECT_EQ(count_of(p, "decoder.layers.0.cross_attn"), 80);
  EXPECT_EQ(count_of(p, "decoder.layers.0.norm3"), 8);
  EXPECT_EQ(count_of(p, "generator"), 30);     // 6 × 4 + 6
  EXPECT_EQ(count_of(p, "encoder.norm"), -1);  // post-LN: no final norm
  // 24 + 24 + (80 + 8 + 8 + 76) + (80 + 80 + 8·3 + 76) + 30
  EXPECT_EQ(param_total(tiny()), 510);
  Config pre = tiny();
  pre.norm = NormPlacement::Pre;
  pre.share_embeddings = true;
  EXPECT_EQ(param_total(pre), 510 - 24 - 24 + 8 + 8);  // no src_embed, no generator weight; two final norms
}

TEST(Params, FormulaAgreesWithTheWeightsOfEveryFixture) {
  for (const char* cs :
       {"encdec_post_relu_sin", "encdec_pre_relu_sin", "encdec_post_gelu_learned", "encdec_pre_gelu_shared",
        "deconly_pre_gelu", "deconly_post_relu_learned", "encdec_pre_3layer_odd"}) {
    const Model m = test::load_fixture_model(cs);
    const auto formula = param_counts(m.config);
    const auto counted = count_params_by_component(m.weights, m.config);
    ASSERT_EQ(formula.size(), counted.size()) << cs;
    for (size_t i = 0; i < formula.size(); ++i) {
      EXPECT_EQ(formula[i].component, counted[i].component) << cs;
      EXPECT_EQ(formula[i].count, counted[i].count) << cs << " " << formula[i].component;
    }
    EXPECT_EQ(param_total(m.config), count_params(m.weights, m.config)) << cs;
  }
}

// The Llama-style fixtures: grouped K/V, head_dim of its own, SwiGLU, RMSNorm, the biases each
// family keeps (Llama none, Qwen2 q/k/v only, Pythia all), untied heads.
TEST(Params, FormulaAgreesWithTheWeightsOfTheHubDecoders) {
  for (const char* f : {"llama-tiny", "qwen2-tiny-bf16", "mistral-tiny-sharded", "pythia-tiny"}) {
    auto m = load_hf_model(test::fixture(std::string("hf/") + f));
    ASSERT_TRUE(m.ok()) << f << ": " << m.error();
    const auto formula = param_counts(m->config);
    const auto counted = count_params_by_component(m->weights, m->config);
    ASSERT_EQ(formula.size(), counted.size()) << f;
    for (size_t i = 0; i < formula.size(); ++i) {
      EXPECT_EQ(formula[i].component, counted[i].component) << f;
      EXPECT_EQ(formula[i].count, counted[i].count) << f << " " << formula[i].component;
    }
    EXPECT_EQ(param_total(m->config), count_params(m->weights, m->config)) << f;
  }
}

TEST(Params, SelfAttentionToFeedForwardRatioIsTwoDOverDff) {
  // The lecture: SA 4d², FFN 2·d·dff (weights only), so SA/FFN = 2d/dff; base: 2·512/2048 = 1/2.
  const int64_t d = 512, dff = 2048;
  EXPECT_EQ(4 * d * d * 2, 2 * d * dff);
}

TEST(Flops, HandCountOfAFullForward) {
  // n_src 3, n_tgt 2 (2 FLOPs per multiply-add):
  // encoder self-attention: Q,K,V,O 4 · 2·3·4·4 = 384; QKᵀ and PV 2 · 2·3·3·4 = 144; FFN 2 · 2·3·4·8 = 384
  // decoder self-attention: 4 · 2·2·4·4 = 256; 2 · 2·2·2·4 = 64
  // cross-attention: Q,O 2 · 2·2·16 = 128, K,V 2 · 2·3·16 = 192; 2 · 2·2·3·4 = 96; FFN 2 · 2·2·4·8 = 256
  // generator 2·2·4·6 = 96
  const FlopCount f = forward_flops(tiny(), 3, 2);
  EXPECT_EQ(f.projections, 384 + 256 + 128 + 192);
  EXPECT_EQ(f.attention, 144 + 64 + 96);
  EXPECT_EQ(f.feed_forward, 384 + 256);
  EXPECT_EQ(f.generator, 96);
  EXPECT_EQ(f.total(), 2000);
}

TEST(Flops, ACausalForwardCountsEachQuerysKeysUpToItself) {
  // n_tgt 2: the decoder's self-attention over 3 of the 4 pairs (query 0 sees key 0, query 1 keys
  // 0 and 1): QKᵀ and PV 2 · 2·3·4 = 48 instead of 64; everything else as the full count.
  const FlopCount full = forward_flops(tiny(), 3, 2), causal = causal_forward_flops(tiny(), 3, 2);
  EXPECT_EQ(causal.attention, 144 + 48 + 96);
  EXPECT_EQ(causal.total(), full.total() - 16);
  // GPT-2 small's shape over 1,024 tokens: 12 layers · 2 · 2·768·(1024·1023/2) fewer.
  const Config g = gpt2_small_config();
  EXPECT_EQ(forward_flops(g, 0, 1024).attention - causal_forward_flops(g, 0, 1024).attention,
            int64_t{12} * 2 * 2 * 768 * (1024 * 1023 / 2));
}

TEST(Flops, HandCountOfADecodingStep) {
  // t = 5 decoder positions, n_src 3. Cached: one row.
  // self Q,K,V,O 4 · 2·16 = 128; QKᵀ, PV over 5 keys 2 · 2·5·4 = 80
  // cross Q,O 2 · 2·16 = 64 (K, V cached); over 3 keys 2 · 2·3·4 = 48; FFN 2 · 2·4·8 = 128; generator 2·4·6 = 48
  const FlopCount c = decode_step_flops(tiny(), 3, 5, true);
  EXPECT_EQ(c.projections, 128 + 64);
  EXPECT_EQ(c.attention, 80 + 48);
  EXPECT_EQ(c.feed_forward, 128);
  EXPECT_EQ(c.generator, 48);
  EXPECT_EQ(c.total(), 496);
  // Recomputing: the whole decoder over 5 rows (cross K/V of the memory again), generator on all.
  const FlopCount u = decode_step_flops(tiny(), 3, 5, false);
  EXPECT_EQ(u.projections, 4 * 2 * 5 * 16 + 2 * 2 * 5 * 16 + 2 * 2 * 3 * 16);
  EXPECT_EQ(u.attention, 2 * 2 * 5 * 5 * 4 + 2 * 2 * 5 * 3 * 4);
  EXPECT_EQ(u.feed_forward, 2 * 2 * 5 * 4 * 8);
  EXPECT_EQ(u.generator, 2 * 5 * 4 * 6);
  EXPECT_EQ(cross_kv_setup_flops(tiny(), 3), 2 * 2 * 3 * 16);
}

TEST(Flops, CachedStepGrowsLinearlyRecomputationQuadratically) {
  Config base = tiny();
  base.d_model = 512;
  base.n_heads = 8;
  base.n_encoder_layers = base.n_decoder_layers = 6;
  base.d_ff = 2048;
  const int64_t c64 = decode_step_flops(base, 64, 64, true).total(),
                c128 = decode_step_flops(base, 64, 128, true).total();
  const int64_t c256 = decode_step_flops(base, 64, 256, true).total();
  EXPECT_EQ(c256 - c128, 2 * (c128 - c64));  // linear in t: equal increments per token
  const FlopCount u = decode_step_flops(base, 64, 256, false);
  EXPECT_GT(u.total(), 100 * decode_step_flops(base, 64, 256, true).total());
}

TEST(Memory, KvCacheAndAttentionMaps) {
  const Config c = tiny();
  EXPECT_EQ(kv_cache_bytes(c, 10), 2 * 1 * 10 * 4 * 4);  // 2 × layers × tokens × d × 4
  EXPECT_EQ(cross_kv_bytes(c, 3), 2 * 1 * 3 * 4 * 4);
  EXPECT_EQ(attention_map_bytes(c, 5, 5), 2 * 5 * 5 * 4);  // heads × n² floats
  const CostReport r = cost_report(c, 3, 5, 2);
  EXPECT_EQ(r.kv_self_bytes, 2 * kv_cache_bytes(c, 5));
  EXPECT_EQ(r.kv_cross_bytes, 2 * cross_kv_bytes(c, 3));
  EXPECT_EQ(r.attn_map_bytes,
            attention_map_bytes(c, 3, 3) + attention_map_bytes(c, 5, 5) + attention_map_bytes(c, 5, 3));
  EXPECT_EQ(r.weight_bytes, 510 * 4);
  // The lecture's base model: 2 × 6 × 1024 × 512 × 4 = 24 MiB for 1024 tokens.
  Config base = c;
  base.d_model = 512;
  base.n_decoder_layers = 6;
  EXPECT_EQ(kv_cache_bytes(base, 1024), 24LL * 1024 * 1024);
}

// Grouped-query attention: 8 query heads share 2 K/V heads (d 64, d_k 8), 3 decoder layers.
Config gqa() {
  Config c = tiny();
  c.arch = Arch::DecoderOnly;
  c.n_encoder_layers = 0;
  c.d_model = 64;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.n_decoder_layers = 3;
  return c;
}

TEST(Memory, GroupedQueryCacheHandCount) {
  const Config c = gqa();
  // 2 (K, V) × 3 layers × 2 K/V heads × 8 dims × 5 tokens × 4 bytes = 1 920; all heads: × 4.
  EXPECT_EQ(kv_cache_bytes(c, 5), 1920);
  EXPECT_EQ(mha_kv_cache_bytes(c, 5), 7680);
  // Without grouping the two agree, and give the lecture's 2 × L × tokens × d × 4.
  Config mha = c;
  mha.n_kv_heads = 0;
  EXPECT_EQ(kv_cache_bytes(mha, 5), 2 * 3 * 5 * 64 * 4);
  EXPECT_EQ(mha_kv_cache_bytes(mha, 5), kv_cache_bytes(mha, 5));
  // Multi-query attention: one K/V head for all 8.
  Config mqa = c;
  mqa.n_kv_heads = 1;
  EXPECT_EQ(kv_cache_bytes(mqa, 5), 960);
}

TEST(Flops, GroupedQueryAndGatedStepHandCount) {
  // gqa(): d 64, 8 query heads of d_k 8 (d_attn 64), 2 K/V heads (d_kv 16), 3 layers, d_ff 8, V 6.
  // Cached step at t = 5, per layer: Q, O 2 · 2·64·64 = 16 384, K, V 2 · 2·64·16 = 4 096;
  // QKᵀ and PV over 5 keys with every query head 2 · 2·5·64 = 1 280; FFN 2 · 2·64·8 = 2 048.
  Config c = gqa();
  const FlopCount f = decode_step_flops(c, 0, 5, true);
  EXPECT_EQ(f.projections, 3 * (16384 + 4096));
  EXPECT_EQ(f.attention, 3 * 1280);
  EXPECT_EQ(f.feed_forward, 3 * 2048);
  EXPECT_EQ(f.generator, 2 * 64 * 6);
  // Recomputing 5 rows: K, V on all 5 rows; attention 5 × 5.
  const FlopCount u = decode_step_flops(c, 0, 5, false);
  EXPECT_EQ(u.projections, 3 * (5 * 16384 + 5 * 4096));
  EXPECT_EQ(u.attention, 3 * (2 * 2 * 5 * 5 * 64));
  // A gated MLP (SwiGLU) has three d × d_ff matrices; a head_dim of its own widens Q and O.
  c.mlp = Mlp::Gated;
  c.head_dim = 12;  // d_attn 96, d_kv 24
  const FlopCount g = decode_step_flops(c, 0, 5, true);
  EXPECT_EQ(g.feed_forward, 3 * 3 * 2 * 64 * 8);
  EXPECT_EQ(g.projections, 3 * (2 * 2 * 64 * 96 + 2 * 2 * 64 * 24));
  EXPECT_EQ(g.attention, 3 * (2 * 2 * 5 * 96));
}

TEST(Memory, QueryHeadsSharingEachKvHead) {
  const Config c = gqa();
  EXPECT_EQ(query_heads_by_kv_head(c), (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(kv_head_of(c, 3), 0);
  EXPECT_EQ(kv_head_of(c, 4), 1);
  Config mha = c;
  mha.n_kv_heads = 0;
  const auto own = query_heads_by_kv_head(mha);
  ASSERT_EQ(own.size(), 8u);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(own[static_cast<size_t>(h)], std::vector<int>{h});
  Config mqa = c;
  mqa.n_kv_heads = 1;
  EXPECT_EQ(query_heads_by_kv_head(mqa), (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(Memory, CacheTablePerLayerAndInTotal) {
  // Mid-step: layer 0 already holds the new token (5 rows), layers 1 and 2 not yet (4); two beams.
  const KvCacheTable t = kv_cache_table(gqa(), {5, 4, 4}, 2);
  EXPECT_EQ(t.query_heads, 8);
  EXPECT_EQ(t.kv_heads, 2);
  EXPECT_EQ(t.group, 4);
  EXPECT_EQ(t.d_k, 8);
  EXPECT_EQ(t.bytes_per_element, 4);
  ASSERT_EQ(t.layers.size(), 3u);
  EXPECT_EQ(t.layers[0].tokens, 5);
  EXPECT_EQ(t.layers[0].bytes, 2 * 2 * 8 * 5 * 4 * 2);      // 1 280
  EXPECT_EQ(t.layers[0].mha_bytes, 2 * 8 * 8 * 5 * 4 * 2);  // 5 120
  EXPECT_EQ(t.layers[1].bytes, 2 * 2 * 8 * 4 * 4 * 2);      // 1 024
  EXPECT_EQ(t.bytes, 1280 + 1024 + 1024);
  EXPECT_EQ(t.mha_bytes, 4 * t.bytes);
  EXPECT_DOUBLE_EQ(t.saved(), 4.0);
  EXPECT_DOUBLE_EQ(t.layers[2].saved(), 4.0);
  // Nothing cached yet: no ratio to state.
  EXPECT_DOUBLE_EQ(kv_cache_table(gqa(), {0, 0, 0}, 1).saved(), 0.0);
  Config mha = gqa();
  mha.n_kv_heads = 0;
  EXPECT_DOUBLE_EQ(kv_cache_table(mha, {5, 5, 5}, 1).saved(), 1.0);
}

}  // namespace
}  // namespace sf
