// wordpiece.h — BERT's tokenizer (Devlin et al. 2019; google-research/bert tokenization.py):
// BasicTokenizer (clean controls, space out CJK ideographs, split on white space, lowercase + NFD +
// drop accents when uncased, split off punctuation) then greedy longest-match-first WordPiece
// with '##' continuations; a word with no split, or longer than 100 characters, is [UNK] whole.
#pragma once

#include <string>
#include <vector>

#include "text/vocab.h"

namespace sf {

class WordPiece : public SubwordTokenizer {
 public:
  // `lowercase`: the uncased models' do_lower_case (tokenizer_config.json). `specials`: ids kept
  // whole when written in the text ('[MASK]').
  WordPiece(bool lowercase, std::vector<int> specials) : lowercase_(lowercase), specials_(std::move(specials)) {}

  void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const override;
  std::string detokenize(const Vocab& v, const std::vector<int>& ids) const override;

  // BasicTokenizer alone: text -> words (UTF-32), before WordPiece.
  std::vector<std::u32string> basic_tokenize(const std::string& text) const;

 private:
  static constexpr size_t kMaxCharsPerWord = 100;
  void wordpiece(const Vocab& v, const std::u32string& word, Tokenized& out) const;

  bool lowercase_;
  std::vector<int> specials_;
};

}  // namespace sf
