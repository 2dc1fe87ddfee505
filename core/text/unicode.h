// unicode.h — the few Unicode facts the subword tokenizers need: UTF-8 code points, general
// categories (\p{L}, \p{N}, C*, P*, Mn, Zs), the White_Space property, lowercase and NFD.
//
// Categories, case mapping and NFD come from ICU (Debian libicu-dev, found with pkg-config); the
// references (tests/reference/hf/tokenizers.py) use Python's unicodedata. The two agree except
// for characters assigned after Unicode 14, which the fixtures avoid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf::unicode {

// One code point of a UTF-8 string and where its bytes are. A byte that does not start a valid,
// shortest-form sequence is a code point of its own: U+FFFD, 1 byte long (so no input is lost).
struct CodePoint {
  char32_t c;
  uint32_t offset;  // first byte in the string
  uint32_t length;  // bytes, 1..4
};

std::vector<CodePoint> decode(const std::string& utf8);
void append_utf8(std::string& out, char32_t c);
std::string encode(const std::u32string& text);
// Valid UTF-8 kept; every invalid byte becomes U+FFFD (Python's errors="replace" per byte).
std::string repair_utf8(const std::string& bytes);
bool valid_utf8(const std::string& bytes);

bool is_letter(char32_t c);           // \p{L}: Lu Ll Lt Lm Lo
bool is_number(char32_t c);           // \p{N}: Nd Nl No
bool is_white_space(char32_t c);      // the White_Space property (PropList.txt), i.e. regex \s
bool is_other_category(char32_t c);   // C*: Cc Cf Cs Co Cn
bool is_punctuation(char32_t c);      // P*: Pc Pd Ps Pe Pi Pf Po
bool is_space_separator(char32_t c);  // Zs
bool is_nonspacing_mark(char32_t c);  // Mn

// Full lowercase mapping with the root locale (Python's str.lower(): 'İ' -> 'i̇', final sigma).
std::u32string lower(const std::u32string& text);
// Canonical decomposition (NFD).
std::u32string nfd(const std::u32string& text);
// Canonical composition (NFC) of UTF-8 text; an ill-formed byte becomes U+FFFD.
std::string nfc(const std::string& utf8);

}  // namespace sf::unicode
