// special_split.h — cutting a text around special tokens written in it literally ('[MASK]',
// '<|endoftext|>'), which Hugging Face tokenizers keep whole instead of tokenizing their letters.
#pragma once

#include <string>
#include <vector>

#include "text/vocab.h"

namespace sf {

struct TextSegment {
  size_t offset, length;  // bytes of the text
  int special;            // the special token's id, or -1 for ordinary text
};

// Leftmost match first; at one position the longest special wins. Empty text gives no segment.
std::vector<TextSegment> split_specials(const Vocab& v, const std::string& text, const std::vector<int>& specials);

}  // namespace sf
