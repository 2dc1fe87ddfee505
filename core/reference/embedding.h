// embedding.h — token ids to the vectors entering layer 0.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"

namespace sf::ref {

// "Transformer in details", Embedding Layer: row id of
// E, times s = √d where the model scales (Vaswani et al. 2017, §3.4; Marian), 1 otherwise (GPT-2, BERT).
Mat token_embedding(const Mat& table, const std::vector<int>& ids, float scale);  // table (V, d) -> (n, d)
float embedding_scale(const Config& c);                                           // √d or 1

// BERT's segment embedding (Devlin et al. 2019, §3.2): row T[type_t] for every token.
Mat token_type_embedding(const Mat& table, const std::vector<int>& type_ids);  // table (types, d) -> (n, d)

// The input of a stack: x = E[id]·s + p_t (+ T[type] and a LayerNorm of the sum, for BERT).
// ids (n) sit at positions pos0 .. pos0 + n − 1; `source` picks the encoder's table.
Mat embed(const Model& m, const std::vector<int>& ids, bool source, int pos0 = 0);  // (n, d)

}  // namespace sf::ref
