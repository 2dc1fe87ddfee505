// Every bad input from outside gets a clear error naming the thing, what was expected and what
// was found — never a crash or an out-of-bounds read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "stepper/run.h"
#include "train/train_job.h"
#include "test_util.h"

namespace sf {
namespace {

using ::testing::HasSubstr;

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string p = test::temp_path(name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

// A raw safetensors file with a hand-written header (to craft broken offsets).
std::string raw_file(const nlohmann::json& header, size_t data_bytes) {
  std::string h = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + std::string(data_bytes, '\0');
}

TensorFile good_model_file() { return model_to_tensors(test::load_fixture_model("encdec_pre_relu_sin")); }

std::string load_error(const TensorFile& f, const std::string& name) {
  auto m = load_model(write_bytes(name, serialize_safetensors(f)));
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.error();
}

TEST(BadModelFile, Missing) {
  auto m = load_model("/nonexistent/model.safetensors");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error(), HasSubstr("'/nonexistent/model.safetensors': cannot open"));
}

TEST(BadModelFile, TruncatedData) {
  std::string bytes = serialize_safetensors(good_model_file());
  auto m = load_model(write_bytes("trunc.safetensors", bytes.substr(0, bytes.size() - 100)));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error(), HasSubstr("runs past the data block"));
  EXPECT_THAT(m.error(), HasSubstr("truncated"));
}

TEST(BadModelFile, TruncatedHeader) {
  std::string bytes = serialize_safetensors(good_model_file());
  auto m = load_model(write_bytes("trunc_h.safetensors", bytes.substr(0, 50)));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error(), HasSubstr("header length"));
  auto tiny = load_model(write_bytes("tiny.safetensors", "abc"));
  ASSERT_FALSE(tiny.ok());
  EXPECT_THAT(tiny.error(), HasSubstr("expected at least an 8-byte header length, found a file of 3 bytes"));
}

TEST(BadModelFile, HeaderNotJson) {
  std::string b(8, '\0');
  b[0] = 5;
  auto f = parse_safetensors(b + "{oops", "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("expected a JSON object as header"));
}

TEST(BadModelFile, OverlappingOffsets) {
  nlohmann::json h = {{"a", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}},
                      {"b", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {8, 24}}}}};
  auto f = parse_safetensors(raw_file(h, 24), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("tensors 'a' and 'b' have overlapping data_offsets"));
}

// Hostile inputs (tests/fuzz/regressions/safetensors): a shape whose element count wraps around
// 2^64 to 0, and an overlap hidden behind an empty tensor, are refused.
TEST(BadModelFile, HugeShapeIsRefusedBeforeAllocating) {
  for (const auto& shape : {nlohmann::json{1LL << 40, 1LL << 40}, nlohmann::json{1LL << 32, 1LL << 32, 16}}) {
    nlohmann::json h = {{"t", {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {0, 0}}}}};
    auto f = parse_safetensors(raw_file(h, 0), "x");
    ASSERT_FALSE(f.ok()) << shape.dump();
    EXPECT_THAT(f.error(), HasSubstr("is too large (over 2^40 elements)"));
  }
  nlohmann::json h = {{"t", {{"dtype", "F32"}, {"shape", {1, 1, 1, 1, 1, 1, 1, 1, 1}}, {"data_offsets", {0, 4}}}}};
  auto f = parse_safetensors(raw_file(h, 4), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("more than 8 dimensions"));
}

// Fuzz finding (tests/fuzz/regressions/metrics): a metrics field of the wrong type threw
// json::type_error out of curves_from_metrics, ending the explorer's pre-LN vs post-LN view.
TEST(BadMetricsFile, FieldOfTheWrongTypeIsAnError) {
  for (const char* text : {R"({"format": "stepformer.metrics/1", "steps": {}, "task": 5})",
                           R"({"format": "stepformer.metrics/1", "steps": {}, "evals": [1]})"}) {
    auto c = curves_from_metrics(nlohmann::json::parse(text), "x");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_THAT(c.error(), HasSubstr("metrics: a field has the wrong type")) << text;
  }
}

// The run's options give the curves their warm-up and planned steps: a whole number the field's
// type holds. Any other value (1.1e26 would be a cast to int that C++ leaves undefined) is an error
// that names the field.
TEST(BadMetricsFile, OptionOutsideItsFieldsRangeIsAnError) {
  const std::string head = R"({"format": "stepformer.metrics/1", "steps": {}, "options": )";
  for (const char* options :
       {R"({"warmup": "x"})", R"({"warmup": 1.1e26})", R"({"warmup": 2.5})", R"({"warmup": 2147483648})",
        R"({"steps": 1e300})", R"({"steps": 18446744073709551615})"}) {
    auto c = curves_from_metrics(nlohmann::json::parse(head + options + "}"), "x");
    ASSERT_FALSE(c.ok()) << options;
    EXPECT_THAT(c.error(), HasSubstr("metrics: options.")) << options;
    EXPECT_THAT(c.error(), HasSubstr("expected an integer from")) << options;
  }
  auto c = curves_from_metrics(nlohmann::json::parse(head + R"({"warmup": 400, "steps": 5000000000})" + "}"), "x");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->warmup, 400);
  EXPECT_EQ(c->steps_planned, 5000000000);
}

