// sentencepiece.h — a SentencePiece model (.spm, Kudo & Richardson 2018) as a Vocab engine, through
// Debian's libsentencepiece. Marian keeps the model's pieces and the ids apart: the .spm splits the
// text, a separate vocab.json numbers the pieces, so a piece missing there becomes <unk>.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace sf {

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
