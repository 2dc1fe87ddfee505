#include "text/sentencepiece.h"

#include <sentencepiece_processor.h>

namespace sf {

namespace {
const std::string kSpace = "\xE2\x96\x81";  // '▁' U+2581, SentencePiece's word-boundary mark
}

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

void SentencePiece::tokenize(const Vocab& v, const std::string& text, Tokenized& out) const {
  std::vector<std::string> pieces;
  if (!sp_->Encode(text, &pieces).ok()) pieces.clear();  // only fails on a model that did not load
  for (size_t k = 0; k < pieces.size(); ++k) {
    const bool start = k == 0 || pieces[k].compare(0, kSpace.size(), kSpace) == 0;
    const int id = v.id(pieces[k]);  // unknown characters come out as their own text -> <unk>
    v.push(out, id, std::move(pieces[k]), start);
  }
}

std::string SentencePiece::detokenize(const Vocab& v, const std::vector<int>& ids) const {
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
