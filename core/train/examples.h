// examples.h — example inputs for a model, chosen from what the model is:
//   1. a stepformer model records its task ("stepformer.task" in the file's metadata): examples
//      come from that task's own generator (held-out split), as the model was trained to read
//      them — dates for `dates`, a prompt ending in "=" for `copy-lm`. A task added to
//      make_task() gets examples without a change here;
//   2. a model that reads words or subwords (Hugging Face folders: GPT-2, BERT, Marian): English
//      sentences, kept only when every word is in the vocabulary;
//   3. otherwise digits or the first ordinary tokens of the vocabulary.
// A masked-LM encoder gets its middle word replaced by [MASK]. Every example fits the model's
// max_len with its framing tokens.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/config.h"
#include "train/tasks.h"

namespace sf {

struct ModelExample {
  std::string src_text;  // what a user types in the input box (decoder-only: the prompt)
  std::string tgt_text;  // the expected answer when the task knows it, else ""
  Example tokens;        // the same as vocabulary entries, no framing (make_batch reads these)
};

// Up to `n` examples for the model (fewer when its vocabulary offers fewer), with sources of
// different lengths where the source allows it. `seed` picks them; seed 0 starts with the file's
// "stepformer.example" when it has one. `metadata`: the model file's __metadata__ (empty for a
// folder).
std::vector<ModelExample> model_examples(const Config& c, const std::map<std::string, std::string>& metadata, int n,
                                         uint64_t seed = 0);

// The input text of model_examples(c, metadata, 1, seed) ("" when there is none).
std::string model_example_text(const Config& c, const std::map<std::string, std::string>& metadata, uint64_t seed = 0);

// For a masked-LM encoder: `text` with its middle word replaced by the mask token (unchanged when
// the model is no masked LM, the text already holds the mask token or has fewer than two words).
std::string with_mask_token(const Config& c, const std::string& text);

}  // namespace sf
