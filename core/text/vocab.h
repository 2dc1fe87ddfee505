// vocab.h — token strings <-> ids, with the four special tokens every vocabulary must hold.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"

namespace sf {

// How text becomes tokens. `word`: whitespace-separated vocabulary entries. `character`: every
// character is a token and a space is the token "_" (used by the dates task).
enum class Tokenizer { Word, Character };

struct Tokenized {
  std::vector<int> ids;              // (n)
  std::vector<std::string> pieces;   // (n) the text each id came from
  std::vector<int> unknown;          // positions mapped to <unk>
};

class Vocab {
 public:
  Vocab() = default;
  // Fails when a token repeats or a special token is missing.
  static Result<Vocab> make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what);

  int size() const { return static_cast<int>(tokens_.size()); }
  const std::string& token(int id) const;  // "<?>" for an id out of range
  int id(const std::string& token) const;  // -1 when absent
  const std::vector<std::string>& tokens() const { return tokens_; }
  Tokenizer tokenizer() const { return tokenizer_; }
  int pad() const { return pad_; }
  int bos() const { return bos_; }
  int eos() const { return eos_; }
  int unk() const { return unk_; }

  // Splits text and maps each piece to its id; pieces not in the vocabulary become <unk> and are
  // listed in `unknown`. Never fails: the caller decides whether unknown words are acceptable.
  Tokenized tokenize(const std::string& text) const;
  // Joins ids back into text (no specials dropped; the caller chooses what to pass).
  std::string detokenize(const std::vector<int>& ids) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;
  Tokenizer tokenizer_ = Tokenizer::Word;
  int pad_ = -1, bos_ = -1, eos_ = -1, unk_ = -1;
};

}  // namespace sf
