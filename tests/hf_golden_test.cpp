// Golden tests of the Hugging Face loader: the hub-layout fixtures of tests/fixtures/hf (GPT-2,
// GPT-2 stored as F16, Marian, BERT) opened unchanged, run forward, and compared with what the
// independent PyTorch reference (tests/reference/hf/models.py) computed: embedding sums, every
// attention map (1e-5), every block output and stack output (1e-5), logits (1e-4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/checkpoint.h"
#include "io/trace_export.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "test_util.h"

namespace sf {
namespace {

Model load_folder(const std::string& path) {
  auto m = load_model(path);
  EXPECT_TRUE(m.ok()) << m.error();
  return m ? std::move(*m) : Model{};
}

// Runs the model on the fixture's ids (names prefixed `prefix`) and records the trace tensors.
TensorFile run_like_fixture(const Model& m, const TensorFile& ex, const std::string& prefix) {
  Trace t;
  std::vector<int> src;
  EncoderContext enc;
  Mat memory;
  if (m.config.has_encoder()) {
    src = test::ids_of(*ex.find(prefix + "src_ids"));
    EXPECT_TRUE(check_ids(m, src, true).ok());
    memory = encode(m, src, 1, &t.encoder);
    enc = {&memory, &src};
  }
  if (m.config.has_decoder()) {
    std::vector<int> tgt = test::ids_of(*ex.find(prefix + "tgt_ids"));
    EXPECT_TRUE(check_ids(m, tgt, false).ok());
    decode(m, tgt, 1, enc, nullptr, &t.decoder);
  }
  TensorFile got;
  append_trace_tensors(m, t, got, prefix);
  if (m.config.n_token_types > 0) got.add(prefix + "token_type_ids", Tensor::from_ids(t.encoder.embed.token_types));
  return got;
}

// Compares every tensor of the fixture whose name has `prefix` (and no further "pair." prefix).
int compare(const TensorFile& got, const TensorFile& ex, const std::string& prefix, const std::string& what) {
  int compared = 0;
  for (auto& [name, want] : ex.tensors) {
    if (name.rfind(prefix, 0) != 0 || (prefix.empty() && name.rfind("pair.", 0) == 0)) continue;
    const std::string base = name.substr(prefix.size());
    // Not part of a stepformer run: the labels, BERT's pooler, the padding mask (its effect is
    // checked through the attention weights, whose padded keys must be exactly 0).
    if (base == "tgt_y" || base == "pooler_output" || base == "attention_mask") continue;
    const Tensor* have = got.find(name);
    EXPECT_TRUE(have) << what << ": the trace has no tensor '" << name << "'";
    if (!have) continue;
    if (want.dtype == DType::I64) {
      EXPECT_EQ(have->i64, want.i64) << what << ": " << name;
      continue;
    }
    const bool is_logits = base == "logits";
    EXPECT_LE(test::max_abs_diff(*have, want), is_logits ? 1e-4 : 1e-5) << what << ": " << name;
    ++compared;
  }
  return compared;
}

struct GoldenCase {
  const char* folder;
  const char* prefix;
  int min_compared;  // embed sum + per layer (attention(s) + block output) + stack output(s) + logits
};

class HfGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(HfGolden, WeightsAndConfigMatchTheReference) {
  const GoldenCase c = GetParam();
  const Model m = load_folder(test::hf_fixture(c.folder));
  const TensorFile ex = test::hf_expected(c.folder);
  const TensorFile got = run_like_fixture(m, ex, c.prefix);
  EXPECT_GE(compare(got, ex, c.prefix, std::string(c.folder) + "/" + c.prefix), c.min_compared);
}

// From the folder's own tokenizer to the ids the reference ran: text in, the same tokens.
TEST(HfGoldenText, TheFoldersTokenizerGivesTheReferenceIds) {
  for (const char* folder : {"gpt2-tiny", "gpt2-tiny-f16"}) {
    const Model m = load_folder(test::hf_fixture(folder));
    const TensorFile ex = test::hf_expected(folder);
    EXPECT_EQ(m.config.tgt_vocab.encode(ex.metadata.at("text")).ids, test::ids_of(*ex.find("tgt_ids"))) << folder;
  }
  const Model marian = load_folder(test::hf_fixture("marian-tiny"));
  const TensorFile mx = test::hf_expected("marian-tiny");
  EXPECT_EQ(marian.config.src_vocab.encode(mx.metadata.at("source_text")).ids, test::ids_of(*mx.find("src_ids")));
  // The decoder input: decoder_start_token_id (<pad>), then the target's pieces (labels shifted right).
  std::vector<int> tgt =
      with_bos(marian.config.tgt_vocab, marian.config.tgt_vocab.tokenize(mx.metadata.at("target_text")).ids);
  EXPECT_EQ(tgt, test::ids_of(*mx.find("tgt_ids")));
  const Model bert = load_folder(test::hf_fixture("bert-tiny"));
  const TensorFile bx = test::hf_expected("bert-tiny");
  EXPECT_EQ(bert.config.src_vocab.encode(bx.metadata.at("text")).ids, test::ids_of(*bx.find("src_ids")));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfGolden,
                         ::testing::Values(GoldenCase{"gpt2-tiny", "", 7}, GoldenCase{"gpt2-tiny-f16", "", 7},
                                           GoldenCase{"marian-tiny", "", 15}, GoldenCase{"bert-tiny", "", 7},
                                           GoldenCase{"bert-tiny", "pair.", 7}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.folder) + info.param.prefix;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(HfLoad, ModelSourceSaysWhereTheWeightsCameFrom) {
  const Model f32 = load_folder(test::hf_fixture("gpt2-tiny"));
  EXPECT_EQ(f32.source.family, "gpt2");
  EXPECT_EQ(f32.source.architecture, "GPT2LMHeadModel");
  EXPECT_EQ(f32.source.stored_dtype, "F32");
  EXPECT_EQ(f32.source.tokenizer, "byte-level BPE");
  EXPECT_EQ(f32.source.files.size(), 4u);  // model.safetensors, config.json, vocab.json, merges.txt
  EXPECT_FALSE(f32.source.converted);
  EXPECT_TRUE(f32.config.share_embeddings);  // no lm_head.weight: tied to wte
  const Model f16 = load_folder(test::hf_fixture("gpt2-tiny-f16") + "/model.safetensors");
  EXPECT_EQ(f16.source.stored_dtype, "F16");
  EXPECT_TRUE(f16.source.converted);
  const Model bert = load_folder(test::hf_fixture("bert-tiny"));
  EXPECT_EQ(bert.source.family, "bert");
  EXPECT_TRUE(bert.config.mlm_head);
  EXPECT_EQ(bert.source.tokenizer, "WordPiece");
  EXPECT_EQ(bert.config.arch, Arch::EncoderOnly);
  const Model marian = load_folder(test::hf_fixture("marian-tiny"));
  EXPECT_EQ(marian.config.encoder_heads(), 4);
  EXPECT_EQ(marian.config.n_heads, 2);
  EXPECT_EQ(marian.config.encoder_d_ff(), 48);
  EXPECT_EQ(marian.config.d_ff, 64);
  EXPECT_EQ(marian.source.tokenizer, "SentencePiece");
  EXPECT_EQ(marian.config.src_vocab.size(), 328);
}

}  // namespace
}  // namespace sf
