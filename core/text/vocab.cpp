#include "text/vocab.h"

#include <sstream>

namespace sf {

namespace {

// The special tokens of each kind, looked up by name: where each goes and whether it must exist.
struct Special {
  const char* name;
  int Vocab::*slot;
  bool required;
};

}  // namespace

Result<Vocab> Vocab::make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what) {
  Vocab v;
  v.tokenizer_ = tokenizer;
  if (tokens.empty()) return Error{what + ": expected at least one token, found an empty vocabulary"};
  v.index_.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].empty()) return Error{what + ": entry " + std::to_string(i) + " is an empty string"};
    if (!v.index_.emplace(tokens[i], static_cast<int>(i)).second)
      return Error{what + ": token '" + tokens[i] + "' appears more than once (ids " +
                   std::to_string(v.index_[tokens[i]]) + " and " + std::to_string(i) + ")"};
  }
  v.tokens_ = std::move(tokens);
  std::vector<Special> specials;
  switch (tokenizer) {
    case Tokenizer::Word:
    case Tokenizer::Character:
      specials = {{"<pad>", &Vocab::pad_, true},
                  {"<s>", &Vocab::bos_, true},
                  {"</s>", &Vocab::eos_, true},
                  {"<unk>", &Vocab::unk_, true}};
      break;
    case Tokenizer::ByteBpe:
      specials = {{"<|endoftext|>", &Vocab::bos_, true}, {"<|endoftext|>", &Vocab::eos_, true}};
      break;
    case Tokenizer::WordPiece:
      specials = {{"[UNK]", &Vocab::unk_, true},
                  {"[CLS]", &Vocab::cls_, true},
                  {"[SEP]", &Vocab::sep_, true},
                  {"[PAD]", &Vocab::pad_, false},
                  {"[MASK]", &Vocab::mask_, false}};
      break;
    case Tokenizer::SentencePiece:
      specials = {{"<pad>", &Vocab::pad_, true}, {"</s>", &Vocab::eos_, true}, {"<unk>", &Vocab::unk_, true}};
      break;
  }
  for (const Special& s : specials) {
    v.*s.slot = v.id(s.name);
    if (v.*s.slot < 0 && s.required)
      return Error{what + ": expected the special token '" + std::string(s.name) + "', not found among " +
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

bool Vocab::is_special(int id) const {
  return id >= 0 && (id == pad_ || id == bos_ || id == eos_ || id == unk_ || id == cls_ || id == sep_ || id == mask_);
}

std::string Vocab::display(int id) const {
  if (engine_ && id >= 0 && id < size() && !is_special(id)) return engine_->display(token(id));
  return token(id);
}

void Vocab::push(Tokenized& t, int id, std::string piece, bool word_start) const {
  if (id < 0) {
    t.unknown.push_back(static_cast<int>(t.ids.size()));
    id = unk_;
  }
  t.ids.push_back(id);
  t.pieces.push_back(std::move(piece));
  t.display.push_back(display(id));
  t.word_start.push_back(word_start ? 1 : 0);
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
  if (engine_) {
    engine_->tokenize(*this, text, t);
    return t;
  }
  const bool chars = tokenizer_ == Tokenizer::Character;
  std::vector<std::string> pieces = chars ? split_chars(text) : split_words(text);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int id = this->id(pieces[i]);
    push(t, id, std::move(pieces[i]), !chars || i == 0 || t.pieces.back() == "_");
  }
  return t;
}

Tokenized Vocab::encode(const std::string& text) const {
  Tokenized body = tokenize(text);
  if (tokenizer_ != Tokenizer::WordPiece && tokenizer_ != Tokenizer::SentencePiece) return body;
  Tokenized t;
  if (tokenizer_ == Tokenizer::WordPiece) push(t, cls_, token(cls_), true);
  const int offset = static_cast<int>(t.ids.size());
  t.ids.insert(t.ids.end(), body.ids.begin(), body.ids.end());
  t.pieces.insert(t.pieces.end(), body.pieces.begin(), body.pieces.end());
  t.display.insert(t.display.end(), body.display.begin(), body.display.end());
  t.word_start.insert(t.word_start.end(), body.word_start.begin(), body.word_start.end());
  for (int u : body.unknown) t.unknown.push_back(u + offset);
  const int last = tokenizer_ == Tokenizer::WordPiece ? sep_ : eos_;
  push(t, last, token(last), true);
  return t;
}

std::string Vocab::detokenize(const std::vector<int>& ids) const {
  if (engine_) return engine_->detokenize(*this, ids);
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
