// masked.h — printing an encoder-only model's masked-token predictions (decode, trace, walk).
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"

namespace sf::cli {

// For every [MASK] of the input ids (n): the MLM head's top-5 tokens with probabilities, from its
// logits (n, V). Says so instead when the model has no MLM head or the input no [MASK].
void print_masked_predictions(const Model& m, const std::vector<int>& ids, const Mat& logits);

}  // namespace sf::cli
