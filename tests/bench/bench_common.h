// bench_common.h — pieces the decoding benchmarks share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"

namespace sf {

// Rolls a single-sequence cache back by one row, so every iteration measures the same step t.
inline void drop_last_row(KvCache& c) {
  --c.length;
  --c.step;
  c.ids.pop_back();
  c.row_step.pop_back();
}

// A model of shape `c` with Xavier-random weights and word vocabularies of `vocab` entries
// (<pad> <s> </s> <unk> w4 w5 …): the target's, and the source's when `c` has an encoder.
inline Model random_model(Config c, int vocab, uint64_t seed = 1) {
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(v.size()) < vocab) v.push_back("w" + std::to_string(v.size()));
  if (c.has_encoder()) c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  Weights w;
  init_xavier(w, c, seed);
  return Model::make(std::move(c), std::move(w));
}

}  // namespace sf
