// evaluate.h — exact match of greedy decoding on held-out examples (the tasks' metric).
//
// Greedy decoding here is batched and recomputes the decoder over the whole prefix at each step
// (no KV cache): evaluation of 1,000 short sequences is then a few dozen batched forward passes.
// The stepper's decoding.h does the same one sequence at a time with a cache, for the explorer.
#pragma once

#include <vector>

#include "model/model.h"
#include "train/tasks.h"

namespace sf {

// inputs: per example the source ids (encoder-decoder) or the prompt ids without <s>
// (decoder-only). Returns per example the generated ids, without </s>, at most max_new of them.
std::vector<std::vector<int>> greedy_decode_batch(const Model& m, const std::vector<std::vector<int>>& inputs,
                                                  int max_new);

struct EvalResult {
  int examples = 0;
  int exact = 0;                 // outputs equal to the answer, token for token, then </s>
  double exact_match() const { return examples ? static_cast<double>(exact) / examples : 0.0; }
  std::vector<int> failures;     // indices of the first few wrong examples
  std::vector<std::vector<int>> outputs;  // per example, the generated ids
};

EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk = 256);

}  // namespace sf
