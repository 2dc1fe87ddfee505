// fuzz_tokenizers.cpp — libFuzzer harness: the Hugging Face tokenizer file loaders
// (text/hf_tokenizers.h) on untrusted files, and tokenize/detokenize on untrusted text.
// Input: byte 0 picks what (low two bits) and an option (bit 2); the rest is split at NUL bytes:
//   0  byte-level BPE:  vocab.json NUL merges.txt NUL text
//                       (bit 2: tokenizer.json NUL text)
//   1  WordPiece:       vocab.txt NUL text                  (bit 2: lowercase)
//   2  SentencePiece:   vocab.json NUL text with the fixture's source.spm
//                       (bit 2: the .spm bytes come first: spm NUL vocab.json NUL text)
//   3  the three fixture tokenizers (tests/fixtures/hf) on the text
// Whatever loads must tokenize into consistent, in-range tokens; byte-level BPE must give the
// text back (invalid UTF-8 repaired). A broken invariant aborts, which libFuzzer reports.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "text/hf_tokenizers.h"
#include "text/unicode.h"

namespace {

std::string fixture(const char* rel) { return std::string(STEPFORMER_SOURCE_DIR) + "/tests/fixtures/hf/" + rel; }

// A scratch folder for the files the loaders read: made once per process, removed at exit.
struct Scratch {
  std::string dir;
  std::vector<std::string> files;
  Scratch() {
    char d[] = "/tmp/sf_fuzz_tok_XXXXXX";
    if (!mkdtemp(d)) std::abort();
    dir = d;
  }
  ~Scratch() {
    for (const std::string& f : files) std::remove(f.c_str());
    rmdir(dir.c_str());
  }
};

std::string scratch(const char* name, const std::string& content) {
  static Scratch s;
  const std::string path = s.dir + "/" + name;
  if (std::find(s.files.begin(), s.files.end(), path) == s.files.end()) s.files.push_back(path);
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

void check(const sf::Vocab& v, const std::string& text) {
  for (const sf::Tokenized& t : {v.tokenize(text), v.encode(text)}) {
    const size_t n = t.ids.size();
    if (t.pieces.size() != n || t.display.size() != n || t.word_start.size() != n) std::abort();
    for (int id : t.ids)
      if (id < 0 || id >= v.size()) std::abort();
    for (int u : t.unknown)
      if (u < 0 || static_cast<size_t>(u) >= n || t.ids[static_cast<size_t>(u)] != v.unk()) std::abort();
    (void)v.detokenize(t.ids);
  }
  if (v.tokenizer() == sf::Tokenizer::ByteBpe && v.detokenize(v.tokenize(text).ids) != sf::unicode::repair_utf8(text))
    std::abort();
  for (int id : {-1, 0, v.size() - 1, v.size()}) (void)v.display(id);
}

void check(const sf::Result<sf::Vocab>& v, const std::string& text) {
  if (v) check(*v, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int what = data[0] & 3;
  const bool option = data[0] & 4;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
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
    if (!gpt2 || !bert || !marian) std::abort();  // the fixtures must load
    check(gpt2, rest);
    check(bert, rest);
    check(marian, rest);
  }
  return 0;
}
