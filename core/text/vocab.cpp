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

// The tokens, each non-empty and once, indexed; no specials yet.
Result<Vocab> Vocab::indexed(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what) {
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
  return v;
}

Result<Vocab> Vocab::make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what) {
  auto made = indexed(std::move(tokens), tokenizer, what);
  if (!made) return made;
  Vocab& v = *made;
  // The special tokens the tokenizer's vocabulary holds (a vector built from its list, not assigned
  // into an empty one: GCC 12 warns -Wnonnull through vector::assign there).
  const auto specials_of = [](Tokenizer t) -> std::vector<Special> {
    switch (t) {
      case Tokenizer::Word:
      case Tokenizer::Character:
        return {{"<pad>", &Vocab::pad_, true},
                {"<s>", &Vocab::bos_, true},
                {"</s>", &Vocab::eos_, true},
                {"<unk>", &Vocab::unk_, true}};
      case Tokenizer::ByteBpe:
        return {{"<|endoftext|>", &Vocab::bos_, true}, {"<|endoftext|>", &Vocab::eos_, true}};
      case Tokenizer::WordPiece:
        return {{"[UNK]", &Vocab::unk_, true},
                {"[CLS]", &Vocab::cls_, true},
                {"[SEP]", &Vocab::sep_, true},
                {"[PAD]", &Vocab::pad_, false},
                {"[MASK]", &Vocab::mask_, false}};
      case Tokenizer::SentencePiece:
        return {{"<pad>", &Vocab::pad_, true}, {"</s>", &Vocab::eos_, true}, {"<unk>", &Vocab::unk_, true}};
      case Tokenizer::SentencePieceBpe:
        return {{"<s>", &Vocab::bos_, true}, {"</s>", &Vocab::eos_, true}, {"<unk>", &Vocab::unk_, true}};
    }
    return {};
  };
  for (const Special& s : specials_of(tokenizer)) {
    v.*s.slot = v.id(s.name);
    if (v.*s.slot < 0 && s.required)
      return Error{what + ": expected the special token '" + std::string(s.name) + "', not found among " +
                   std::to_string(v.tokens_.size()) + " tokens"};
  }
  return made;
}

Result<Vocab> Vocab::make(std::vector<std::string> tokens, Tokenizer tokenizer, const std::string& what,
                          const SpecialNames& names) {
  auto made = indexed(std::move(tokens), tokenizer, what);
  if (!made) return made;
  Vocab& v = *made;
  const std::pair<const std::string*, int Vocab::*> slots[] = {
      {&names.bos, &Vocab::bos_}, {&names.eos, &Vocab::eos_}, {&names.pad, &Vocab::pad_}, {&names.unk, &Vocab::unk_}};
  for (const auto& [name, slot] : slots) {
    if (name->empty()) continue;
    v.*slot = v.id(*name);
    if (v.*slot < 0)
      return Error{what + ": expected the special token '" + *name + "' its tokenizer files name, not found among " +
                   std::to_string(v.tokens_.size()) + " tokens"};
  }
  return made;
}

void Vocab::add_unused(int rows) {
  for (int id = size(); id < rows; ++id) {
    std::string name = "<unused " + std::to_string(id) + ">";
    while (index_.count(name)) name += "'";
    index_.emplace(name, id);
    tokens_.push_back(std::move(name));
  }
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

std::string Vocab::bytes(int id) const {
  if (engine_ && id >= 0 && id < size() && !is_special(id)) return engine_->bytes(token(id));
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
  std::vector<std::string> pieces;
  if (chars) {
    // A special token written out ("<pad>") stays one token; the text between them is split into
    // characters.
    std::vector<std::string> specials;
    for (int id : {pad_, bos_, eos_, unk_})
      if (id >= 0) specials.push_back(token(id));
    size_t from = 0;
    while (from < text.size()) {
      size_t at = std::string::npos, len = 0;
      for (const std::string& sp : specials) {
        const size_t k = text.find(sp, from);
        if (k != std::string::npos && (k < at || (k == at && sp.size() > len))) at = k, len = sp.size();
      }
      for (std::string& c : split_chars(text.substr(from, at == std::string::npos ? std::string::npos : at - from)))
        pieces.push_back(std::move(c));
      if (at == std::string::npos) break;
      pieces.push_back(text.substr(at, len));
      from = at + len;
    }
  } else {
    pieces = split_words(text);
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int id = this->id(pieces[i]);
    push(t, id, std::move(pieces[i]), !chars || i == 0 || t.pieces.back() == "_");
  }
  return t;
}

std::vector<int> Vocab::frame(const std::vector<int>& ids) const {
  if (!framing_) return ids;
  std::vector<int> out(framing_->before);
  out.insert(out.end(), ids.begin(), ids.end());
  out.insert(out.end(), framing_->after.begin(), framing_->after.end());
  return out;
}

Tokenized Vocab::encode(const std::string& text) const {
  Tokenized body = tokenize(text);
  std::vector<int> before, after;
  if (framing_) {
    if (!framing_->tokenizer_adds) return body;
    before = framing_->before;
    after = framing_->after;
  } else if (tokenizer_ == Tokenizer::WordPiece) {
    before = {cls_};
    after = {sep_};
  } else if (tokenizer_ == Tokenizer::SentencePiece) {
    after = {eos_};
  }
  if (before.empty() && after.empty()) return body;
  Tokenized t;
  for (int id : before) push(t, id, token(id), true);
  const int offset = static_cast<int>(t.ids.size());
  t.ids.insert(t.ids.end(), body.ids.begin(), body.ids.end());
  t.pieces.insert(t.pieces.end(), body.pieces.begin(), body.pieces.end());
  t.display.insert(t.display.end(), body.display.begin(), body.display.end());
  t.word_start.insert(t.word_start.end(), body.word_start.begin(), body.word_start.end());
  for (int u : body.unknown) t.unknown.push_back(u + offset);
  for (int id : after) push(t, id, token(id), true);
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
