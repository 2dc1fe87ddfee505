// fuzz_tokenizers.cpp — libFuzzer harness: the Hugging Face tokenizer file loaders
// (text/hf_tokenizers.h) on untrusted files, and tokenize/detokenize on untrusted text.
// Input: byte 0 picks what (low two bits, and bit 3) and an option (bit 2); the rest is split at
// NUL bytes:
//   0  byte-level BPE:  vocab.json NUL merges.txt NUL text
//                       (bit 2: tokenizer.json NUL text)
//   1  WordPiece:       vocab.txt NUL text                  (bit 2: lowercase)
//   2  SentencePiece:   vocab.json NUL text with the fixture's source.spm
//                       (bit 2: the .spm bytes come first: spm NUL vocab.json NUL text)
//   3  the three fixture tokenizers (tests/fixtures/hf) and the decoder families' fixture
//      tokenizers (tests/fixtures/tokenizers) on the text
//   bit 3 set: a decoder family's tokenizer (text/tokenizer_json.h):
//                       tokenizer.json NUL tokenizer_config.json NUL text
//                       (bit 2: tokenizer_config.json NUL text NUL tokenizer.model, the model last
//                       since it holds NUL bytes)
// Whatever loads must tokenize into consistent, in-range tokens; byte-level BPE must give the
// text back (invalid UTF-8 repaired), and so must the fixtures' SentencePiece BPE for text without
// special tokens. A broken invariant aborts, which libFuzzer reports.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "text/hf_tokenizers.h"
#include "text/token_display.h"
#include "text/tokenizer_json.h"
#include "text/unicode.h"

