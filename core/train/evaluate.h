// evaluate.h — exact match of greedy decoding on held-out examples (the tasks' metric), or, for a
// language model whose examples carry probes (tasks.h), the share of probes where greedy decoding
// of the next word after the sentence's prefix picks an accepted word.
//
// The decoding is the stepper's batched greedy decoder (stepper/decoding.h, greedy_decode_batch,
// KV cache on): evaluation of 1,000 short sequences is then a few dozen batched decoder steps.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "model/model.h"
#include "stepper/decoding.h"
#include "train/tasks.h"

namespace sf {

struct EvalResult {
  std::string metric = "exact match";  // or "probe accuracy" (examples with probes)
  int examples = 0;                    // examples, or probes
  int exact = 0;  // outputs equal to the answer, token for token, then </s>; or probes answered right
  double exact_match() const { return examples ? static_cast<double>(exact) / examples : 0.0; }
  std::vector<int> failures;                          // indices of the first few wrong examples (or probes)
  std::vector<std::vector<int>> outputs;              // per example, the generated ids (per probe, the one word)
  std::map<std::string, std::array<int, 2>> by_kind;  // probes: kind → {right, total}
};

// Probes are counted when any example has them (a language model's held-out sentences).
EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk = 256);

}  // namespace sf
