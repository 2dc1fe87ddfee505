// bpe_pipeline.cpp — Hugging Face tokenizers' BPE pipeline; the semantics are cited per step in
// bpe_pipeline.h, the references are tests/reference/tokenizers/.
#include "text/bpe_pipeline.h"

#include <algorithm>

#include "text/byte_bpe.h"
#include "text/token_display.h"
#include "text/unicode.h"

namespace sf {

namespace {

const std::string kMeta = "\xE2\x96\x81";  // '▁' U+2581

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, from.size(), from) == 0) {
      out += to;
      i += from.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The matches of a one-character test over the code points of `text` (pattern.rs, impl for Fn(char)).
template <class Pred>
Matches char_matches(const std::string& text, Pred pred) {
  if (text.empty()) return {{0, 0, false}};
  Matches out;
  size_t last = 0;
  for (const unicode::CodePoint& cp : unicode::decode(text)) {
    if (!pred(cp)) continue;
    if (last < cp.offset) out.push_back({last, cp.offset, false});
    out.push_back({cp.offset, cp.offset + cp.length, true});
    last = cp.offset + cp.length;
  }
  if (last < text.size()) out.push_back({last, text.size(), false});
  return out;
}

// White space before `end` / after `begin` (added_vocabulary.rs: \s*$ and ^\s*).
size_t white_space_start(const std::string& s, size_t end) {
  size_t start = end;
  for (const unicode::CodePoint& cp : unicode::decode(s.substr(0, end)))
    start = unicode::is_white_space(cp.c) ? std::min(start, static_cast<size_t>(cp.offset)) : end;
  return start;
}
size_t white_space_end(const std::string& s, size_t begin) {
  const std::string rest = s.substr(begin);
  for (const unicode::CodePoint& cp : unicode::decode(rest))
    if (!unicode::is_white_space(cp.c)) return begin + cp.offset;
  return s.size();
}

}  // namespace

