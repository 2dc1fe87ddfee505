// byte_bpe.cpp — GPT-2 byte-level BPE; the reference is tests/reference/hf/tokenizers.py.
#include "text/byte_bpe.h"

#include <functional>
#include <queue>

#include "text/special_split.h"
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
    : byte_ids_(std::move(byte_ids)), specials_(std::move(specials)) {
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const uint64_t key =
        static_cast<uint64_t>(static_cast<uint32_t>(merges[r][0])) << 32 | static_cast<uint32_t>(merges[r][1]);
    merges_.emplace(key, Merge{static_cast<int>(r), merges[r][2]});  // a repeated pair keeps its first rank
  }
  const std::vector<char32_t>& table = bytes_to_unicode();
  for (int b = 0; b < 256; ++b) unicode_to_byte_[table[static_cast<size_t>(b)]] = static_cast<uint8_t>(b);
}

// Repeatedly merges the adjacent pair of lowest rank — all its non-overlapping occurrences, left
// to right — until no adjacent pair is a merge (OpenAI's encoder; the order matters when a merge
// of a later rank feeds one of an earlier rank). O(n log n): candidate pairs in a heap ordered by
// (rank, position), symbols in a linked list. One pass pops every candidate of the lowest rank
// before the pairs its merges create are pushed — those cannot have that rank (a merged symbol is
// longer than either part), so each pass sees exactly the pairs the word had when it began.
std::vector<int> ByteBpe::merge_word(std::vector<int> parts) const {
  const int n = static_cast<int>(parts.size());
  if (n < 2) return parts;
  std::vector<int> next(static_cast<size_t>(n)), prev(static_cast<size_t>(n));  // -1: none
  for (int i = 0; i < n; ++i) {
    next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
    prev[static_cast<size_t>(i)] = i - 1;
  }
  struct Candidate {
    int rank, pos, left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto consider = [&](int pos) {
    if (pos < 0 || next[static_cast<size_t>(pos)] < 0) return;
    const int l = parts[static_cast<size_t>(pos)], r = parts[static_cast<size_t>(next[static_cast<size_t>(pos)])];
    auto it = merges_.find(static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32 | static_cast<uint32_t>(r));
    if (it != merges_.end()) heap.push({it->second.rank, pos, l, r});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  std::vector<char> alive(static_cast<size_t>(n), 1);
  std::vector<int> merged_at;
  while (!heap.empty()) {
    const int rank = heap.top().rank;
    merged_at.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      const Candidate c = heap.top();
      heap.pop();
      const auto p = static_cast<size_t>(c.pos);
      const int q = next[p];
      // Stale when a symbol of the pair was merged away since the candidate was pushed.
      if (!alive[p] || parts[p] != c.left || q < 0 || parts[static_cast<size_t>(q)] != c.right) continue;
      parts[p] = merges_.at(static_cast<uint64_t>(static_cast<uint32_t>(c.left)) << 32 | static_cast<uint32_t>(c.right))
                     .merged;
      alive[static_cast<size_t>(q)] = 0;
      next[p] = next[static_cast<size_t>(q)];
      if (next[p] >= 0) prev[static_cast<size_t>(next[p])] = c.pos;
      merged_at.push_back(c.pos);
    }
    for (int pos : merged_at) {
      consider(prev[static_cast<size_t>(pos)]);
      consider(pos);
    }
  }
  std::vector<int> out;
  for (int i = 0; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(parts[static_cast<size_t>(i)]);
  return out;
}

std::vector<int> ByteBpe::bpe(const std::string& word) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) return it->second;
  }
  std::vector<int> parts;
  parts.reserve(word.size());
  for (unsigned char b : word) parts.push_back(byte_ids_[b]);
  parts = merge_word(std::move(parts));
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

std::string ByteBpe::to_bytes(const std::string& tokens) const {
  std::string bytes;
  for (const unicode::CodePoint& cp : unicode::decode(tokens)) {
    auto it = unicode_to_byte_.find(cp.c);
    if (it != unicode_to_byte_.end())
      bytes += static_cast<char>(it->second);
    else
      unicode::append_utf8(bytes, cp.c);  // not a byte-alphabet character (a special token's)
  }
  return bytes;
}

std::string ByteBpe::detokenize(const Vocab& v, const std::vector<int>& ids) const {
  std::string tokens;
  for (int id : ids) tokens += v.token(id);
  return unicode::repair_utf8(to_bytes(tokens));
}

std::string ByteBpe::display(const std::string& token) const {
  const std::string bytes = to_bytes(token);
  // A token may hold part of a multi-byte character: show those bytes as <0xC3>.
  std::string out;
  for (const unicode::CodePoint& cp : unicode::decode(bytes)) {
    if (cp.c == 0xFFFD && bytes.compare(cp.offset, cp.length, "\xEF\xBF\xBD") != 0) {
      static const char hex[] = "0123456789ABCDEF";
      for (uint32_t k = 0; k < cp.length; ++k) {
        const auto b = static_cast<unsigned char>(bytes[cp.offset + k]);
        out += std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
      }
    } else {
      out.append(bytes, cp.offset, cp.length);
    }
  }
  return out;
}

}  // namespace sf
