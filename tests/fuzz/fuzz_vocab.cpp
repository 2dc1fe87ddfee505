// fuzz_vocab.cpp — libFuzzer harness: building a vocabulary from untrusted token lists and
// tokenising untrusted text with it. Input: byte 0 picks the tokenizer (even: word, odd:
// character); then tokens, one per line, up to a NUL byte; the rest is the text. The four
// special tokens are appended half of the time so that most inputs make a valid vocabulary.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "text/vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const sf::Tokenizer kind = data[0] % 2 ? sf::Tokenizer::Character : sf::Tokenizer::Word;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t nul = rest.find('\0');
  const std::string list = rest.substr(0, nul), text = nul == std::string::npos ? "" : rest.substr(nul + 1);
  std::vector<std::string> tokens;
  size_t a = 0;
  while (a <= list.size()) {
    const size_t e = std::min(list.find('\n', a), list.size());
    tokens.push_back(list.substr(a, e - a));
    a = e + 1;
  }
  if (data[0] & 2)
    for (const char* s : {"<pad>", "<s>", "</s>", "<unk>"}) tokens.push_back(s);
  auto v = sf::Vocab::make(tokens, kind, "fuzz");
  if (!v) return 0;
  const sf::Tokenized t = v->tokenize(text);
  (void)v->detokenize(t.ids);
  for (int id : {-1, 0, v->size(), 1 << 30}) (void)v->token(id);
  return 0;
}
