// generator.h — from the last hidden states to scores over the vocabulary.
#pragma once

#include "base/tensor.h"
#include "model/model.h"

namespace sf::ref {

// "Transformer Architecture", The Prediction Head: logits = x Wᵀ + b, one score per
// vocabulary entry; W is the target embedding itself when the model ties them (Vaswani §3.4).
Mat generator(const Model& m, const Mat& x);  // (n, d) -> (n, V)

// BERT's masked-LM head (Devlin et al. 2019): logits = LN(act(x W_tᵀ + b_t)) Eᵀ + b.
Mat mlm_head(const Model& m, const Mat& x);  // (n, d) -> (n, V)

}  // namespace sf::ref