BpePipeline::BpePipeline(const Vocab& v, PipelineSpec spec) : spec_(std::move(spec)), merges_(spec_.merges) {
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    unicode::append_utf8(sym, bytes_to_unicode()[static_cast<size_t>(b)]);
    byte_ids_[static_cast<size_t>(b)] = v.id(sym);
    static const char hex[] = "0123456789ABCDEF";
    fallback_ids_[static_cast<size_t>(b)] = v.id(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
  }
  // Longest content first: at one position the longest added token wins (LeftmostLongest).
  std::stable_sort(spec_.added.begin(), spec_.added.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
}

std::vector<BpePipeline::Piece> BpePipeline::match_added(const std::string& text, bool normalized) const {
  std::vector<Piece> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const AddedToken* hit = nullptr;
    for (const AddedToken& a : spec_.added)
      if (a.normalized == normalized && !a.content.empty() && text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    if (!hit) {
      ++i;
      continue;
    }
    size_t b = i, e = i + hit->content.size();
    if (hit->lstrip) b = std::max(white_space_start(text, b), start);
    if (hit->rstrip) e = white_space_end(text, e);
    if (b > start) out.push_back({start, b, -1});
    out.push_back({b, e, hit->id});
    start = i = e;
  }
  if (start < text.size() || out.empty()) out.push_back({start, text.size(), -1});
  return out;
}

std::string BpePipeline::normalize(const std::string& text) const {
  std::string s = text;
  for (const NormalizerStep& n : spec_.normalizers) switch (n.kind) {
      case NormalizerStep::Nfc:
        s = unicode::nfc(s);
        break;
      case NormalizerStep::Prepend:
        if (!s.empty()) s = n.content + s;
        break;
      case NormalizerStep::Replace:
        s = replace_all(s, n.pattern, n.content);
        break;
    }
  return s;
}

std::vector<std::string> BpePipeline::pre_tokenize(const std::string& text, bool at_start) const {
  struct P {
    std::string s;
    bool at_start;
  };
  std::vector<P> pieces{{text, at_start}};
  for (const PreTokenizerStep& p : spec_.pre_tokenizers) {
    std::vector<P> next;
    for (P& piece : pieces) {
      std::string& s = piece.s;
      Matches m;
      SplitBehavior behavior = SplitBehavior::Isolated;
      switch (p.kind) {
        case PreTokenizerStep::ByteLevel:
          if (p.add_prefix_space && !s.empty() && s.compare(0, 1, " ") != 0) s = " " + s;
          if (!p.use_regex) {
            next.push_back(piece);
            continue;
          }
          m = {};
          for (auto [off, len] : gpt2_pretokenize(s)) m.push_back({off, off + len, true});
          if (m.empty()) m.push_back({0, 0, false});
          break;
        case PreTokenizerStep::Split:
          m = p.regex->find(s);
          if (p.invert)
            for (Span& span : m) span.match = !span.match;
          behavior = p.behavior;
          break;
        case PreTokenizerStep::Digits:
          m = char_matches(s, [](const unicode::CodePoint& cp) { return unicode::is_number(cp.c); });
          behavior = p.individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous;
          break;
        case PreTokenizerStep::Metaspace: {
          s = replace_all(s, " ", p.replacement);
          const bool prepend =
              p.prepend == PreTokenizerStep::Always || (p.prepend == PreTokenizerStep::First && piece.at_start);
          // NormalizedString::prepend does nothing to an empty string.
          if (prepend && !s.empty() && s.compare(0, p.replacement.size(), p.replacement) != 0) s = p.replacement + s;
          if (!p.split) {
            next.push_back(piece);
            continue;
          }
          const std::string rep = p.replacement;
          m = char_matches(s, [&](const unicode::CodePoint& cp) { return s.compare(cp.offset, cp.length, rep) == 0; });
          behavior = SplitBehavior::MergedWithNext;
          break;
        }
      }
      bool first = piece.at_start;
      for (auto [b, e] : split_by(m, behavior)) {
        next.push_back({s.substr(b, e - b), first && b == 0});
        first = false;
      }
    }
    pieces = std::move(next);
  }
  std::vector<std::string> out;
  for (P& p : pieces)
    if (!p.s.empty()) out.push_back(std::move(p.s));
  return out;
}

std::vector<int> BpePipeline::symbols(const Vocab& v, const std::string& word) const {
  std::vector<int> parts;
  if (spec_.model.byte_level) {
    for (unsigned char b : word) parts.push_back(byte_ids_[b]);
    return parts;
  }
  bool in_unk = false;  // the last symbol is an unk that fuse_unk may extend
  for (const unicode::CodePoint& cp : unicode::decode(word)) {
    const std::string ch = word.substr(cp.offset, cp.length);
    const int id = v.id(ch);
    if (id >= 0) {
      parts.push_back(id);
      in_unk = false;
      continue;
    }
    if (spec_.model.byte_fallback) {
      bool all = true;
      for (unsigned char b : ch) all = all && fallback_ids_[b] >= 0;
      if (all) {
        for (unsigned char b : ch) parts.push_back(fallback_ids_[b]);
        in_unk = false;
        continue;
      }
    }
    if (spec_.model.unk < 0) continue;  // no unk_token: the character is dropped
    if (!(in_unk && spec_.model.fuse_unk)) parts.push_back(spec_.model.unk);
    in_unk = true;
  }
  return parts;
}

std::vector<int> BpePipeline::model(const Vocab& v, const std::string& word) const {
  const std::string spelled = spec_.model.byte_level ? bytes_to_byte_alphabet(word) : word;
  if (spec_.model.ignore_merges)
    if (const int id = v.id(spelled); id >= 0) return {id};
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) return it->second;
  }
  std::vector<int> ids = merges_.apply(symbols(v, word));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= 65536) cache_.clear();  // bounded: arbitrary input must not grow it forever
  cache_.emplace(word, ids);
  return ids;
}

