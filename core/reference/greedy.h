// greedy.h — generating text: the decoder's highest-scoring token, appended, one step at a time.
#pragma once

#include <vector>

#include "model/model.h"

namespace sf::ref {

// "Attention and Transformers", Transformer Procedure; "Transformer Architecture", Self-Attention
// During Inference: encode the source once, feed <s> and the prompt through the cached decoder
// step, then append the argmax and step again, until </s>, max_new tokens or max_len positions.
// src_ids (n) for an encoder-decoder model (else ignored); prompt (p) the decoder's first tokens
// after <s> (empty for translation). Returns the generated ids, without </s>.
std::vector<int> greedy_decode(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& prompt,
                               int max_new);

}  // namespace sf::ref
