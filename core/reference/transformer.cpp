#include "reference/transformer.h"

#include "reference/decoder.h"
#include "reference/generator.h"

namespace sf::ref {

Output forward(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& tgt_ids) {
  const Config& c = m.config;
  Output out;
  if (c.has_encoder()) {
    Encoder enc = encoder(m, src_ids);
    out.memory = enc.memory;
    out.encoder_self = enc.self_weights;
  }
  if (c.has_decoder()) {
    Decoder dec = decoder(m, tgt_ids, c.has_cross_attention() ? &out.memory : nullptr, src_ids);
    out.logits = dec.logits;
    out.decoder_self = dec.self_weights;
    out.decoder_cross = dec.cross_weights;
  } else if (c.mlm_head) {
    out.logits = mlm_head(m, out.memory);
  }
  return out;
}

}  // namespace sf::ref
