#include "train/evaluate.h"

#include <algorithm>

#include "train/batch.h"

namespace sf {

EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk) {
  const Config& c = m.config;
  EvalResult r;
  r.examples = static_cast<int>(examples.size());
  for (size_t b0 = 0; b0 < examples.size(); b0 += static_cast<size_t>(chunk)) {
    const size_t b1 = std::min(examples.size(), b0 + static_cast<size_t>(chunk));
    std::vector<std::vector<int>> inputs;
    int max_new = 0;
    for (size_t i = b0; i < b1; ++i) {
      inputs.push_back(to_ids(c.has_encoder() ? c.src_vocab : c.tgt_vocab, examples[i].src));
      max_new = std::max(max_new, static_cast<int>(examples[i].tgt.size()) + 1);
    }
    auto outs = greedy_decode_batch(m, inputs, max_new);
    for (size_t i = b0; i < b1; ++i) {
      const bool ok = outs[i - b0] == to_ids(c.tgt_vocab, examples[i].tgt);
      r.exact += ok;
      if (!ok && r.failures.size() < 20) r.failures.push_back(static_cast<int>(i));
      r.outputs.push_back(std::move(outs[i - b0]));
    }
  }
  return r;
}

}  // namespace sf
