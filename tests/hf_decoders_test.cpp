// Golden tests of the Llama-style hub families (tests/fixtures/hf: llama-tiny, qwen2-tiny-bf16,
// mistral-tiny-sharded, pythia-tiny), opened unchanged and run forward, against what the
// independent PyTorch reference (tests/reference/hf/decoders.py) computed: rotated and unrotated
// q/k, v, every attention map (1e-5), the gated MLP's gate/up products, block outputs, logits and
// log-probs (1e-4); the cached decode against a full recompute at every step; and each refused
// config.json option named with its value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "io/hf_model.h"
#include "io/trace_export.h"
#include "model/weights.h"
#include "model/decoder.h"
#include "stepper/decoding.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

// A vocabulary of the config's size (the tokenizers are tested on their own): the model's numbers
// do not depend on the token strings.
Vocab stand_in(int size) {
  std::vector<std::string> t{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(t.size()) < size) t.push_back("t" + std::to_string(t.size()));
  return *Vocab::make(t, Tokenizer::Word, "stand-in");
}

Result<Model> open_folder(const std::string& dir) {
  auto files = find_hf_files(dir);
  if (!files) return Error{files.error()};
  auto h = read_hf_config(*files);
  if (!h) return Error{h.error()};
  HfVocabs v;
  v.tgt = v.src = stand_in(h->vocab_size);
  return load_hf_model(*files, *h, v);
}

Model open_fixture(const std::string& name) {
  auto m = open_folder(test::hf_fixture(name));
  EXPECT_TRUE(m.ok()) << m.error();
  return m.ok() ? std::move(*m) : Model{};
}

// Largest |a − b| relative to the larger of 1 and the reference's largest magnitude.
double scaled_diff(const Tensor& have, const Tensor& want) {
  double mx = 1.0;
  for (float x : want.f32) mx = std::max(mx, std::fabs(static_cast<double>(x)));
  return test::max_abs_diff(have, want) / mx;
}

struct HubFamily {
  const char* folder;
  const char* model_type;
  const char* dtype;
  int kv_heads;
  int window;
};

class HfDecoders : public ::testing::TestWithParam<HubFamily> {};

// As loaded, and packed for inference as the explorer and the command line open it (float32
// projections packed; 16-bit matrices rearranged into panels, read by both kinds of product).
TEST_P(HfDecoders, TraceMatchesTheReference) {
  const HubFamily f = GetParam();
  for (bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "packed for inference" : "as loaded");
    Model m = open_fixture(f.folder);
    if (packed) pack_for_inference(m.weights);
    ASSERT_GT(m.config.n_decoder_layers, 0);
    EXPECT_EQ(m.source.family, f.model_type);
    EXPECT_EQ(m.source.stored_dtype, f.dtype);
    EXPECT_EQ(m.config.kv_heads(), f.kv_heads);
    EXPECT_EQ(m.config.sliding_window, f.window);
    const TensorFile ex = test::hf_expected(f.folder);
    const std::vector<int> ids = test::ids_of(*ex.find("tgt_ids"));
    ASSERT_TRUE(check_ids(m, ids, false).ok());
    Trace t;
    decode(m, ids, 1, {}, nullptr, &t.decoder);
    TensorFile got;
    append_trace_tensors(m, t, got);
    int weights = 0, compared = 0;
    for (auto& [name, want] : ex.tensors) {
      if (want.dtype == DType::I64 || name == "decoder.embed.sum") continue;
      const Tensor* have = got.find(name);
      ASSERT_TRUE(have) << f.folder << ": the trace has no tensor '" << name << "'";
      const bool is_weights = name.size() > 8 && name.compare(name.size() - 8, 8, ".weights") == 0;
      if (is_weights) {
        EXPECT_LE(test::max_abs_diff(*have, want), 1e-5) << f.folder << ": " << name;
        ++weights;
      } else if (name == "logits" || name == "log_probs") {
        EXPECT_LE(test::max_abs_diff(*have, want), 1e-4) << f.folder << ": " << name;
      } else {
        EXPECT_LE(scaled_diff(*have, want), 1e-5) << f.folder << ": " << name;
      }
      ++compared;
    }
    EXPECT_EQ(weights, m.config.n_decoder_layers);
    EXPECT_GE(compared, 8 * m.config.n_decoder_layers + 3);
  }
}

