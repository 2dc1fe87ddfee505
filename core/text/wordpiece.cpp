// wordpiece.cpp — BERT BasicTokenizer + WordPiece; the reference is tests/reference/hf/tokenizers.py.
#include "text/wordpiece.h"

#include "text/special_split.h"
#include "text/unicode.h"

namespace sf {

namespace {

using namespace unicode;

bool bert_whitespace(char32_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || is_space_separator(c); }

bool bert_control(char32_t c) { return c != '\t' && c != '\n' && c != '\r' && is_other_category(c); }

// Every non-alphanumeric ASCII character counts ('$', '^', '`'), plus the P* categories.
bool bert_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) ||
         is_punctuation(c);
}

// The CJK Unified Ideographs blocks (not Hangul, Hiragana or Katakana, which BERT leaves alone).
bool bert_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

}  // namespace

std::vector<std::u32string> WordPiece::basic_tokenize(const std::string& text) const {
  // Clean (drop NUL, U+FFFD and controls; white space -> ' ') and space out CJK ideographs.
  std::u32string spaced;
  for (const CodePoint& cp : decode(text)) {
    const char32_t c = cp.c;
    if (c == 0 || c == 0xFFFD || bert_control(c)) continue;
    if (bert_cjk(c)) {
      spaced += U' ';
      spaced += c;
      spaced += U' ';
    } else {
      spaced += bert_whitespace(c) ? U' ' : c;
    }
  }
  // Split on white space (what is left of it after cleaning: ' ', U+2028, U+2029), then per word
  // lowercase, strip accents, split off punctuation.
  std::vector<std::u32string> words;
  auto finish = [&](std::u32string tok) {
    if (tok.empty()) return;
    if (lowercase_) {
      std::u32string stripped;
      for (char32_t c : nfd(lower(tok)))
        if (!is_nonspacing_mark(c)) stripped += c;
      tok.swap(stripped);
    }
    std::u32string cur;
    for (char32_t c : tok) {
      if (bert_punctuation(c)) {
        if (!cur.empty()) words.push_back(std::move(cur));
        cur.clear();
        words.push_back(std::u32string(1, c));
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) words.push_back(std::move(cur));
  };
  std::u32string tok;
  for (char32_t c : spaced) {
    if (is_white_space(c)) {
      finish(std::move(tok));
      tok.clear();
    } else {
      tok += c;
    }
  }
  finish(std::move(tok));
  return words;
}

void WordPiece::wordpiece(const Vocab& v, const std::u32string& word, Tokenized& out) const {
  if (word.size() > kMaxCharsPerWord) {
    v.push(out, -1, encode(word), true);
    return;
  }
  std::vector<int> ids;
  for (size_t start = 0; start < word.size();) {
    int found = -1;
    size_t end = word.size();
    for (; end > start; --end) {
      const std::string sub = (start ? "##" : "") + encode(word.substr(start, end - start));
      found = v.id(sub);
      if (found >= 0) break;
    }
    if (found < 0) {  // no split: the whole word, not just the failing part, is [UNK]
      v.push(out, -1, encode(word), true);
      return;
    }
    ids.push_back(found);
    start = end;
  }
  for (size_t k = 0; k < ids.size(); ++k) v.push(out, ids[k], v.token(ids[k]), k == 0);
}

void WordPiece::tokenize(const Vocab& v, const std::string& text, Tokenized& out) const {
  for (const TextSegment& seg : split_specials(v, text, specials_)) {
    if (seg.special >= 0)
      v.push(out, seg.special, v.token(seg.special), true);
    else
      for (const std::u32string& w : basic_tokenize(text.substr(seg.offset, seg.length))) wordpiece(v, w, out);
  }
}

std::string WordPiece::detokenize(const Vocab& v, const std::vector<int>& ids) const {
  std::string s;
  for (int id : ids) {
    const std::string& t = v.token(id);
    if (t.size() > 2 && t.compare(0, 2, "##") == 0 && !s.empty()) {
      s += t.substr(2);
    } else {
      if (!s.empty()) s += ' ';
      s += t;
    }
  }
  return s;
}

}  // namespace sf