TEST(BadModelFile, OverlapBehindAnEmptyTensor) {
  nlohmann::json h = {{"a", {{"dtype", "F32"}, {"shape", {25}}, {"data_offsets", {0, 100}}}},
                      {"b", {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {0, 0}}}},
                      {"c", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {50, 58}}}}};
  auto f = parse_safetensors(raw_file(h, 100), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("tensors 'a' and 'c' have overlapping data_offsets"));
}

TEST(BadModelFile, OffsetsPastEnd) {
  nlohmann::json h = {{"a", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}}};
  auto f = parse_safetensors(raw_file(h, 12), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("tensor 'a' data_offsets end 16 runs past the data block (12 bytes)"));
}

TEST(BadModelFile, SizeDisagreesWithShape) {
  nlohmann::json h = {{"a", {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 20}}}}};
  auto f = parse_safetensors(raw_file(h, 20), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("tensor 'a' has 20 bytes, expected 24 for shape (2, 3) x F32"));
}

TEST(BadModelFile, UnsupportedDtype) {
  nlohmann::json h = {{"a", {{"dtype", "F16"}, {"shape", {2}}, {"data_offsets", {0, 4}}}}};
  auto f = parse_safetensors(raw_file(h, 4), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error(), HasSubstr("tensor 'a' has dtype F16, expected F32"));
}

TEST(BadModelFile, MissingTensor) {
  TensorFile f = good_model_file();
  f.tensors.erase(f.tensors.begin() + 5);
  const std::string name = good_model_file().tensors[5].first;
  EXPECT_THAT(load_error(f, "missing.safetensors"), HasSubstr("missing tensor '" + name + "'"));
}

TEST(BadModelFile, ExtraTensor) {
  TensorFile f = good_model_file();
  f.add("decoder.layers.7.ffn.fc1.weight", Tensor::from_mat(Mat::Zero(2, 2)));
  EXPECT_THAT(load_error(f, "extra.safetensors"), HasSubstr("unexpected tensor 'decoder.layers.7.ffn.fc1.weight'"));
}

TEST(BadModelFile, WrongShape) {
  TensorFile f = good_model_file();
  for (auto& [name, t] : f.tensors)
    if (name == "decoder.layers.1.cross_attn.k_proj.weight") t = Tensor::from_mat(Mat::Zero(16, 8));
  EXPECT_THAT(load_error(f, "shape.safetensors"),
              HasSubstr("tensor 'decoder.layers.1.cross_attn.k_proj.weight': shape (16, 8), expected (16, 16)"));
}

TEST(BadModelFile, NaNAndInfWeights) {
  for (float bad : {NAN, INFINITY}) {
    TensorFile f = good_model_file();
    for (auto& [name, t] : f.tensors)
      if (name == "generator.bias") t.f32[3] = bad;
    const std::string e = load_error(f, "nan.safetensors");
    EXPECT_THAT(e, HasSubstr("tensor 'generator.bias' holds " + std::string(std::isnan(bad) ? "NaN" : "Inf") +
                             " at flat index 3"));
  }
}

TEST(BadModelFile, MissingConfig) {
  TensorFile f = good_model_file();
  f.metadata.clear();
  EXPECT_THAT(load_error(f, "nocfg.safetensors"), HasSubstr("expected the configuration as __metadata__"));
}

// Configurations that cannot work.
nlohmann::json base_config() {
  return nlohmann::json::parse(config_to_json(test::load_fixture_model("encdec_pre_relu_sin").config));
}

std::string config_error(nlohmann::json j) {
  auto c = parse_config(j.dump());
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.error();
}

TEST(BadConfig, HeadsDoNotDivideDModel) {
  auto j = base_config();
  j["n_heads"] = 3;
  EXPECT_THAT(config_error(j), HasSubstr("d_model (16) must be divisible by n_heads (3)"));
}

TEST(BadConfig, OddDModelWithSinusoidalPE) {
  auto j = base_config();
  j["d_model"] = 15;
  j["n_heads"] = 3;
  EXPECT_THAT(config_error(j), HasSubstr("sinusoidal positional encoding needs an even d_model, found 15"));
}

