// evaluate.h — exact match of greedy decoding on held-out examples (the tasks' metric).
//
// The decoding is the stepper's batched greedy decoder (stepper/decoding.h, greedy_decode_batch,
// KV cache on): evaluation of 1,000 short sequences is then a few dozen batched decoder steps.
#pragma once

#include <vector>

#include "model/model.h"
#include "stepper/decoding.h"
#include "train/tasks.h"

namespace sf {

struct EvalResult {
  int examples = 0;
  int exact = 0;  // outputs equal to the answer, token for token, then </s>
  double exact_match() const { return examples ? static_cast<double>(exact) / examples : 0.0; }
  std::vector<int> failures;              // indices of the first few wrong examples
  std::vector<std::vector<int>> outputs;  // per example, the generated ids
};

EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk = 256);

}  // namespace sf
