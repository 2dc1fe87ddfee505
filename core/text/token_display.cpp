#include "text/token_display.h"

#include "text/unicode.h"

namespace sf {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // Hugging Face and SentencePiece write upper case only
}

std::string hex_bytes(const std::string& bytes) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

}  // namespace

std::string show_bytes(const std::string& bytes) {
  std::string out;
  for (const unicode::CodePoint& cp : unicode::decode(bytes)) {
    if (cp.c == 0xFFFD && bytes.compare(cp.offset, cp.length, "\xEF\xBF\xBD") != 0) {
      for (uint32_t k = 0; k < cp.length; ++k) out += "<0x" + hex_bytes(bytes.substr(cp.offset + k, 1)) + ">";
    } else {
      out.append(bytes, cp.offset, cp.length);
    }
  }
  return out;
}

int byte_fallback_value(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  const int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string display_byte_piece(const std::string& piece) {
  const int b = byte_fallback_value(piece);
  return b >= 0 && b < 0x80 ? std::string(1, static_cast<char>(b)) : piece;
}

std::vector<std::string> display_tokens(const Vocab& v, const std::vector<int>& ids) {
  const size_t n = ids.size();
  std::vector<std::string> out(n), bytes(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = v.display(ids[i]);
    bytes[i] = v.bytes(ids[i]);
  }
  constexpr size_t kMaxGroup = 8;  // a character is at most 4 bytes; tokens may carry more around it
  for (size_t i = 0; i < n;) {
    if (unicode::valid_utf8(bytes[i])) {
      ++i;
      continue;
    }
    // The shortest run of tokens from i whose bytes together are whole characters.
    std::string joined = bytes[i];
    size_t end = 0;
    for (size_t j = i + 1; j < n && j < i + kMaxGroup; ++j) {
      joined += bytes[j];
      if (unicode::valid_utf8(joined)) {
        end = j + 1;
        break;
      }
    }
    if (!end) {  // no run completes the character: the token keeps its own display ('<0xE4>')
      ++i;
      continue;
    }
    for (size_t k = i; k < end; ++k) out[k] = joined + "\u00B7" + hex_bytes(bytes[k]);  // "中·E4"
    i = end;
  }
  return out;
}

}  // namespace sf
