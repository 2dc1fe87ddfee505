// word_order.h — what positional encoding is for ("Transformer Architecture" lecture, Positional
// encoding): self-attention alone is permutation-equivariant, so without PE the stack gives a
// token the same output wherever it stands. The model runs on a sequence and on its reverse, with
// and without PE, and the outputs of each token in the two orders are compared.
#pragma once

#include <vector>

#include "model/model.h"
#include "stepper/run.h"

namespace sf {

// One setting (with or without PE).
struct WordOrderRun {
  std::vector<float> per_token;  // (n) max_k |out(x)[i, k] − out(rev x)[j(i), k]|, j(i) where token i moved
  float max_diff = 0;            // the largest of per_token
  int next = -1;                 // the first prediction on x (target vocabulary; encoder-only:
                                 // source); −1: the model predicts nothing
  int next_reversed = -1;        // the same on rev x
};

struct WordOrder {
  std::vector<int> ids;       // (n) the source (models with an encoder) or <s> + prompt (decoder-only)
  std::vector<int> reversed;  // (n) the same with its order reversed (<s> stays first)
  WordOrderRun with_pe, without_pe;
};

// Compared are the encoder's memory (encoder models) or the decoder stack's output (decoder-only).
// The predictions: encoder-decoder, the greedy first output token; decoder-only, the next token
// after the prompt; encoder-only with an MLM head, the top token at the first mask (position 0
// without one), which the reversal moves to n − 1 − p; without a head, none.
WordOrder word_order(const Model& m, const PreparedInput& in);

// Where the reversal puts token i of n when the first `skip` tokens stay in place.
int reversed_position(int i, int n, int skip);

}  // namespace sf
