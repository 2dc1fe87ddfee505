// vocab.h — token strings <-> ids, the special tokens of each tokenizer kind, and tokenize().
//
// stepformer's own models use the Word and Character tokenizers and need the four specials
// <pad> <s> </s> <unk>. Hugging Face checkpoints bring their own tokenizers (text/hf_tokenizers.h
// loads them): byte-level BPE (GPT-2), WordPiece (BERT) and SentencePiece (Marian), each with its
// own set of special tokens, looked up by name.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"

namespace sf {

// How text becomes tokens. `Word`: whitespace-separated vocabulary entries. `Character`: every
// character is a token and a space is the token "_" (used by the dates task). `ByteBpe`: GPT-2's
// byte-level BPE (GPT-2's vocab.json + merges.txt, and every byte-level tokenizer.json: GPT-2,
// SmolLM2, Qwen2, Llama 3). `WordPiece`: BERT's basic tokenizer + greedy longest-match "##" pieces.
// `SentencePiece`: a SentencePiece model's pieces looked up in a separate vocab.json (Marian).
// `SentencePieceBpe`: SentencePiece-style BPE with byte fallback whose pieces are the ids (Llama 2,
// TinyLlama, Mistral: tokenizer.model, or tokenizer.json with the '▁' normalizer).
enum class Tokenizer { Word, Character, ByteBpe, WordPiece, SentencePiece, SentencePieceBpe };

// The special tokens named by a tokenizer's own files (tokenizer_config.json, the SentencePiece
// model), for Vocab::make; an empty name: the tokenizer has none.
struct SpecialNames {
  std::string bos, eos, pad, unk;
};

// The special tokens put around a decoder-only model's prompt (Vocab::frame) and why: one sentence
// per added token, or one saying why none is added, for a panel to show ("<s> added:
// tokenizer_config.json add_bos_token = true").
struct Framing {
  std::vector<int> before, after;  // ids put before / after the text's tokens
  std::vector<std::string> reasons;
  // True when these are what the tokenizer itself adds (Hugging Face's tokenizer(text) gives the
  // same ids; Vocab::encode adds them); false when stepformer adds them for the model (GPT-2's
  // leading <|endoftext|>, which its tokenizer does not add).
  bool tokenizer_adds = true;
};

// One text as tokens; every vector has one entry per token (n).
struct Tokenized {
  std::vector<int> ids;  // (n) vocabulary ids
  // (n) the text each id came from, in the tokenizer's own spelling: the vocabulary entry
  // ('Ġworld', '##ing', '▁Haus', '[CLS]'), except for a position listed in `unknown`, where it is
  // the input that had no entry (BERT: the whole word, 'ﬁne'; Marian: 'ö'; Word: the word).
  std::vector<std::string> pieces;
  // (n) what a panel shows for the token: the vocabulary entry made readable — GPT-2's byte
  // alphabet decoded ('Ġworld' -> ' world', a lone UTF-8 byte -> '<0xC3>'), WordPiece and
  // SentencePiece entries as they are ('##ing', '▁Haus'), '[UNK]' / '<unk>' for unknown input.
  std::vector<std::string> display;
  // (n) 1 when the token begins a word: the first piece of a pre-tokenised word (GPT-2: of a
  // regex match, which carries its leading space; WordPiece: not '##'; SentencePiece: starts with
  // '▁' or the text), every special token and every Word/Character token. 0 for continuations.
  std::vector<char> word_start;
  std::vector<int> unknown;  // positions mapped to <unk> / [UNK]
};

// The engine behind a subword Vocab (text/byte_bpe.h, text/wordpiece.h, text/sentencepiece.h).
// Immutable after loading and safe to share between copies of a Vocab and between threads.
class Vocab;
class SubwordTokenizer {
 public:
  virtual ~SubwordTokenizer() = default;
  // Appends the tokens of `text` to `out` (no framing specials; see Vocab::encode).
  virtual void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const = 0;
  virtual std::string detokenize(const Vocab& v, const std::vector<int>& ids) const = 0;
  // The readable form of one vocabulary entry (Tokenized::display).
  virtual std::string display(const std::string& token) const { return token; }
  // The bytes one vocabulary entry spells, as a panel writes them: GPT-2's byte alphabet decoded
  // ('Ġworld' -> " world", 'Ã' -> the byte 0xC3), a byte-fallback piece's byte ('<0xE4>' -> 0xE4),
  // any other entry as it is. May be part of a UTF-8 character (text/token_display.h joins those).
  virtual std::string bytes(const std::string& token) const { return token; }
};

class Vocab {
 public:
  Vocab() = default;
  // Fails when a token is empty or repeats, or a special token the kind requires is missing:
  //   Word, Character: <pad> <s> </s> <unk>
  //   ByteBpe:         <|endoftext|> (= bos = eos; no pad, no unk)
  //   WordPiece:       [UNK] [CLS] [SEP] required, [PAD] [MASK] when present (no bos/eos)
  //   SentencePiece:   <pad> </s> <unk> (no bos)
  //   SentencePieceBpe: <s> </s> <unk> (the SentencePiece defaults)
  // A subword kind tokenizes with the engine its loader sets; without one it splits like `Word`.
  static Result<Vocab> make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what);
  // The same with the specials the tokenizer files name (each must be a token) instead of the
  // kind's table; for the tokenizer.json / tokenizer.model loaders.
  static Result<Vocab> make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what,
                            const SpecialNames& names);
  // For the loaders (text/hf_tokenizers.cpp): the engine that tokenizes this vocabulary.
  void set_engine(std::shared_ptr<const SubwordTokenizer> engine) { engine_ = std::move(engine); }
  // For the loaders: rows of a model's embedding table past the tokenizer's last token, up to
  // `rows` ids in all, named '<unused N>' (N the id; made unique if a token already has the name).
  // The tokenizer never produces them; a model may still predict them.
  void add_unused(int rows);
  // For the loaders: the specials Hugging Face's tokenizer(text) puts around a text, and why.
  void set_framing(Framing f) { framing_ = std::make_shared<const Framing>(std::move(f)); }

  int size() const { return static_cast<int>(tokens_.size()); }
  const std::string& token(int id) const;  // "<?>" for an id out of range
  int id(const std::string& token) const;  // -1 when absent
  const std::vector<std::string>& tokens() const { return tokens_; }
  Tokenizer tokenizer() const { return tokenizer_; }
  // Special token ids, -1 where the kind has none (see make()).
  int pad() const { return pad_; }
  int bos() const { return bos_; }
  int eos() const { return eos_; }
  int unk() const { return unk_; }
  int cls() const { return cls_; }
  int sep() const { return sep_; }
  int mask() const { return mask_; }
  bool is_special(int id) const;
  // The readable form of a vocabulary entry (Tokenized::display).
  std::string display(int id) const;
  // The bytes a vocabulary entry spells (SubwordTokenizer::bytes); specials as they are.
  std::string bytes(int id) const;

  // Splits text and maps each piece to its id; pieces not in the vocabulary become <unk> and are
  // listed in `unknown`. Never fails: the caller decides whether unknown words are acceptable.
  // Special tokens written literally in the text ('<|endoftext|>', '[MASK]') are kept whole for
  // the subword kinds, and '<pad>', '<s>', '</s>', '<unk>' for `Character` (spaces around them
  // dropped). No framing: see encode().
  Tokenized tokenize(const std::string& text) const;
  // tokenize() plus the specials the model family puts around one text, as Hugging Face's
  // tokenizer(text) does: a Framing the tokenizer adds (framing()), else WordPiece [CLS] … [SEP];
  // SentencePiece … </s>; nothing for the others.
  Tokenized encode(const std::string& text) const;
  // What a decoder-only model's prompt gets around it and why, when the loader said so (the
  // Hugging Face decoder families: GPT-2, Llama, Qwen2, Mistral, Pythia); null for the others.
  const Framing* framing() const { return framing_.get(); }
  // ids framed as framing() says; ids unchanged when there is no framing.
  std::vector<int> frame(const std::vector<int>& ids) const;
  // Joins ids back into text (no specials dropped; the caller chooses what to pass). Byte-level
  // BPE restores the exact bytes (invalid UTF-8 -> U+FFFD); WordPiece joins words with spaces and
  // glues '##' pieces; SentencePiece turns '▁' into spaces.
  std::string detokenize(const std::vector<int>& ids) const;

  // Used by the engines: appends one token to `t`.
  void push(Tokenized& t, int id, std::string piece, bool word_start) const;

 private:
  static Result<Vocab> indexed(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;
  Tokenizer tokenizer_ = Tokenizer::Word;
  std::shared_ptr<const SubwordTokenizer> engine_;
  std::shared_ptr<const Framing> framing_;
  int pad_ = -1, bos_ = -1, eos_ = -1, unk_ = -1, cls_ = -1, sep_ = -1, mask_ = -1;
};

}  // namespace sf
