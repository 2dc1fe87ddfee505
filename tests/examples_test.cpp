// Example inputs per model (train/examples.h), a padded batch's masks against the forward's own
// (train/batch.h), the pad keys each sublayer masks (model/mask.h) and reading a file's metadata
// alone (io/safetensors.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/encoder.h"
#include "model/mask.h"
#include "stepper/run.h"
#include "test_util.h"
#include "train/batch.h"
#include "train/examples.h"
#include "train/train_options.h"

namespace sf {
namespace {

Config task_config(const std::string& task) {
  TrainOptions o;
  o.task = task;
  auto t = make_task(task);
  EXPECT_TRUE(t.ok()) << t.error();
  return model_config(o, *t);
}

// Every task's model gets examples from that task's own generator: held out, in the vocabulary,
// within max_len, and of different lengths.
TEST(ModelExamples, EachTaskModelReadsItsOwnTask) {
  for (const std::string& name : task_names()) {
    SCOPED_TRACE(name);
    const Config c = task_config(name);
    const Task t = *make_task(name);
    const std::vector<ModelExample> ex = model_examples(c, {{"stepformer.task", name}}, 3, 0);
    ASSERT_EQ(ex.size(), 3u);
    std::set<size_t> lengths;
    const bool language_model = t.sample_many(1, 1, Split::Validation)[0].src.empty();
    for (const ModelExample& e : ex) {
      if (!language_model) {
        EXPECT_TRUE(t.held_out(e.tokens));  // an LM's example is cut at its probe
      }
      EXPECT_FALSE(e.tokens.src.empty());
      EXPECT_EQ(e.src_text, t.text(e.tokens.src));
      EXPECT_EQ(e.tgt_text, t.text(e.tokens.tgt));
      const Vocab& v = c.has_encoder() ? c.src_vocab : c.tgt_vocab;
      for (const std::string& tok : e.tokens.src) EXPECT_GE(v.id(tok), 0) << tok;
      lengths.insert(e.tokens.src.size());
      // The model reads the text it is given back as the same tokens.
      const Tokenized back = v.tokenize(e.src_text);
      ASSERT_EQ(back.ids.size(), e.tokens.src.size()) << e.src_text;
      for (size_t i = 0; i < back.ids.size(); ++i) EXPECT_EQ(v.token(back.ids[i]), e.tokens.src[i]);
    }
    EXPECT_GE(lengths.size(), 2u);
  }
  // What a lecturer sees: a date for `dates`, a prompt ending in "=" for `copy-lm`.
  const ModelExample date = model_examples(task_config("dates"), {{"stepformer.task", "dates"}}, 1, 0)[0];
  EXPECT_NE(date.src_text.find_first_of("0123456789"), std::string::npos);
  EXPECT_NE(date.src_text.find_first_of("ADFJMNOSadefghilmnoprstuvy/,"), std::string::npos) << date.src_text;
  EXPECT_EQ(date.tgt_text.size(), 10u);  // YYYY-MM-DD
  EXPECT_EQ(date.tgt_text[4], '-');
  const std::string prompt = model_example_text(task_config("copy-lm"), {{"stepformer.task", "copy-lm"}});
  ASSERT_GE(prompt.size(), 3u);
  EXPECT_EQ(prompt.substr(prompt.size() - 2), " =");
  // Another seed picks other examples; the file's own example comes first at seed 0.
  const Config copy = task_config("copy");
  EXPECT_NE(model_example_text(copy, {{"stepformer.task", "copy"}}, 1),
            model_example_text(copy, {{"stepformer.task", "copy"}}, 2));
  EXPECT_EQ(model_example_text(copy, {{"stepformer.task", "copy"}, {"stepformer.example", "7 7 1"}}), "7 7 1");
}

// A decoder-only model trained on an encoder-decoder task reads it as prompt + "=".
TEST(ModelExamples, DecoderOnlyModelOfAnEncoderDecoderTask) {
  TrainOptions o;
  o.task = "sort";
  o.arch = Arch::DecoderOnly;
  o.arch_set = true;
  auto t = options_task(o);
  ASSERT_TRUE(t.ok()) << t.error();
  const Config c = model_config(o, *t);
  const std::string text = model_example_text(c, {{"stepformer.task", "sort"}});
  ASSERT_GE(text.size(), 3u);
  EXPECT_EQ(text.back(), '=');
}

TEST(ModelExamples, HubModelsGetASentence) {
  auto gpt2 = load_model(test::fixture("hf/gpt2-tiny"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.error();
  EXPECT_EQ(model_example_text(gpt2->config, {}), "The animal didn't cross the street because it was too tired.");
  const std::vector<ModelExample> several = model_examples(gpt2->config, {}, 3);
  ASSERT_EQ(several.size(), 3u);
  EXPECT_NE(several[0].tokens.src.size(), several[1].tokens.src.size());
  // A masked LM gets its [MASK]; whatever its vocabulary covers.
  auto bert = load_model(test::fixture("hf/bert-tiny"));
  ASSERT_TRUE(bert.ok()) << bert.error();
  const std::string masked = model_example_text(bert->config, {});
  EXPECT_NE(masked.find("[MASK]"), std::string::npos) << masked;
}

TEST(ModelExamples, SymbolsWhenNothingElseIsKnown) {
  Config c = task_config("copy");  // digits, no task recorded
  EXPECT_EQ(model_example_text(c, {}), "3 1 4 1 5 9 2 6");
  c.max_len = 5;
  EXPECT_EQ(model_example_text(c, {}), "3 1 4");    // room for the framing tokens
  EXPECT_EQ(with_mask_token(c, "3 1 4"), "3 1 4");  // not a masked LM
}

// batch_masks gives each sequence the mask the batched forward builds: compared with the masks
// the encoder records, and with the rule written out (−inf on <pad> keys; decoder: and j > i).
TEST(BatchMasks, PerSequenceAsTheForwardBuildsThem) {
  const Config c = task_config("copy");
  const std::vector<Example> ex{{{"3", "5"}, {"3", "5"}, {}}, {{"7", "1", "4", "2"}, {"7", "1", "4", "2"}, {}}};
  const Batch b = make_batch(c, ex);
  const BatchMasks m = batch_masks(c, b);
  ASSERT_EQ(m.encoder.size(), 2u);
  ASSERT_EQ(m.decoder.size(), 2u);
  ASSERT_EQ(m.cross.size(), 2u);
  EXPECT_EQ(m.src_len, (std::vector<int>{2, 4}));
  EXPECT_EQ(m.tgt_len, (std::vector<int>{3, 5}));  // <s> + the answer
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < b.n; ++i)
      for (int j = 0; j < b.n; ++j)
        EXPECT_EQ(m.encoder[static_cast<size_t>(s)](i, j), j >= m.src_len[static_cast<size_t>(s)] ? kMasked : 0.0f);
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < b.m; ++i)
      for (int j = 0; j < b.m; ++j) {
        EXPECT_EQ(m.decoder[static_cast<size_t>(s)](i, j),
                  j > i || j >= m.tgt_len[static_cast<size_t>(s)] ? kMasked : 0.0f)
            << s << " " << i << " " << j;
        if (j < b.n) {
          EXPECT_EQ(m.cross[static_cast<size_t>(s)](i, j), j >= m.src_len[static_cast<size_t>(s)] ? kMasked : 0.0f);
        }
      }
  // The encoder's own recording of the same batch.
  Weights w;
  init_xavier(w, c, 3);
  const Model model = Model::make(Config(c), std::move(w));
  EncoderTrace tr;
  encode(model, b.src, b.size, &tr);
  for (size_t s = 0; s < 2; ++s) EXPECT_TRUE(tr.layers[0].self_attn.masks[s] == m.encoder[s]);
}

TEST(BatchMasks, PadKeysFollowTheConfig) {
  Config c = task_config("copy");
  EXPECT_EQ(source_pad_key(c), c.src_vocab.pad());
  EXPECT_EQ(decoder_pad_key(c), c.tgt_vocab.pad());
  c.decoder_pad_mask = false;  // GPT-2, Marian
  EXPECT_EQ(decoder_pad_key(c), -1);
  // The padding mask of real tokens is all 0 whatever their ids; the causal part is separate.
  auto gpt2 = load_model(test::fixture("hf/gpt2-tiny"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.error();
  const Tokenized t = gpt2->config.tgt_vocab.tokenize("the cat sat");
  const Mat pad = make_mask(static_cast<int>(t.ids.size()), t.ids, decoder_pad_key(gpt2->config), false);
  EXPECT_TRUE(pad.isZero());
}

// A character model reads "<pad>" written in its source as one padding token (appending padding
// to a date then costs one position per <pad>, not five).
TEST(BatchMasks, CharacterSourceKeepsWrittenPadding) {
  auto c = Vocab::make({"<pad>", "<s>", "</s>", "<unk>", "a", "b", "_", "<", ">", "p", "d"}, Tokenizer::Character, "c");
  ASSERT_TRUE(c.ok()) << c.error();
  const Tokenized t = c->tokenize("ab a <pad><pad>");
  EXPECT_EQ(t.ids, (std::vector<int>{4, 5, 6, 4, 0, 0}));
  EXPECT_TRUE(t.unknown.empty());
  const Tokenized u = c->tokenize("<s>a</s> b");
  EXPECT_EQ(u.ids, (std::vector<int>{1, 4, 2, 5}));
  EXPECT_EQ(c->tokenize("<p").ids, (std::vector<int>{7, 9}));  // not a special: characters
}

TEST(SafetensorsMetadata, HeaderOnly) {
  const Config c = task_config("copy");
  Weights w;
  init_xavier(w, c, 1);
  const Model m = Model::make(Config(c), std::move(w));
  const std::string path = test::temp_path("metadata.safetensors");
  ASSERT_TRUE(save_model(path, m, {{"stepformer.task", "copy"}}).ok());
  auto md = read_safetensors_metadata(path);
  ASSERT_TRUE(md.ok()) << md.error();
  EXPECT_EQ(md->at("stepformer.task"), "copy");
  EXPECT_EQ(md->count("stepformer.config"), 1u);
  // A file cut inside its header says so.
  const std::string bytes = test::read_text(path);
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, 20, f);
    std::fclose(f);
  }
  auto cut = read_safetensors_metadata(path);
  EXPECT_FALSE(cut.ok());
  std::remove(path.c_str());
  EXPECT_FALSE(read_safetensors_metadata(path).ok());
}

}  // namespace
}  // namespace sf
