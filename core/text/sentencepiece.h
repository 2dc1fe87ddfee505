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
  // Reads a serialized SentencePiece model (`bytes`, as read from `what`) for Marian: language
  // codes split off, pieces numbered by a separate vocab.json.
  static Result<std::shared_ptr<const SentencePiece>> load(const std::string& bytes, const std::string& what);
  // A copy for a model whose pieces are the vocabulary (Llama's tokenizer.model, numbered by
  // pieces()): the text is cut around the `specials` first (LlamaTokenizer keeps '<s>', '</s>',
  // '<unk>' written in the text whole), each part encoded on its own (each gets SentencePiece's
  // '▁' prefix); no language codes.
  std::shared_ptr<const SentencePiece> with_own_ids(std::vector<int> specials) const;
  // The model's pieces by id (the vocabulary of load_own_ids).
  std::vector<std::string> pieces() const;
  // The model's own special pieces; empty where the model has none.
  std::string bos_piece() const, eos_piece() const, unk_piece() const, pad_piece() const;

  void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const override;
  std::string detokenize(const Vocab& v, const std::vector<int>& ids) const override;
  std::string display(const std::string& token) const override;
  std::string bytes(const std::string& token) const override;

 private:
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> sp_;
  bool own_ids_ = false;  // load_own_ids: no language codes, specials kept whole
  std::vector<int> specials_;
};

}  // namespace sf
