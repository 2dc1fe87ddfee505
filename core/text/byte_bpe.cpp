// byte_bpe.cpp — GPT-2 byte-level BPE; the reference is tests/reference/hf/tokenizers.py.
#include "text/byte_bpe.h"

#include "text/special_split.h"
#include "text/token_display.h"
#include "text/unicode.h"

namespace sf {

const std::vector<char32_t>& bytes_to_unicode() {
  static const std::vector<char32_t> table = [] {
    std::vector<char32_t> t(256, 0);
    auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    char32_t extra = 256;
    for (int b = 0; b < 256; ++b) t[static_cast<size_t>(b)] = printable(b) ? static_cast<char32_t>(b) : extra++;
    return t;
  }();
  return table;
}

std::string byte_alphabet_to_bytes(const std::string& s) {
  static const std::unordered_map<char32_t, uint8_t> to_byte = [] {
    std::unordered_map<char32_t, uint8_t> m;
    for (int b = 0; b < 256; ++b) m[bytes_to_unicode()[static_cast<size_t>(b)]] = static_cast<uint8_t>(b);
    return m;
  }();
  std::string bytes;
  for (const unicode::CodePoint& cp : unicode::decode(s)) {
    auto it = to_byte.find(cp.c);
    if (it != to_byte.end())
      bytes += static_cast<char>(it->second);
    else
      unicode::append_utf8(bytes, cp.c);
  }
  return bytes;
}

std::string bytes_to_byte_alphabet(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) unicode::append_utf8(out, bytes_to_unicode()[b]);
  return out;
}

std::vector<std::pair<size_t, size_t>> gpt2_pretokenize(const std::string& text) {
  using namespace unicode;
  const std::vector<CodePoint> cps = decode(text);
  const size_t n = cps.size();
  std::vector<std::pair<size_t, size_t>> out;
  auto emit = [&](size_t a, size_t b) {  // code points [a, b)
    const size_t off = cps[a].offset;
    const size_t end = b < n ? cps[b].offset : text.size();
    out.emplace_back(off, end - off);
  };
  auto is_other = [](char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); };
  bool (*const classes[])(char32_t) = {is_letter, is_number, is_other};
  static const char* const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
  size_t i = 0;
  while (i < n) {
    // Contractions: ASCII, case-sensitive, tried first.
    size_t clen = 0;
    if (cps[i].c == '\'')
      for (const char* c : contractions) {
        const size_t len = std::char_traits<char>::length(c);
        if (text.compare(cps[i].offset, len, c) == 0) {
          clen = len;  // ASCII: one code point per byte
          break;
        }
      }
    if (clen) {
      emit(i, i + clen);
      i += clen;
      continue;
    }
    bool matched = false;
    for (auto pred : classes) {  // ' ?X+' for letters, numbers, others, in that order
      const size_t start = cps[i].c == ' ' && i + 1 < n && pred(cps[i + 1].c) ? i + 1 : i;
      size_t end = start;
      while (end < n && pred(cps[end].c)) ++end;
      if (end > start) {
        emit(i, end);
        i = end;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    // cps[i] is white space: \s+(?!\S) leaves the run's last space to prefix the next word;
    // at the end of the text, or for a single space, \s+ takes the whole run.
    size_t end = i;
    while (end < n && is_white_space(cps[end].c)) ++end;
    if (end < n && end - i >= 2) --end;
    emit(i, end);
    i = end;
  }
  return out;
}

ByteBpe::ByteBpe(std::vector<int> byte_ids, const std::vector<std::array<int, 3>>& merges, std::vector<int> specials)
    : byte_ids_(std::move(byte_ids)), merges_(merges), specials_(std::move(specials)) {}

std::vector<int> ByteBpe::bpe(const std::string& word) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) return it->second;
  }
  std::vector<int> parts;
  parts.reserve(word.size());
  for (unsigned char b : word) parts.push_back(byte_ids_[b]);
  parts = merges_.apply(std::move(parts));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= 65536) cache_.clear();  // bounded: arbitrary input must not grow it forever
  cache_.emplace(word, parts);
  return parts;
}

void ByteBpe::tokenize(const Vocab& v, const std::string& text, Tokenized& out) const {
  for (const TextSegment& seg : split_specials(v, text, specials_)) {
    if (seg.special >= 0) {
      v.push(out, seg.special, v.token(seg.special), true);
      continue;
    }
    const std::string part = text.substr(seg.offset, seg.length);
    for (auto [off, len] : gpt2_pretokenize(part)) {
      const std::vector<int> ids = bpe(part.substr(off, len));
      for (size_t k = 0; k < ids.size(); ++k) v.push(out, ids[k], v.token(ids[k]), k == 0);
    }
  }
}

std::string ByteBpe::detokenize(const Vocab& v, const std::vector<int>& ids) const {
  std::string tokens;
  for (int id : ids) tokens += v.token(id);
  return unicode::repair_utf8(byte_alphabet_to_bytes(tokens));
}

std::string ByteBpe::display(const std::string& token) const { return show_bytes(byte_alphabet_to_bytes(token)); }

}  // namespace sf