namespace {

std::string fixture(const char* rel) { return std::string(STEPFORMER_SOURCE_DIR) + "/tests/fixtures/hf/" + rel; }
std::string tok_fixture(const char* rel) {
  return std::string(STEPFORMER_SOURCE_DIR) + "/tests/fixtures/tokenizers/" + rel;
}

// The files the loaders read, in a scratch folder made once per process and removed at exit.
std::string scratch(const char* name, const std::string& content) {
  static const sf::test::ScratchDir s("fuzz_tokenizers");
  const std::string path = s.path(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  return path;
}

std::vector<std::string> split_nul(const std::string& s, size_t parts) {
  std::vector<std::string> out;
  size_t a = 0;
  while (out.size() + 1 < parts) {
    const size_t e = s.find('\0', a);
    if (e == std::string::npos) break;
    out.push_back(s.substr(a, e - a));
    a = e + 1;
  }
  out.push_back(s.substr(a));
  out.resize(parts);  // missing parts are empty
  return out;
}

// `lossless`: byte-level BPE must give the text back (GPT-2's files; a tokenizer.json may normalize).
void check(const sf::Vocab& v, const std::string& text, bool lossless = true) {
  for (const sf::Tokenized& t : {v.tokenize(text), v.encode(text)}) {
    const size_t n = t.ids.size();
    if (t.pieces.size() != n || t.display.size() != n || t.word_start.size() != n) std::abort();
    for (int id : t.ids)
      if (id < 0 || id >= v.size()) std::abort();
    for (int u : t.unknown)
      if (u < 0 || static_cast<size_t>(u) >= n || t.ids[static_cast<size_t>(u)] != v.unk()) std::abort();
    (void)v.detokenize(t.ids);
  }
  if (lossless && v.tokenizer() == sf::Tokenizer::ByteBpe &&
      v.detokenize(v.tokenize(text).ids) != sf::unicode::repair_utf8(text))
    std::abort();
  for (int id : {-1, 0, v.size() - 1, v.size()}) (void)v.display(id);
  const std::vector<int> ids = v.tokenize(text).ids;
  if (sf::display_tokens(v, ids).size() != ids.size()) std::abort();
  if (const sf::Framing* f = v.framing())
    for (const std::vector<int>* side : {&f->before, &f->after})
      for (int id : *side)
        if (id < 0 || id >= v.size()) std::abort();
}

// A fixture's SentencePiece BPE loses nothing (byte fallback) on text without its specials;
// `leading_space_kept` false: Metaspace "first" + Strip, which loses a leading space.
void check_lossless(const sf::Vocab& v, const std::string& text, bool leading_space_kept = true) {
  check(v, text);
  if (!leading_space_kept && !text.empty() && text[0] == ' ') return;
  // '<' may start a special token; '▁' (U+2581) reads as a space.
  if (!sf::unicode::valid_utf8(text) || text.find('<') != std::string::npos ||
      text.find("\xE2\x96\x81") != std::string::npos)
    return;
  if (v.detokenize(v.tokenize(text).ids) != text) {
    fprintf(stderr, "LOSSY [%s] -> [%s]\n", text.c_str(), v.detokenize(v.tokenize(text).ids).c_str());
    std::abort();
  }
}

void check(const sf::Result<sf::Vocab>& v, const std::string& text, bool lossless = true) {
  if (v) check(*v, text, lossless);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int what = data[0] & 3;
  const bool option = data[0] & 4;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 8) {
    const auto p = split_nul(rest, 3);
    if (option) {
      check(
          sf::load_sentencepiece_bpe(scratch("tokenizer.model", p[2]), scratch("tokenizer_config.json", p[0]), "llama"),
          p[1]);
    } else {
      const std::string config = scratch("tokenizer_config.json", p[1]);
      auto t = sf::load_tokenizer_json(scratch("tokenizer.json", p[0]), config, what == 1 ? "llama" : "qwen2");
      if (t) check(t->vocab, p[2], /*lossless=*/false);
    }
    return 0;
  }
  if (what == 0 && option) {
    const auto p = split_nul(rest, 2);
    check(sf::load_byte_bpe_tokenizer_json(scratch("tokenizer.json", p[0])), p[1]);
  } else if (what == 0) {
    const auto p = split_nul(rest, 3);
    check(sf::load_byte_bpe(scratch("vocab.json", p[0]), scratch("merges.txt", p[1])), p[2]);
  } else if (what == 1) {
    const auto p = split_nul(rest, 2);
    check(sf::load_wordpiece(scratch("vocab.txt", p[0]), option), p[1]);
  } else if (what == 2) {
    if (option) {
      const auto p = split_nul(rest, 3);
      check(sf::load_sentencepiece(scratch("source.spm", p[0]), scratch("vocab.json", p[1])), p[2]);
    } else {
      const auto p = split_nul(rest, 2);
      check(sf::load_sentencepiece(fixture("marian-tiny/source.spm"), scratch("vocab.json", p[0])), p[1]);
    }
  } else {
    static const auto gpt2 = sf::load_byte_bpe(fixture("gpt2-tiny/vocab.json"), fixture("gpt2-tiny/merges.txt"));
    static const auto bert = sf::load_wordpiece(fixture("bert-tiny/vocab.txt"), true);
    static const auto marian =
        sf::load_sentencepiece(fixture("marian-tiny/target.spm"), fixture("marian-tiny/vocab.json"));
    static const auto llama = sf::load_hf_tokenizer(tok_fixture("llama-sp"), "llama");
    static const auto llama_json = sf::load_hf_tokenizer(tok_fixture("llama-sp-json"), "llama");
    static const auto llama_first = sf::load_hf_tokenizer(tok_fixture("llama-sp-first"), "mistral");
    if (!gpt2 || !bert || !marian || !llama || !llama_json || !llama_first) std::abort();  // the fixtures must load
    check(gpt2, rest);
    check(bert, rest);
    check(marian, rest);
    check_lossless(llama->vocab, rest);
    check_lossless(llama_json->vocab, rest);
    check_lossless(llama_first->vocab, rest, /*leading_space_kept=*/false);
  }
  return 0;
}
