// The Hugging Face loader on altered copies of the hub fixtures: the variants the hub has (name
// prefixes, an explicit lm_head, TF-era gamma/beta, stored Marian position tables, BF16) and the
// bad inputs (pickles, missing config.json, unsupported model_type, missing / mis-shaped /
// unexpected tensors, NaN), each with a message naming what was expected and what was found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "io/hf_model.h"
#include "io/hf_weights.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "model/positional_encoding.h"
#include "stepper/cost.h"
#include "test_util.h"

namespace sf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A stored tensor as raw bytes (any dtype).
struct Raw {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::vector<Raw> read_raw(const std::string& path) {
  const std::string b = test::read_text(path);
  auto h = parse_safetensors_header(b.data(), b.size(), path);
  EXPECT_TRUE(h.ok()) << h.error();
  std::vector<Raw> out;
  if (!h) return out;
  for (const TensorEntry& e : h->entries)
    out.push_back({e.name, e.dtype, e.shape, b.substr(h->data_start + e.begin, e.end - e.begin)});
  return out;
}

void write_raw(const std::string& path, const std::vector<Raw>& tensors) {
  nlohmann::json h = {{"__metadata__", {{"format", "pt"}}}};
  uint64_t off = 0;
  for (const Raw& t : tensors) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  const std::string header = h.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  for (const Raw& t : tensors) out += t.bytes;
  std::ofstream(path, std::ios::binary) << out;
}

Raw* find(std::vector<Raw>& v, const std::string& name) {
  for (Raw& r : v)
    if (r.name == name) return &r;
  return nullptr;
}

Raw f32_raw(const std::string& name, const Mat& m, std::vector<int64_t> shape) {
  return {name, "F32", std::move(shape), std::string(reinterpret_cast<const char*>(m.data()), size_t(m.size()) * 4)};
}

// A scratch copy of a fixture folder, removed at the end of the test.
struct FixtureCopy {
  std::string dir;
  explicit FixtureCopy(const std::string& fixture, const std::string& name) {
    dir = test::temp_path(name);
    fs::remove_all(dir);
    fs::copy(test::fixture("hf/" + fixture), dir);
  }
  ~FixtureCopy() { fs::remove_all(dir); }
  std::string model() const { return dir + "/model.safetensors"; }
};

Result<Model> load_weights(const std::string& path) { return load_model(path); }

std::string weights_error(const std::string& path) {
  auto m = load_weights(path);
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.error();
}

Mat gpt2_logits(const Model& m) {
  TensorFile ex = *read_safetensors(test::fixture("hf/gpt2-tiny/expected.safetensors"));
  return decode(m, test::ids_of(*ex.find("tgt_ids")), 1, {}, nullptr, nullptr);
}

Mat expected_logits(const std::string& fixture) {
  TensorFile ex = *read_safetensors(test::fixture("hf/" + fixture + "/expected.safetensors"));
  const Tensor& t = *ex.find("logits");
  return Eigen::Map<const Mat>(t.f32.data(), t.shape[0], t.shape[1]);
}

TEST(HfVariants, Gpt2WithTransformerPrefixAndExplicitTiedHead) {
  FixtureCopy s("gpt2-tiny", "gpt2_prefix");
  std::vector<Raw> t = read_raw(s.model());
  for (Raw& r : t) r.name = "transformer." + r.name;
  Raw head = *find(t, "transformer.wte.weight");
  head.name = "lm_head.weight";
  t.push_back(head);
  write_raw(s.model(), t);
  auto m = load_weights(s.dir);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_TRUE(m->config.share_embeddings);  // equal to wte: the tied head saved twice
  EXPECT_LE((gpt2_logits(*m) - expected_logits("gpt2-tiny")).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(HfVariants, Gpt2WithItsOwnHead) {
  FixtureCopy s("gpt2-tiny", "gpt2_head");
  std::vector<Raw> t = read_raw(s.model());
  Raw head = *find(t, "wte.weight");
  head.name = "lm_head.weight";
  float x;
  std::memcpy(&x, head.bytes.data(), 4);
  x += 1.0f;  // logits of token 0 change by ln_f(x)[0] at every position
  std::memcpy(head.bytes.data(), &x, 4);
  t.push_back(head);
  write_raw(s.model(), t);
  auto m = load_weights(s.dir);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_FALSE(m->config.share_embeddings);
  const Mat diff = gpt2_logits(*m) - expected_logits("gpt2-tiny");
  EXPECT_LE(diff.rightCols(diff.cols() - 1).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_GT(diff.col(0).cwiseAbs().maxCoeff(), 1e-2);
}

TEST(HfVariants, BertWithoutPrefixWithTfNamesAndNoPooler) {
  FixtureCopy s("bert-tiny", "bert_tf");
  std::vector<Raw> in = read_raw(s.model()), out;
  for (Raw r : in) {
    if (r.name.rfind("bert.pooler", 0) == 0) continue;
    if (r.name.rfind("bert.", 0) == 0) r.name = r.name.substr(5);
    const std::string w = "LayerNorm.weight", b = "LayerNorm.bias";
    if (r.name.size() > w.size() && r.name.compare(r.name.size() - w.size(), w.size(), w) == 0)
      r.name = r.name.substr(0, r.name.size() - 6) + "gamma";
    if (r.name.size() > b.size() && r.name.compare(r.name.size() - b.size(), b.size(), b) == 0)
      r.name = r.name.substr(0, r.name.size() - 4) + "beta";
    out.push_back(r);
  }
  ASSERT_TRUE(find(out, "embeddings.LayerNorm.gamma"));
  write_raw(s.model(), out);
  auto m = load_weights(s.dir);
  ASSERT_TRUE(m.ok()) << m.error();
  TensorFile ex = *read_safetensors(test::fixture("hf/bert-tiny/expected.safetensors"));
  EncoderTrace tr;
  encode(*m, test::ids_of(*ex.find("src_ids")), 1, &tr);
  EXPECT_LE((tr.logits - expected_logits("bert-tiny")).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(HfVariants, MarianWithStoredPositionTables) {
  FixtureCopy s("marian-tiny", "marian_pos");
  std::vector<Raw> t = read_raw(s.model());
  const Mat table = sinusoidal_halves_pe(64, 32);
  t.push_back(f32_raw("model.encoder.embed_positions.weight", table, {64, 32}));
  t.push_back(f32_raw("model.decoder.embed_positions.weight", table, {64, 32}));
  write_raw(s.model(), t);
  EXPECT_TRUE(load_weights(s.dir).ok());
  // A table that is not Marian's (the interleaved layout) is refused, not silently replaced.
  t.back() = f32_raw("model.decoder.embed_positions.weight", sinusoidal_pe(64, 32), {64, 32});
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("'model.decoder.embed_positions.weight': differs from Marian's fixed "
                                              "sinusoidal table"));
}

TEST(HfVariants, Bf16IsWidenedExactly) {
  FixtureCopy s("gpt2-tiny", "gpt2_bf16");
  std::vector<Raw> t = read_raw(s.model());
  for (Raw& r : t) {
    std::string b;
    for (size_t i = 0; i + 4 <= r.bytes.size(); i += 4) b += r.bytes.substr(i + 2, 2);  // the upper half
    r.bytes = b;
    r.dtype = "BF16";
  }
  write_raw(s.model(), t);
  auto m = load_weights(s.dir);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->source.stored_dtype, "BF16");
  EXPECT_TRUE(m->source.converted);
  // Every weight is its F32 value with the low 16 bits cleared.
  const std::vector<Raw> f32 = read_raw(test::fixture("hf/gpt2-tiny/model.safetensors"));
  Raw wte = *std::find_if(f32.begin(), f32.end(), [](const Raw& r) { return r.name == "wte.weight"; });
  for (int i = 0; i < 50; ++i) {
    uint32_t bits;
    std::memcpy(&bits, wte.bytes.data() + 4 * i, 4);
    bits &= 0xffff0000u;
    float want;
    std::memcpy(&want, &bits, 4);
    EXPECT_EQ(m->weights.tgt_embed.data()[i], want);
  }
}

TEST(HfVariants, Gpt2WithOnlyTokenizerJson) {
  FixtureCopy s("gpt2-tiny", "gpt2_tokjson");
  fs::remove(s.dir + "/vocab.json");
  fs::remove(s.dir + "/merges.txt");
  std::ofstream(s.dir + "/tokenizer.json") << test::gpt2_tokenizer_json(false).dump();
  auto m = load_model(s.dir);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->source.files.back(), s.dir + "/tokenizer.json");
  TensorFile ex = *read_safetensors(test::fixture("hf/gpt2-tiny/expected.safetensors"));
  EXPECT_EQ(m->config.tgt_vocab.encode(ex.metadata.at("text")).ids, test::ids_of(*ex.find("tgt_ids")));
  fs::remove(s.dir + "/tokenizer.json");
  EXPECT_THAT(weights_error(s.dir), HasSubstr("missing vocab.json, the gpt2 tokenizer file (or tokenizer.json)"));
}

TEST(HfVariants, ParameterCountsAreHuggingFacesNumParameters) {
  // model.num_parameters() of the gpt2 fixture: its stored tensors total 52,768 floats, of which
  // h.0.attn.bias and h.1.attn.bias (1 × 1 × 32 × 32 causal masks) are buffers, not parameters:
  // 52,768 − 2 × 1,024 = 50,720. GPT-2's output projection has no bias, so the 757 of a zero
  // generator bias must not be counted (they were: 51,477).
  auto gpt2 = load_model(test::fixture("hf/gpt2-tiny"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.error();
  EXPECT_EQ(count_params(gpt2->weights, gpt2->config), 50720);
  EXPECT_EQ(param_total(gpt2->config), 50720);
  EXPECT_EQ(gpt2->weights.generator.bias.size(), 757);  // still there for the forward, all zero
  EXPECT_EQ(gpt2->weights.generator.bias.cwiseAbs().maxCoeff(), 0.0f);
  // Marian keeps its final_logits_bias, BERT its cls.predictions.bias: counted.
  auto marian = load_model(test::fixture("hf/marian-tiny"));
  ASSERT_TRUE(marian.ok()) << marian.error();
  EXPECT_TRUE(marian->config.generator_bias);
}

TEST(HfBadInput, AHubModelIsNotSavedAsAFileThatCouldNotBeReopened) {
  for (const char* fixture : {"gpt2-tiny", "bert-tiny", "marian-tiny"}) {
    auto m = load_model(test::fixture(std::string("hf/") + fixture));
    ASSERT_TRUE(m.ok()) << fixture << ": " << m.error();
    const std::string out = test::temp_path(std::string("hub_saved_") + fixture + ".safetensors");
    fs::remove(out);
    auto ok = save_model(out, *m);
    ASSERT_FALSE(ok.ok()) << fixture;
    EXPECT_THAT(ok.error(), HasSubstr("cannot save a model with a")) << fixture;
    EXPECT_THAT(ok.error(), HasSubstr("expected a word or char vocabulary")) << fixture;
    EXPECT_FALSE(fs::exists(out)) << fixture << ": nothing may be written";
  }
}

TEST(HfBadInput, PickleAndOtherFormatsAreRefusedByName) {
  FixtureCopy s("gpt2-tiny", "gpt2_pickle");
  fs::rename(s.model(), s.dir + "/pytorch_model.bin");
  std::string e = weights_error(s.dir);
  EXPECT_THAT(e, HasSubstr("found pytorch_model.bin, a Python pickle; stepformer reads only model.safetensors"));
  EXPECT_THAT(e, HasSubstr("save_pretrained"));
  fs::rename(s.dir + "/pytorch_model.bin", s.dir + "/tf_model.h5");
  EXPECT_THAT(weights_error(s.dir), HasSubstr("found tf_model.h5 (TensorFlow/Keras HDF5)"));
  fs::remove(s.dir + "/tf_model.h5");
  EXPECT_THAT(weights_error(s.dir), HasSubstr("no weights found (expected model.safetensors)"));
}

TEST(HfBadInput, NoConfigJsonAndUnsupportedModelType) {
  FixtureCopy s("gpt2-tiny", "gpt2_cfg");
  fs::remove(s.dir + "/config.json");
  EXPECT_THAT(weights_error(s.dir), HasSubstr("expected a Hugging Face model folder with config.json, found weights "
                                              "without config.json"));
  std::ofstream(s.dir + "/config.json") << R"({"model_type": "t5", "d_model": 64})";
  EXPECT_THAT(weights_error(s.dir), HasSubstr("model_type \"t5\" is not supported; stepformer opens \"gpt2\""));
  std::ofstream(s.dir + "/config.json") << R"({"model_type": "gpt2", "n_embd": 32})";
  EXPECT_THAT(weights_error(s.dir), HasSubstr("config.json': missing field 'n_head'"));
  // A config.json of a bigger model: refused before anything is allocated.
  std::string big = test::read_text(test::fixture("hf/gpt2-tiny/config.json"));
  big.replace(big.find("\"n_layer\": 2"), 12, "\"n_layer\": 900");
  big.replace(big.find("\"n_embd\": 32"), 12, "\"n_embd\": 4096");
  std::ofstream(s.dir + "/config.json") << big;
  EXPECT_THAT(weights_error(s.dir), HasSubstr("MB of data; expected the config.json of the same model"));
  std::ofstream(s.dir + "/config.json") << "{ not json";
  EXPECT_THAT(weights_error(s.dir), HasSubstr("expected a JSON object (a Hugging Face config.json)"));
}

TEST(HfBadInput, MissingMisShapedUnexpectedAndNaNTensors) {
  FixtureCopy s("gpt2-tiny", "gpt2_tensors");
  const std::vector<Raw> good = read_raw(s.model());
  std::vector<Raw> t = good;
  t.erase(std::find_if(t.begin(), t.end(), [](const Raw& r) { return r.name == "h.1.mlp.c_fc.weight"; }));
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("missing tensor 'h.1.mlp.c_fc.weight' of shape (32, 128)"));

  t = good;
  find(t, "wpe.weight")->shape = {16, 64};
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("tensor 'wpe.weight': shape (16, 64), expected (32, 32)"));

  t = good;
  Raw extra = *find(t, "h.1.ln_1.weight");
  extra.name = "h.2.ln_1.weight";
  t.push_back(extra);
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("unexpected tensor 'h.2.ln_1.weight' in a gpt2 checkpoint "
                                              "(GPT2LMHeadModel) with 2 layers per config.json"));

  t = good;
  const float nan = NAN;
  std::memcpy(find(t, "ln_f.bias")->bytes.data() + 8, &nan, 4);
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("tensor 'ln_f.bias' holds NaN at flat index 2"));

  t = good;
  find(t, "ln_f.bias")->dtype = "I32";
  write_raw(s.model(), t);
  EXPECT_THAT(weights_error(s.dir), HasSubstr("tensor 'ln_f.bias' has dtype I32, expected F32 (or F16, BF16)"));
}

TEST(HfBadInput, TokenizerSizeMustMatchTheConfig) {
  auto files = find_hf_files(test::fixture("hf/gpt2-tiny"));
  ASSERT_TRUE(files.ok());
  auto h = read_hf_config(*files);
  ASSERT_TRUE(h.ok());
  HfVocabs v;
  v.tgt = v.src = *Vocab::make({"<pad>", "<s>", "</s>", "<unk>"}, Tokenizer::Word, "tiny");
  auto m = load_hf_model(*files, *h, v);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error(), HasSubstr("tokenizer has 4 tokens but config.json says vocab_size 757"));
}

