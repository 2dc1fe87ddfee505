#include "model/model.h"

#include "model/positional_encoding.h"

#include <cmath>

namespace sf {

Model Model::make(Config c, Weights w) {
  Model m;
  m.config = std::move(c);
  m.weights = std::move(w);
  m.sinusoid = positional_table(m.config.positional, m.config.max_len, m.config.d_model);
  if (m.config.positional == Positional::Rotary) m.rope_inv_freq = sf::rope_inv_freq(m.config);
  return m;
}

Rotation Model::rotation(int pos0, int rows_per_seq) const {
  Rotation r;
  if (config.positional != Positional::Rotary) return r;
  r.inv_freq = &rope_inv_freq;
  r.rot_dim = config.rotary_dim();
  r.d_head = config.d_k();
  r.pos0 = pos0;
  r.rows_per_seq = rows_per_seq;
  return r;
}

EmbeddingParams Model::embedding(bool source) const {
  const Config& c = config;
  EmbeddingParams p;
  p.table = source ? &weights.src_embedding(c) : &weights.tgt_embed;
  if (!source && !weights.tgt_embed_half.empty()) p.table_half = &weights.tgt_embed_half;
  p.positions = c.positional == Positional::Rotary ? nullptr : &positions();  // rotary: nothing added
  p.scale = c.scale_embeddings ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  if (c.n_token_types > 0) p.token_types = &weights.type_embed;
  if (c.embed_norm) p.norm = &weights.embed_norm;
  const Vocab& v = source ? c.src_vocab : c.tgt_vocab;
  p.sep = v.id("[SEP]");
  p.pad = v.pad();
  return p;
}

Result<bool> check_ids(const Model& m, const std::vector<int>& ids, bool source) {
  const char* side = source ? "source" : "target";
  const Vocab& v = source ? m.config.src_vocab : m.config.tgt_vocab;
  if (ids.empty()) return Error{std::string(side) + ": expected at least one token, found an empty input"};
  if (static_cast<int>(ids.size()) > m.config.max_len)
    return Error{std::string(side) + ": " + std::to_string(ids.size()) + " tokens, but the model's max_len is " +
                 std::to_string(m.config.max_len)};
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= v.size())
      return Error{std::string(side) + ": token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                   " is outside the vocabulary of " + std::to_string(v.size())};
  return true;
}

std::vector<int> with_bos(const Vocab& v, const std::vector<int>& ids) {
  if (v.framing()) return v.frame(ids);
  std::vector<int> out{v.bos() >= 0 ? v.bos() : v.pad()};
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

}  // namespace sf
