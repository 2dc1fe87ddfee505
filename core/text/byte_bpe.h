// byte_bpe.h — GPT-2's byte-level BPE (Radford et al. 2019; OpenAI's encoder.py).
//
// Text -> pre-tokenised words (the GPT-2 regex) -> each word's UTF-8 bytes spelled in the
// bytes_to_unicode alphabet -> merges applied lowest rank first -> vocabulary ids. A literal
// '<|endoftext|>' in the text is that one token (Hugging Face's default).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/bpe_merges.h"
#include "text/vocab.h"

namespace sf {

// GPT-2's reversible byte -> printable character table: the 188 printable Latin-1 bytes map to
// themselves, the other 68 in byte order to U+0100, U+0101, … (space -> 'Ġ' U+0120).
const std::vector<char32_t>& bytes_to_unicode();

// The bytes a string in the byte alphabet spells; a character outside the alphabet (an added
// token's) is kept as its UTF-8.
std::string byte_alphabet_to_bytes(const std::string& s);
// Bytes spelled in the byte alphabet, one character per byte ("é" = C3 A9 -> "Ã©").
std::string bytes_to_byte_alphabet(const std::string& bytes);

// The GPT-2 pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (leftmost-first alternation, \s = Unicode White_Space) -> the words as byte ranges of `text`.
// Invalid UTF-8 bytes count as "other" characters and stay in the words unchanged.
std::vector<std::pair<size_t, size_t>> gpt2_pretokenize(const std::string& text);  // (offset, length)

class ByteBpe : public SubwordTokenizer {
 public:
  // `byte_ids[b]`: the id of byte b's one-character token. `merges`: (left id, right id, merged
  // id) in rank order (rank = index). `specials`: ids kept whole when written in the text.
  ByteBpe(std::vector<int> byte_ids, const std::vector<std::array<int, 3>>& merges, std::vector<int> specials);

  void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const override;
  std::string detokenize(const Vocab& v, const std::vector<int>& ids) const override;
  std::string display(const std::string& token) const override;
  std::string bytes(const std::string& token) const override { return byte_alphabet_to_bytes(token); }

 private:
  std::vector<int> bpe(const std::string& word) const;  // one pre-tokenised word -> ids

  std::vector<int> byte_ids_;  // (256)
  BpeMerges merges_;
  std::vector<int> specials_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>> cache_;  // word bytes -> ids
};

}  // namespace sf