TEST(HfCli, InfoOnAFolderSaysWhatWasRead) {
  std::string out, err;
  ASSERT_EQ(test::run_stepformer("info " + test::fixture("hf/gpt2-tiny-f16"), out, err), 0) << err;
  EXPECT_THAT(out, HasSubstr("family       gpt2 (GPT2LMHeadModel)"));
  EXPECT_THAT(out, HasSubstr("stored dtype F16 (converted to F32 on load)"));
  EXPECT_THAT(out, HasSubstr("files        model.safetensors, config.json, vocab.json, merges.txt"));
  EXPECT_THAT(out, HasSubstr("tokenizer byte-level BPE"));
  // 757·32 wte + 32·32 wpe + 2 layers · (4·(32·32+32) + 2·32·128 + 128 + 32 + 4·32) + 2·32 ln_f, as
  // Hugging Face counts (GPT-2's head has no bias: none counted).
  EXPECT_THAT(out, HasSubstr("total                               " +
                             std::to_string(757 * 32 + 32 * 32 +
                                            2 * (4 * (32 * 32 + 32) + 2 * 32 * 128 + 128 + 32 + 4 * 32) + 2 * 32)));
  ASSERT_EQ(test::run_stepformer("info " + test::fixture("hf/marian-tiny"), out, err), 0) << err;
  EXPECT_THAT(out, HasSubstr("encoder      n_heads 4   d_ff 48"));
  EXPECT_THAT(out, HasSubstr("tokenizer SentencePiece"));
  FixtureCopy s("bert-tiny", "bert_cli");
  fs::rename(s.model(), s.dir + "/pytorch_model.bin");
  EXPECT_EQ(test::run_stepformer("info " + s.dir, out, err), 1);
  EXPECT_THAT(err, HasSubstr("stepformer info: '" + s.dir + "': found pytorch_model.bin, a Python pickle"));
}

}  // namespace
}  // namespace sf
