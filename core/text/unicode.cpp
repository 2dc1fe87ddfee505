// unicode.cpp — UTF-8 by hand (invalid bytes must survive byte-level BPE), everything else via ICU.
#include "text/unicode.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace sf::unicode {

namespace {

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Length of the valid sequence starting at s[i] (0 when invalid) and, for an invalid one, how many
// bytes form its "maximal subpart" (a lead byte plus the continuation bytes that could still have
// completed it), which decoders such as Python's replace by a single U+FFFD.
int sequence(const std::string& s, size_t i, char32_t& c, int& subpart) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  subpart = 1;
  if (b0 < 0x80) {
    c = b0;
    return 1;
  }
  int n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  char32_t v = b0 & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    if (i + static_cast<size_t>(k) >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if (!continuation(b) || (k == 1 && (b < lo || b > hi))) return 0;
    v = (v << 6) | (b & 0x3F);
    subpart = k + 1;
  }
  c = v;
  return n;
}

int8_t category(char32_t c) { return u_charType(static_cast<UChar32>(c)); }

std::u32string to_u32(const icu::UnicodeString& u) {
  std::u32string out(static_cast<size_t>(u.countChar32()), U'\0');
  UErrorCode status = U_ZERO_ERROR;
  u.toUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), status);
  return out;
}

icu::UnicodeString from_u32(const std::u32string& s) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()), static_cast<int32_t>(s.size()));
}

}  // namespace

std::vector<CodePoint> decode(const std::string& utf8) {
  std::vector<CodePoint> out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    char32_t c = 0;
    int subpart = 1;
    const int n = sequence(utf8, i, c, subpart);
    if (n == 0) c = 0xFFFD;
    const int len = n ? n : subpart;
    out.push_back({c, static_cast<uint32_t>(i), static_cast<uint32_t>(len)});
    i += static_cast<size_t>(len);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

std::string repair_utf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const CodePoint& cp : decode(bytes)) {
    if (cp.c == 0xFFFD)
      append_utf8(out, cp.c);
    else
      out.append(bytes, cp.offset, cp.length);
  }
  return out;
}

bool valid_utf8(const std::string& bytes) {
  for (size_t i = 0; i < bytes.size();) {
    char32_t c;
    int subpart;
    const int n = sequence(bytes, i, c, subpart);
    if (n == 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

bool is_letter(char32_t c) {
  const int8_t k = category(c);
  return k == U_UPPERCASE_LETTER || k == U_LOWERCASE_LETTER || k == U_TITLECASE_LETTER || k == U_MODIFIER_LETTER ||
         k == U_OTHER_LETTER;
}

bool is_number(char32_t c) {
  const int8_t k = category(c);
  return k == U_DECIMAL_DIGIT_NUMBER || k == U_LETTER_NUMBER || k == U_OTHER_NUMBER;
}

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_other_category(char32_t c) {
  const int8_t k = category(c);
  return k == U_CONTROL_CHAR || k == U_FORMAT_CHAR || k == U_SURROGATE || k == U_PRIVATE_USE_CHAR || k == U_UNASSIGNED;
}

bool is_punctuation(char32_t c) {
  const int8_t k = category(c);
  return k == U_DASH_PUNCTUATION || k == U_START_PUNCTUATION || k == U_END_PUNCTUATION ||
         k == U_CONNECTOR_PUNCTUATION || k == U_OTHER_PUNCTUATION || k == U_INITIAL_PUNCTUATION ||
         k == U_FINAL_PUNCTUATION;
}

bool is_space_separator(char32_t c) { return category(c) == U_SPACE_SEPARATOR; }

bool is_nonspacing_mark(char32_t c) { return category(c) == U_NON_SPACING_MARK; }

std::u32string lower(const std::u32string& text) {
  icu::UnicodeString u = from_u32(text);
  u.toLower(icu::Locale::getRoot());
  return to_u32(u);
}

std::u32string nfd(const std::u32string& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status) || !n) return text;  // ICU's data missing: leave the text as it is
  icu::UnicodeString out = n->normalize(from_u32(text), status);
  return U_FAILURE(status) ? text : to_u32(out);
}

}  // namespace sf::unicode

namespace sf::unicode {

std::string nfc(const std::string& utf8) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFCInstance(status);
  if (U_FAILURE(status) || !n) return utf8;  // ICU's data missing: leave the text as it is
  const icu::UnicodeString out = n->normalize(icu::UnicodeString::fromUTF8(utf8), status);
  if (U_FAILURE(status)) return utf8;
  std::string s;
  out.toUTF8String(s);
  return s;
}

}  // namespace sf::unicode