void BpePipeline::tokenize(const Vocab& v, const std::string& input, Tokenized& out) const {
  // Hugging Face receives Unicode text: an ill-formed byte reads as U+FFFD.
  const std::string text = unicode::valid_utf8(input) ? input : unicode::repair_utf8(input);
  auto push_added = [&](int id) { v.push(out, id, v.token(id), true); };
  for (const Piece& raw : match_added(text, /*normalized=*/false)) {
    if (raw.added >= 0) {
      push_added(raw.added);
      continue;
    }
    const std::string normalized = normalize(text.substr(raw.begin, raw.end - raw.begin));
    for (const Piece& part : match_added(normalized, /*normalized=*/true)) {
      if (part.added >= 0) {
        push_added(part.added);
        continue;
      }
      const bool at_start = raw.begin == 0 && part.begin == 0;
      for (const std::string& word : pre_tokenize(normalized.substr(part.begin, part.end - part.begin), at_start)) {
        const std::vector<int> ids = model(v, word);
        for (size_t k = 0; k < ids.size(); ++k) {
          const std::string& tok = v.token(ids[k]);
          const bool start = k == 0 || (!spec_.model.byte_level && tok.compare(0, kMeta.size(), kMeta) == 0);
          v.push(out, ids[k], tok, start);
        }
      }
    }
  }
}

std::string BpePipeline::detokenize(const Vocab& v, const std::vector<int>& ids) const {
  std::vector<std::string> tokens;
  for (int id : ids) tokens.push_back(v.token(id));
  if (spec_.decoders.empty()) {
    std::string s;
    for (size_t i = 0; i < tokens.size(); ++i) s += (i ? " " : "") + tokens[i];
    return s;
  }
  for (const DecoderStep& d : spec_.decoders) {
    std::vector<std::string> next;
    switch (d.kind) {
      case DecoderStep::ByteLevel: {
        std::string bytes;
        for (const std::string& t : tokens) {
          const std::string b = byte_alphabet_to_bytes(t);
          // A token with a character outside the alphabet is kept as it is (decoders/byte_level.rs).
          bytes += bytes_to_byte_alphabet(b) == t ? b : t;
        }
        next.push_back(unicode::repair_utf8(bytes));
        break;
      }
      case DecoderStep::Metaspace:  // every replacement of the first token dropped unless prepend Never
        for (size_t i = 0; i < tokens.size(); ++i)
          next.push_back(replace_all(tokens[i], d.content, i == 0 && d.prepend != PreTokenizerStep::Never ? "" : " "));
        break;
      case DecoderStep::Replace:
        for (const std::string& t : tokens) next.push_back(replace_all(t, d.pattern, d.content));
        break;
      case DecoderStep::ByteFallback:
        for (size_t i = 0; i < tokens.size();) {
          if (byte_fallback_value(tokens[i]) < 0) {
            next.push_back(tokens[i++]);
            continue;
          }
          std::string bytes;
          size_t j = i;
          for (; j < tokens.size() && byte_fallback_value(tokens[j]) >= 0; ++j)
            bytes += static_cast<char>(byte_fallback_value(tokens[j]));
          if (unicode::valid_utf8(bytes))
            next.push_back(bytes);
          else
            for (size_t k = i; k < j; ++k) next.push_back("\xEF\xBF\xBD");
          i = j;
        }
        break;
      case DecoderStep::Fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        next.push_back(all);
        break;
      }
      case DecoderStep::Strip:
        for (const std::string& t : tokens) {
          size_t b = 0, e = t.size();
          for (int k = 0; k < d.start && t.compare(b, d.content.size(), d.content) == 0; ++k) b += d.content.size();
          for (int k = 0; k < d.stop && e >= b + d.content.size() &&
                          t.compare(e - d.content.size(), d.content.size(), d.content) == 0;
               ++k)
            e -= d.content.size();
          next.push_back(t.substr(b, e - b));
        }
        break;
    }
    tokens = std::move(next);
  }
  std::string s;
  for (const std::string& t : tokens) s += t;
  return s;
}

std::string BpePipeline::display(const std::string& token) const {
  if (spec_.model.byte_level) return show_bytes(byte_alphabet_to_bytes(token));
  return display_byte_piece(token);
}

std::string BpePipeline::bytes(const std::string& token) const {
  if (spec_.model.byte_level) return byte_alphabet_to_bytes(token);
  const int b = byte_fallback_value(token);
  return b < 0 ? token : std::string(1, static_cast<char>(b));
}

}  // namespace sf
