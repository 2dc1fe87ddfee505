#include "text/sentencepiece.h"

#include <sentencepiece_processor.h>

#include <algorithm>

#include "text/special_split.h"
#include "text/token_display.h"

namespace sf {

namespace {

const std::string kSpace = "\xE2\x96\x81";  // '▁' U+2581, SentencePiece's word-boundary mark

// The end of a match of Python's re `>>.+<<` starting at `i` (greedy, '.' stops at a newline):
// after the last '<<' of the line, if that leaves at least one character between; npos if none.
size_t language_code_end(const std::string& text, size_t i, size_t line_end) {
  if (text.compare(i, 2, ">>") != 0 || line_end < i + 5) return std::string::npos;
  const size_t last = text.rfind("<<", line_end - 2);
  return last != std::string::npos && last >= i + 3 ? last + 2 : std::string::npos;
}

}  // namespace

Result<std::shared_ptr<const SentencePiece>> SentencePiece::load(const std::string& bytes, const std::string& what) {
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->LoadFromSerializedProto(bytes);
  if (!status.ok())
    return Error{what + ": expected a SentencePiece model (serialized ModelProto), found " +
                 std::to_string(bytes.size()) + " bytes it cannot read (" + status.ToString() + ")"};
  if (sp->GetPieceSize() <= 0) return Error{what + ": expected a SentencePiece model with pieces, found none"};
  auto engine = std::make_shared<SentencePiece>();
  engine->sp_ = std::move(sp);
  return std::shared_ptr<const SentencePiece>(std::move(engine));
}

std::shared_ptr<const SentencePiece> SentencePiece::with_own_ids(std::vector<int> specials) const {
  auto engine = std::make_shared<SentencePiece>(*this);
  engine->own_ids_ = true;
  engine->specials_ = std::move(specials);
  return engine;
}

std::vector<std::string> SentencePiece::pieces() const {
  std::vector<std::string> out(static_cast<size_t>(sp_->GetPieceSize()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = sp_->IdToPiece(static_cast<int>(i));
  return out;
}

namespace {
std::string piece_or_none(const sentencepiece::SentencePieceProcessor& sp, int id) {
  return id >= 0 && id < sp.GetPieceSize() ? sp.IdToPiece(id) : std::string();
}
}  // namespace

std::string SentencePiece::bos_piece() const { return piece_or_none(*sp_, sp_->bos_id()); }
std::string SentencePiece::eos_piece() const { return piece_or_none(*sp_, sp_->eos_id()); }
std::string SentencePiece::unk_piece() const { return piece_or_none(*sp_, sp_->unk_id()); }
std::string SentencePiece::pad_piece() const { return piece_or_none(*sp_, sp_->pad_id()); }

std::vector<std::string> split_language_code(const std::string& text, std::string& rest) {
  auto line_end = [&](size_t i) { return std::min(text.find('\n', i), text.size()); };
  std::vector<std::string> code;
  const size_t first = language_code_end(text, 0, line_end(0));
  if (first != std::string::npos) code.push_back(text.substr(0, first));
  rest.clear();
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, ">>") != 0) {
      rest += text[i++];
      continue;
    }
    const size_t eol = line_end(i), end = language_code_end(text, i, eol);
    if (end != std::string::npos) {
      i = end;  // re.sub drops every match, not only the leading one
    } else {    // no '<<' far enough on this line: no later '>>' on it matches either
      rest.append(text, i, eol - i);
      i = eol;
    }
  }
  return code;
}

void SentencePiece::tokenize(const Vocab& v, const std::string& text, Tokenized& out) const {
  if (own_ids_) {
    for (const TextSegment& seg : split_specials(v, text, specials_)) {
      if (seg.special >= 0) {
        v.push(out, seg.special, v.token(seg.special), true);
        continue;
      }
      std::vector<std::string> pieces;
      if (!sp_->Encode(text.substr(seg.offset, seg.length), &pieces).ok()) pieces.clear();
      for (size_t k = 0; k < pieces.size(); ++k) {
        const bool start = k == 0 || pieces[k].compare(0, kSpace.size(), kSpace) == 0;
        const int id = v.id(pieces[k]);  // an unknown character comes out as its own text -> <unk>
        v.push(out, id, std::move(pieces[k]), start);
      }
    }
    return;
  }
  std::string rest;
  std::vector<std::string> pieces = split_language_code(text, rest);
  std::vector<std::string> body;
  if (!sp_->Encode(rest, &body).ok()) body.clear();  // only fails on a model that did not load
  pieces.insert(pieces.end(), std::make_move_iterator(body.begin()), std::make_move_iterator(body.end()));
  for (size_t k = 0; k < pieces.size(); ++k) {
    const bool start = k == 0 || pieces[k].compare(0, kSpace.size(), kSpace) == 0;
    const int id = v.id(pieces[k]);  // unknown characters come out as their own text -> <unk>
    v.push(out, id, std::move(pieces[k]), start);
  }
}

std::string SentencePiece::detokenize(const Vocab& v, const std::vector<int>& ids) const {
  if (own_ids_) {  // SentencePiece's own decoder: '▁' -> space, byte pieces -> bytes, controls dropped
    std::string out;
    std::vector<int> valid;
    for (int id : ids)
      if (id >= 0 && id < sp_->GetPieceSize()) valid.push_back(id);
    if (!sp_->Decode(valid, &out).ok()) out.clear();
    return out;
  }
  std::string s;
  for (int id : ids) s += v.token(id);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, kSpace.size(), kSpace) == 0) {
      if (!out.empty()) out += ' ';  // the dummy prefix of the first word is dropped
      i += kSpace.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace sf

namespace sf {

std::string SentencePiece::display(const std::string& token) const { return display_byte_piece(token); }

std::string SentencePiece::bytes(const std::string& token) const {
  const int b = byte_fallback_value(token);
  return b < 0 ? token : std::string(1, static_cast<char>(b));
}

}  // namespace sf
