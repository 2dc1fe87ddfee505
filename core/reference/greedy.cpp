#include "reference/greedy.h"

#include "reference/encoder.h"
#include "reference/kv_cache.h"

namespace sf::ref {

std::vector<int> greedy_decode(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& prompt,
                               int max_new) {
  const Config& c = m.config;
  const Mat memory = c.has_encoder() ? encoder(m, src_ids).memory : Mat();  // (n, d)
  KvCache cache = start_cache(m, c.has_encoder() ? &memory : nullptr, src_ids);
  RowVec logits;  // (V) scores for the next token
  for (int id : with_bos(c.tgt_vocab, prompt)) logits = decoder_step(m, cache, id).logits;
  std::vector<int> out;
  while (static_cast<int>(out.size()) < max_new) {
    Eigen::Index next = 0;
    logits.maxCoeff(&next);  // the highest score (the first, on a tie)
    if (next == c.tgt_vocab.eos()) break;
    out.push_back(static_cast<int>(next));
    if (static_cast<int>(cache.ids.size()) == c.max_len) break;  // no position left to step into
    logits = decoder_step(m, cache, out.back()).logits;
  }
  return out;
}

}  // namespace sf::ref
