#include "stepper/run.h"

#include "model/decoder.h"
#include "model/encoder.h"

namespace sf {

namespace {

void warn_unknown(const Tokenized& t, const char* side, std::vector<std::string>& out) {
  for (int i : t.unknown)
    out.push_back(std::string(side) + ": '" + t.pieces[static_cast<size_t>(i)] + "' at position " + std::to_string(i) +
                  " is not in the vocabulary; read as <unk>");
}

}  // namespace

Result<PreparedInput> prepare_input(const Model& m, const std::string& src_text, const std::string& tgt_text) {
  const Config& c = m.config;
  PreparedInput in;
  if (c.has_encoder()) {
    // The encoder reads the text framed as the model was trained: BERT [CLS] … [SEP], Marian … </s>
    // (Vocab::encode; nothing is added for stepformer's own word/character vocabularies).
    in.src = c.src_vocab.encode(src_text);
    warn_unknown(in.src, "source", in.warnings);
    in.src_ids = in.src.ids;
    if (auto ok = check_ids(m, in.src_ids, true); !ok) return Error{ok.error()};
    if (!c.has_decoder()) {
      // Encoder-only (BERT): the input is all there is; its predictions are per position.
      if (tgt_text.find_first_not_of(" \t\r\n") != std::string::npos)
        return Error{"target: an encoder-only model has no decoder, so expected no target, found '" + tgt_text + "'"};
      return in;
    }
    in.tgt = c.tgt_vocab.tokenize(tgt_text);
    warn_unknown(in.tgt, "target", in.warnings);
    in.tgt_ids = with_bos(c.tgt_vocab, in.tgt.ids);
  } else {
    in.src = c.tgt_vocab.tokenize(src_text);
    warn_unknown(in.src, "prompt", in.warnings);
    if (in.src.ids.empty()) return Error{"prompt: expected at least one token, found an empty input"};
    in.tgt = c.tgt_vocab.tokenize(tgt_text);
    warn_unknown(in.tgt, "target", in.warnings);
    in.tgt_ids = with_bos(c.tgt_vocab, in.src.ids);
    in.tgt_ids.insert(in.tgt_ids.end(), in.tgt.ids.begin(), in.tgt.ids.end());
  }
  if (auto ok = check_ids(m, in.tgt_ids, false); !ok) return Error{ok.error() + " (counting the leading <s>)"};
  return in;
}

std::vector<int> decoder_prefix(const Model& m, const PreparedInput& in) {
  if (!m.config.has_decoder()) return {};
  return with_bos(m.config.tgt_vocab, m.config.has_encoder() ? std::vector<int>{} : in.src.ids);
}

int mask_token(const Vocab& v) {
  if (v.mask() >= 0) return v.mask();
  const int bert = v.id("[MASK]");
  return bert >= 0 ? bert : v.id("<mask>");
}

Trace run_forward(const Model& m, const PreparedInput& in, const RunOptions& opt, Recording kind) {
  Trace t;
  t.encoder.kind = t.decoder.kind = kind;
  EncoderContext enc;
  Mat memory;
  if (m.config.has_encoder()) {
    memory = encode(m, in.src_ids, 1, &t.encoder, opt);
    enc = {&memory, &in.src_ids};
  }
  if (m.config.has_decoder()) decode(m, in.tgt_ids, 1, enc, nullptr, &t.decoder, opt);
  return t;
}

}  // namespace sf
