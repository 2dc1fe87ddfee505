// regex_split.h — the pieces of Hugging Face's Split pre-tokenizer (tokenizers'
// pre_tokenizers/split.rs, tokenizer/pattern.rs and normalizer.rs `split`), with ICU regex.
//
// Hugging Face compiles a Split "Regex" with Oniguruma; ICU's syntax is the same for what the
// hub's patterns use (\p{L}, \p{N}, {1,3}, (?i:…), (?!…), classes). One difference is bridged:
// ICU's \s is [\t\n\f\r\p{Z}], Oniguruma's (and Rust's, and GPT-2's) is the White_Space property
// (adding U+000B and U+0085), so \s and \S are compiled as \p{White_Space} and \P{White_Space}.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace sf {

// What happens to the matches of a Split (SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// One piece of a text: bytes [begin, end), and whether it is a match of the pattern.
struct Span {
  size_t begin, end;
  bool match;
};

// Every match and the text between, in order, covering `text` (pattern.rs find_matches); an
// empty text gives one empty non-match.
using Matches = std::vector<Span>;

// The pieces `behavior` keeps (normalizer.rs split): byte ranges of the text, in order.
std::vector<std::pair<size_t, size_t>> split_by(const Matches& m, SplitBehavior behavior);

class SplitRegex {
 public:
  // `pattern` as tokenizer.json writes it; `literal`: a "String" pattern, matched as is. Fails
  // with ICU's message and the position for a pattern ICU cannot compile.
  static Result<SplitRegex> compile(const std::string& pattern, bool literal, const std::string& what);
  // The matches in UTF-8 `text` (byte offsets; an ill-formed byte reads as U+FFFD).
  Matches find(const std::string& text) const;

 private:
  struct Compiled;  // ICU's RegexPattern (kept out of this header)
  std::shared_ptr<const Compiled> re_;
};

}  // namespace sf