TEST(BadConfig, ZeroLayers) {
  auto j = base_config();
  j["n_decoder_layers"] = 0;
  EXPECT_THAT(config_error(j), HasSubstr("n_decoder_layers expected at least 1, found 0"));
  j = base_config();
  j["n_encoder_layers"] = 0;
  EXPECT_THAT(config_error(j), HasSubstr("needs n_encoder_layers >= 1, found 0"));
}

TEST(BadConfig, UnknownEnumAndWrongTypes) {
  auto j = base_config();
  j["norm"] = "middle";
  EXPECT_THAT(config_error(j), HasSubstr("field 'norm' expected 'pre' | 'post', found \"middle\""));
  j = base_config();
  j["d_model"] = "big";
  EXPECT_THAT(config_error(j), HasSubstr("field 'd_model' expected an integer, found \"big\""));
  j = base_config();
  j.erase("tgt_vocab");
  EXPECT_THAT(config_error(j), HasSubstr("missing field 'tgt_vocab'"));
}

TEST(BadConfig, VocabularyWithoutSpecials) {
  auto j = base_config();
  j["tgt_vocab"] = {"<pad>", "<s>", "a"};
  EXPECT_THAT(config_error(j), HasSubstr("expected the special token '</s>'"));
}

TEST(BadInput, EmptySourceAndTooLong) {
  Model m = test::load_fixture_model("encdec_pre_relu_sin");
  auto e = prepare_input(m, "   ");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.error(), HasSubstr("source: expected at least one token, found an empty input"));
  std::string longer;
  const std::string word = m.config.src_vocab.token(m.config.src_vocab.size() - 1);
  for (int i = 0; i < m.config.max_len + 1; ++i) longer += word + " ";
  auto l = prepare_input(m, longer);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.error(), HasSubstr("source: 33 tokens, but the model's max_len is 32"));
}

TEST(BadInput, UnknownWordsBecomeUnkWithAWarning) {
  Model m = test::load_fixture_model("encdec_pre_relu_sin");
  const std::string w = m.config.src_vocab.token(m.config.src_vocab.size() - 1);
  auto in = prepare_input(m, w + " zebra " + w);
  ASSERT_TRUE(in.ok()) << in.error();
  EXPECT_EQ(in->src_ids[1], m.config.src_vocab.unk());
  ASSERT_EQ(in->warnings.size(), 1u);
  EXPECT_THAT(in->warnings[0], HasSubstr("'zebra' at position 1 is not in the vocabulary; read as <unk>"));
}

TEST(ModelFile, SaveLoadRoundTripIsAtomicAndExact) {
  Model m = test::load_fixture_model("encdec_post_gelu_learned");
  const std::string p = test::temp_path("roundtrip.safetensors");
  ASSERT_TRUE(save_model(p, m).ok());
  EXPECT_FALSE(std::ifstream(p + ".tmp").good()) << "temporary file left behind";
  auto back = load_model(p);
  ASSERT_TRUE(back.ok()) << back.error();
  auto a = param_table(m.weights, m.config), b = param_table(back->weights, back->config);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    for (int64_t k = 0; k < a[i].numel(); ++k) ASSERT_EQ(a[i].data[k], b[i].data[k]) << a[i].name;
  }
  EXPECT_EQ(config_to_json(m.config), config_to_json(back->config));
}

// The command line turns errors into a message and a non-zero exit.
int run_cli(const std::string& args, std::string& err) {
  std::string out;
  return test::run_stepformer(args, out, err);
}

TEST(BadInput, CommandLineReportsAndExitsNonZero) {
  std::string err;
  EXPECT_EQ(run_cli("info /nonexistent.safetensors", err), 1);
  EXPECT_THAT(err, HasSubstr("stepformer info: '/nonexistent.safetensors': cannot open"));
  EXPECT_EQ(run_cli("trace --model " + test::fixture("encdec_pre_relu_sin.safetensors") + " --src '' --out " +
                        test::temp_path("x"),
                    err),
            1);
  EXPECT_THAT(err, HasSubstr("source: expected at least one token"));
  EXPECT_EQ(run_cli("trace --model m --bogus", err), 2);
  EXPECT_THAT(err, HasSubstr("unknown option --bogus"));
  EXPECT_EQ(run_cli("init --config /nonexistent.json --out " + test::temp_path("x.safetensors"), err), 1);
  EXPECT_THAT(err, HasSubstr("cannot open"));
  EXPECT_EQ(run_cli("nosuchcommand", err), 2);
  EXPECT_THAT(err, HasSubstr("unknown command 'nosuchcommand'"));
}

}  // namespace
}  // namespace sf
