#include "text/vocab.h"

#include <sstream>

namespace sf {

Result<Vocab> Vocab::make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what) {
  Vocab v;
  v.tokenizer_ = tokenizer;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].empty()) return Error{what + ": entry " + std::to_string(i) + " is an empty string"};
    if (!v.index_.emplace(tokens[i], static_cast<int>(i)).second)
      return Error{what + ": token '" + tokens[i] + "' appears more than once"};
  }
  v.tokens_ = std::move(tokens);
  auto need = [&](const char* s, int& slot) -> bool {
    slot = v.id(s);
    return slot >= 0;
  };
  for (auto [name, slot] : {std::pair<const char*, int*>{"<pad>", &v.pad_}, {"<s>", &v.bos_},
                            {"</s>", &v.eos_}, {"<unk>", &v.unk_}}) {
    if (!need(name, *slot))
      return Error{what + ": expected the special token '" + std::string(name) + "', not found among " +
                   std::to_string(v.tokens_.size()) + " tokens"};
  }
  return v;
}

const std::string& Vocab::token(int id) const {
  static const std::string bad = "<?>";
  return id >= 0 && id < size() ? tokens_[static_cast<size_t>(id)] : bad;
}

int Vocab::id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? -1 : it->second;
}

static std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Splits UTF-8 text into code points (so "é" stays one token); runs of spaces collapse to one "_".
static std::vector<std::string> split_chars(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  // Trim leading/trailing whitespace.
  size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return out;
  while (i + b <= e) {
    unsigned char c = static_cast<unsigned char>(text[b + i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (out.empty() || out.back() != "_") out.push_back("_");
      ++i;
      continue;
    }
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    len = std::min(len, e + 1 - (b + i));
    out.push_back(text.substr(b + i, len));
    i += len;
  }
  return out;
}

Tokenized Vocab::tokenize(const std::string& text) const {
  Tokenized t;
  t.pieces = tokenizer_ == Tokenizer::Word ? split_words(text) : split_chars(text);
  for (size_t i = 0; i < t.pieces.size(); ++i) {
    int id = this->id(t.pieces[i]);
    if (id < 0) {
      id = unk_;
      t.unknown.push_back(static_cast<int>(i));
    }
    t.ids.push_back(id);
  }
  return t;
}

std::string Vocab::detokenize(const std::vector<int>& ids) const {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& tok = token(ids[i]);
    if (tokenizer_ == Tokenizer::Character) {
      s += tok == "_" ? " " : tok;
    } else {
      if (i) s += ' ';
      s += tok;
    }
  }
  return s;
}

}  // namespace sf
