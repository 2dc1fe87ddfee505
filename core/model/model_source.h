// model_source.h — where a loaded model came from: the facts `stepformer info` and the explorer's
// Model panel show (family, folder, files read, the dtype stored on disk, the tokenizer).
//
// Filled by the loaders in io/ (io/checkpoint.cpp for stepformer's own files, io/hf_model.cpp for
// Hugging Face hub folders); a model made in memory (init, training) keeps the defaults.
#pragma once

#include <string>
#include <vector>

#include "base/half.h"

namespace sf {

struct ModelSource {
  std::string family = "stepformer";  // "stepformer" | "gpt2" | "marian" | "bert" (config.json model_type)
  std::string architecture;           // config.json "architectures"[0], e.g. "GPT2LMHeadModel"; empty for stepformer
  std::string path;                   // what was opened: a .safetensors file or a hub folder
  std::vector<std::string> files;     // every file read, weights first (config, tokenizer files after)
  std::string stored_dtype = "F32";   // the weights' dtype on disk: "F32", "F16", "BF16" or e.g. "F16+F32"
  bool converted = false;             // some stored tensor was widened to F32 on load (with `matrices`
                                      // BF16/F16: the norms and biases)
  WeightStorage matrices = WeightStorage::F32;  // the weight matrices as held: F32, or kept BF16/F16 (base/half.h)
  std::string tokenizer = "word";               // "word", "char", "byte-level BPE", "WordPiece", "SentencePiece"

  bool is_hub() const { return family != "stepformer"; }
  // How the stored dtype is held, for `info` and the Model panel: "" (as stored), "converted to F32
  // on load", or "matrices kept BF16, norms and biases converted to F32".
  std::string held() const {
    if (matrices != WeightStorage::F32)
      return std::string("matrices kept ") + to_string(matrices) +
             (converted ? ", norms and biases converted to F32" : "");
    return converted ? "converted to F32 on load" : "";
  }
};

}  // namespace sf