TEST_P(HfDecoders, CachedDecodingEqualsAFullRecomputeAtEveryStep) {
  const HubFamily f = GetParam();
  for (bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "packed for inference" : "as loaded");
    Model m = open_fixture(f.folder);
    if (packed) pack_for_inference(m.weights);
    const std::vector<int> ids = test::ids_of(*test::hf_expected(f.folder).find("tgt_ids"));
    KvCache cache;
    cache.reset(m.config.n_decoder_layers, m.config.max_len, m.config.d_kv());
    // The cache holds only the K/V heads: rows of h_kv·dk floats.
    EXPECT_EQ(cache.layers[0].self_k.cols(), m.config.kv_heads() * m.config.d_k());
    for (size_t t = 0; t < ids.size(); ++t) {
      const Mat step = decode(m, {ids[t]}, 1, {}, &cache, nullptr);  // (1, V)
      const Mat full = decode(m, std::vector<int>(ids.begin(), ids.begin() + t + 1), 1, {}, nullptr, nullptr);
      EXPECT_LE((step.row(0) - full.bottomRows(1)).cwiseAbs().maxCoeff(), 1e-4) << f.folder << " step " << t;
    }
    EXPECT_EQ(cache.self_bytes(), 2LL * m.config.n_decoder_layers * static_cast<int64_t>(ids.size()) *
                                      m.config.kv_heads() * m.config.d_k() * 4);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfDecoders,
                         ::testing::Values(HubFamily{"llama-tiny", "llama", "F32", 2, 0},
                                           HubFamily{"qwen2-tiny-bf16", "qwen2", "BF16", 1, 0},
                                           HubFamily{"mistral-tiny-sharded", "mistral", "F32", 2, 3},
                                           HubFamily{"pythia-tiny", "gpt_neox", "F32", 2, 0}),
                         [](const auto& info) {
                           std::string n = info.param.folder;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(HfDecodersLoad, ConfigChoicesOfEachFamily) {
  const Model llama = open_fixture("llama-tiny");
  EXPECT_EQ(llama.config.norm_kind, NormKind::RMSNorm);
  EXPECT_EQ(llama.config.mlp, Mlp::Gated);
  EXPECT_EQ(llama.config.d_k(), 12);  // head_dim given: 4 heads of 12 over hidden_size 32
  EXPECT_EQ(llama.config.d_attn(), 48);
  EXPECT_EQ(llama.config.rope.scaling, RopeScaling::Llama3);
  EXPECT_FALSE(llama.config.share_embeddings);
  // llama3 scaling with original_max_position_embeddings 64, factor 4, bands 64 / 16: θ_0 = 1
  // (wavelength 6.3 < 16) kept; θ_5 = 10000^(−10/12) (wavelength 13,600 > 64) divided by 4.
  ASSERT_EQ(llama.rope_inv_freq.size(), 6);
  EXPECT_FLOAT_EQ(llama.rope_inv_freq(0), 1.0f);
  EXPECT_FLOAT_EQ(llama.rope_inv_freq(5), static_cast<float>(std::pow(10000.0, -10.0 / 12) / 4));
  const Model qwen = open_fixture("qwen2-tiny-bf16");
  EXPECT_TRUE(qwen.config.share_embeddings);
  EXPECT_TRUE(qwen.config.qkv_bias);
  EXPECT_FALSE(qwen.config.o_bias);
  EXPECT_TRUE(qwen.source.converted);
  const Model mistral = open_fixture("mistral-tiny-sharded");
  EXPECT_EQ(mistral.source.files.size(), 4u);  // two shards, the index, config.json
  const Model pythia = open_fixture("pythia-tiny");
  EXPECT_EQ(pythia.config.residual, Residual::Parallel);
  EXPECT_EQ(pythia.config.rotary_dim(), 4);  // rotary_pct 0.25 of 16
  EXPECT_EQ(pythia.config.norm_kind, NormKind::LayerNorm);
}

TEST(HfDecodersLoad, ParameterCountsAreHuggingFaces) {
  // llama-tiny: 300·32 embed + 2 layers · (48·32 q + 2·24·32 k,v + 32·48 o + 3·48·32 mlp + 2·32
  // norms) + 32 norm + 300·32 lm_head; no biases.
  const Model llama = open_fixture("llama-tiny");
  EXPECT_EQ(count_params(llama.weights, llama.config),
            300 * 32 + 2 * (48 * 32 + 2 * 24 * 32 + 32 * 48 + 3 * 48 * 32 + 2 * 32) + 32 + 300 * 32);
  // qwen2: one K/V head of 8, q/k/v biases, tied head.
  const Model qwen = open_fixture("qwen2-tiny-bf16");
  EXPECT_EQ(count_params(qwen.weights, qwen.config),
            300 * 32 + 2 * (32 * 32 + 32 + 2 * (8 * 32 + 8) + 32 * 32 + 3 * 48 * 32 + 2 * 32) + 32);
}

// ---------------------------------------------------------------------------- refused options

struct ScratchFolder {
  std::string dir;
  explicit ScratchFolder(const std::string& from) {
    dir = test::temp_path("hfdec_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir);
    for (const auto& e : std::filesystem::directory_iterator(from))
      std::filesystem::copy_file(e.path(), dir + "/" + e.path().filename().string());
  }
  ~ScratchFolder() { std::filesystem::remove_all(dir); }
  // Sets config.json's key to a JSON value (null removes it).
  void set(const std::string& key, const nlohmann::json& v) {
    std::ifstream in(dir + "/config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    if (v.is_null())
      j.erase(key);
    else
      j[key] = v;
    std::ofstream(dir + "/config.json") << j.dump(2);
  }
};

std::string folder_error(const std::string& dir) {
  auto m = open_folder(dir);
  return m.ok() ? std::string("(loaded)") : m.error();
}

TEST(HfDecodersBadInput, EachRefusedOptionIsNamedWithItsValue) {
  struct Case {
    const char* folder;
    const char* key;
    nlohmann::json value;
    const char* message;
  };
  const Case cases[] = {
      {"llama-tiny", "rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}, "rope_scaling type \"yarn\""},
      {"llama-tiny", "rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}, "rope_scaling type \"dynamic\""},
      {"llama-tiny", "rope_scaling", {{"rope_type", "linear"}}, "rope_scaling: missing field 'factor'"},
      {"llama-tiny", "partial_rotary_factor", 0.5, "field 'partial_rotary_factor' is 0.5"},
      {"llama-tiny", "num_key_value_heads", 3, "num_key_value_heads (3)"},
      {"llama-tiny", "hidden_act", "relu2", "found \"relu2\""},
      {"llama-tiny", "model_type", "gemma", "model_type \"gemma\" is not supported"},
      {"qwen2-tiny-bf16", "use_sliding_window", true, "field 'use_sliding_window' is true"},
      {"pythia-tiny", "rotary_pct", 0.1, "gives 1 rotating dimensions"},
      {"pythia-tiny", "rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}, "rope_scaling type \"dynamic\""},
  };
  for (const Case& c : cases) {
    ScratchFolder s(test::hf_fixture(c.folder));
    s.set(c.key, c.value);
    EXPECT_THAT(folder_error(s.dir), HasSubstr(c.message)) << c.folder << " " << c.key << " = " << c.value.dump();
  }
}

TEST(HfDecodersBadInput, WeightsThatDoNotFitTheConfig) {
  {  // an untied head without lm_head.weight
    ScratchFolder s(test::hf_fixture("qwen2-tiny-bf16"));
    s.set("tie_word_embeddings", false);
    EXPECT_THAT(folder_error(s.dir), HasSubstr("missing tensor 'lm_head.weight' of shape (300, 32)"));
  }
  {  // attention_bias promised, not stored
    ScratchFolder s(test::hf_fixture("llama-tiny"));
    s.set("attention_bias", true);
    EXPECT_THAT(folder_error(s.dir), HasSubstr("missing tensor 'layers.0.self_attn.k_proj.bias' of shape (24)"));
  }
  {  // a shard the index names is gone
    ScratchFolder s(test::hf_fixture("mistral-tiny-sharded"));
    std::filesystem::remove(s.dir + "/model-00002-of-00002.safetensors");
    EXPECT_THAT(folder_error(s.dir), HasSubstr("names the shard 'model-00002-of-00002.safetensors'"));
  }
  {  // an index entry outside the folder
    ScratchFolder s(test::hf_fixture("mistral-tiny-sharded"));
    std::ofstream(s.dir + "/model.safetensors.index.json") << R"({"weight_map": {"a": "../x.safetensors"}})";
    EXPECT_THAT(folder_error(s.dir), HasSubstr("expected a .safetensors file name beside the index"));
  }
  {  // GQA heads that do not divide
    ScratchFolder s(test::hf_fixture("mistral-tiny-sharded"));
    s.set("num_key_value_heads", 4);
    EXPECT_THAT(folder_error(s.dir), HasSubstr("shape (16, 32), expected (32, 32)"));
  }
}

TEST(HfDecodersBadInput, TheCommandLineExitsOneNamingTheOption) {
  ScratchFolder s(test::hf_fixture("llama-tiny"));
  s.set("rope_scaling", {{"rope_type", "longrope"}, {"factor", 4.0}});
  std::string out, err;
  EXPECT_EQ(test::run_stepformer("info " + s.dir, out, err), 1);
  EXPECT_THAT(err, HasSubstr("rope_scaling type \"longrope\" is not supported"));
}

}  // namespace
}  // namespace sf
