// sentencepiece.h — a SentencePiece model (.spm, Kudo & Richardson 2018) as a Vocab engine, through
// Debian's libsentencepiece. Marian keeps the model's pieces and the ids apart: the .spm splits the
// text, a separate vocab.json numbers the pieces, so a piece missing there becomes <unk>.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "text/vocab.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace sf {

// Marian's multilingual models take a target-language code first (">>fr<< Bonjour"): as
// transformers' MarianTokenizer, a code at the start (Python re `>>.+<<`) is one token of its own,
// and every match is removed from the text SentencePiece sees. Returns the code (or nothing).
std::vector<std::string> split_language_code(const std::string& text, std::string& rest);

class SentencePiece : public SubwordTokenizer {
 public:
  // Reads a serialized SentencePiece model (`bytes`, as read from `what`).
  static Result<std::shared_ptr<const SentencePiece>> load(const std::string& bytes, const std::string& what);

  void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const override;
  std::string detokenize(const Vocab& v, const std::vector<int>& ids) const override;

 private:
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace sf
