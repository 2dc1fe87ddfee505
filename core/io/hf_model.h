// hf_model.h — a Hugging Face hub folder (or its model.safetensors) opened as a Model, unchanged:
// config.json -> Config (io/hf_config.h), model.safetensors -> Weights (io/hf_weights.h, mapped,
// each tensor copied once), the tokenizer files -> Vocab (text/hf_tokenizers.h).
//
// Files read per family (docs/real-models.md, "Loading"):
//   gpt2   model.safetensors, config.json, vocab.json, merges.txt
//   marian model.safetensors, config.json, source.spm, target.spm, vocab.json (target_vocab.json
//          with separate vocabularies), tokenizer_config.json
//   bert   model.safetensors, config.json, vocab.txt, tokenizer_config.json (do_lower_case)
//   llama, qwen2, mistral, gpt_neox: model.safetensors or the shards of
//          model.safetensors.index.json, config.json, the tokenizer files (text/hf_tokenizers.h)
// pytorch_model.bin, tf_model.h5 and flax_model.msgpack are refused with a message that says how
// to convert them.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "io/hf_config.h"
#include "io/safetensors.h"
#include "model/model.h"

namespace sf {

// Where a hub model's files are.
struct HfFiles {
  std::string folder;               // the model folder
  std::string weights;              // folder/model.safetensors (or the .safetensors file that was named), or
                                    // folder/model.safetensors.index.json for a sharded checkpoint
  std::string config;               // folder/config.json
  std::vector<std::string> shards;  // sharded: the files the index's weight_map names, in order
};

// True when `path` should be opened as a hub model: a folder, or a .safetensors file without
// stepformer's configuration that has a config.json beside it.
bool is_hf_path(const std::string& path);

// Resolves a folder or a .safetensors path; a folder without model.safetensors may hold a sharded
// checkpoint (model.safetensors.index.json and the files its weight_map names, each a plain file
// name beside it). Refuses pickles and TF/Flax files by name.
Result<HfFiles> find_hf_files(const std::string& path);
// The shard files of a model.safetensors.index.json's text (`what` names it in messages): the
// distinct files of its weight_map, sorted; each must be a plain file name (no folder part).
Result<std::vector<std::string>> parse_shard_index(const std::string& json_text, const std::string& what);
Result<HfConfig> read_hf_config(const HfFiles& files);

// The tokenizer(s) of a hub folder: source and target vocabularies (the same for GPT-2 and BERT).
struct HfVocabs {
  Vocab src, tgt;
  std::string tokenizer;           // "byte-level BPE", "SentencePiece", "WordPiece"
  std::vector<std::string> files;  // the tokenizer files read
};
Result<HfVocabs> load_hf_vocabs(const std::string& folder, const HfConfig& h);

// The model from its files with the vocabularies given (their sizes must match the tables).
//
// A Llama, Qwen2, Mistral or GPT-NeoX checkpoint whose matrices are all BF16 (or all F16) keeps
// them so: the projections, the token embedding and the output projection stay 16-bit
// (hub_matrix_storage, Linear::half, Weights::tgt_embed_half), half the memory of float32, and
// the products widen them in registers (base/half.h); norms and biases are widened to float32.
// `widen` true widens everything to float32 instead (the form every other checkpoint loads in).
Result<Model> load_hf_model(const HfFiles& files, HfConfig h, HfVocabs vocabs, bool widen = false);
// BF16 or F16 when a checkpoint of `model_type` keeps its matrices 16-bit: a decoder-only hub
// family (llama, qwen2, mistral, gpt_neox) whose 2-D tensors are all of that one dtype; F32
// otherwise.
WeightStorage hub_matrix_storage(const std::string& model_type, const std::vector<const SafetensorsHeader*>& headers);
// Everything: find the files, read config.json, the tokenizer files and the weights.
Result<Model> load_hf_model(const std::string& path);

}  // namespace sf
