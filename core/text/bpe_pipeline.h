// bpe_pipeline.h — a Hugging Face tokenizer.json BPE tokenizer as a Vocab engine, in the order of
// tokenizers' TokenizerImpl::encode: added tokens matched whole in the raw text (then, for those
// marked "normalized", in the normalized text), the normalizers, the pre-tokenizers, the BPE model
// on each pre-token; and the decoder for detokenize. text/tokenizer_json.h reads the file into a
// PipelineSpec; what is not listed here is refused there by name.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/bpe_merges.h"
#include "text/regex_split.h"
#include "text/vocab.h"

namespace sf {

// An entry of tokenizer.json's added_tokens, matched whole (leftmost, longest at a position).
struct AddedToken {
  int id = -1;
  std::string content;
  bool normalized = false;  // matched in the normalized text instead of the raw text
  bool lstrip = false;      // the match takes the white space before it
  bool rstrip = false;      // the match takes the white space after it
};

// normalizers: NFC; Prepend(prepend) to a non-empty text; Replace(String pattern, content).
struct NormalizerStep {
  enum Kind { Nfc, Prepend, Replace } kind;
  std::string pattern, content;  // Prepend: content; Replace: every `pattern` -> `content`
};

// pre_tokenizers, applied to every piece the previous ones left:
//   ByteLevel  [a space before a piece that lacks one] + GPT-2's regex (use_regex); the pieces are
//              then spelled in GPT-2's byte alphabet by the model (it must be the last step);
//   Split      a regex or literal pattern, the matches kept as `behavior` says (invert: the text
//              between them is the "match");
//   Digits     each digit (\p{N}) a piece of its own, or each run of digits;
//   Metaspace  ' ' -> replacement, the replacement prepended (always / only at the text's start /
//              never) and the piece split before each replacement (split).
struct PreTokenizerStep {
  enum Kind { ByteLevel, Split, Digits, Metaspace } kind;
  bool add_prefix_space = false, use_regex = true;         // ByteLevel
  std::shared_ptr<const SplitRegex> regex;                 // Split
  SplitBehavior behavior = SplitBehavior::Isolated;        // Split
  bool invert = false;                                     // Split
  bool individual_digits = false;                          // Digits
  std::string replacement;                                 // Metaspace
  enum Prepend { Always, First, Never } prepend = Always;  // Metaspace
  bool split = true;                                       // Metaspace
};

// decoders, applied in order to the list of token strings (tokenizers' decode_chain):
//   ByteLevel     each token's byte-alphabet characters -> bytes, all joined (lossy UTF-8);
//   Metaspace     replacement -> ' ', the first token's leading one dropped unless prepend Never;
//   Replace       every `pattern` -> `content` in each token;
//   ByteFallback  runs of '<0xNN>' tokens -> their bytes (U+FFFD per byte unless valid UTF-8);
//   Fuse          all tokens joined into one;
//   Strip         up to `start` leading and `stop` trailing `content` characters cut from each.
struct DecoderStep {
  enum Kind { ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip } kind;
  std::string pattern, content;
  PreTokenizerStep::Prepend prepend = PreTokenizerStep::Always;
  int start = 0, stop = 0;
};

// model (type BPE). `byte_level`: the pre-tokenizers end with ByteLevel, so a word's symbols are
// its bytes in GPT-2's alphabet; otherwise its characters, a character missing from the vocabulary
// being its '<0xNN>' byte tokens (byte_fallback, when all exist), else unk (consecutive ones fused
// into one with fuse_unk), else dropped. ignore_merges: a word that is itself a token is taken
// whole.
struct BpeModelSpec {
  bool byte_level = false, byte_fallback = false, fuse_unk = false, ignore_merges = false;
  int unk = -1;
};

struct PipelineSpec {
  std::vector<AddedToken> added;
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  BpeModelSpec model;
  std::vector<std::array<int, 3>> merges;  // (left, right, merged) ids, rank order
  std::vector<DecoderStep> decoders;       // empty: tokens joined with spaces
};

class BpePipeline : public SubwordTokenizer {
 public:
  // `v`: the vocabulary the ids number (for the byte tokens); `spec` checked by the reader.
  BpePipeline(const Vocab& v, PipelineSpec spec);

  void tokenize(const Vocab& v, const std::string& text, Tokenized& out) const override;
  std::string detokenize(const Vocab& v, const std::vector<int>& ids) const override;
  std::string display(const std::string& token) const override;
  std::string bytes(const std::string& token) const override;

  // The normalizers applied to one text (exposed for tests).
  std::string normalize(const std::string& text) const;
  // The pre-tokens of one normalized text, before byte-level spelling (exposed for tests);
  // `at_start`: the text begins the input (Metaspace's prepend_scheme "first").
  std::vector<std::string> pre_tokenize(const std::string& text, bool at_start) const;

 private:
  struct Piece {
    size_t begin, end;
    int added;  // an added token's id, or -1
  };
  std::vector<Piece> match_added(const std::string& text, bool normalized) const;
  std::vector<int> model(const Vocab& v, const std::string& word) const;  // one pre-token -> ids
  std::vector<int> symbols(const Vocab& v, const std::string& word) const;

  PipelineSpec spec_;
  BpeMerges merges_;
  std::array<int, 256> byte_ids_{};      // byte_level: the alphabet token of each byte
  std::array<int, 256> fallback_ids_{};  // byte_fallback: '<0xNN>' (-1 where absent)
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>> cache_;  // pre-token -> ids
};

}  // namespace sf
