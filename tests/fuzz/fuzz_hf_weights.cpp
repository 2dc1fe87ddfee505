// fuzz_hf_weights.cpp — libFuzzer harness: a Hugging Face model.safetensors read through the
// mapped reader into a model's weights (io/hf_model, io/hf_weights, io/tensor_placement): the
// first byte picks the family (gpt2, marian, bert; each with its tiny fixture's config.json),
// the rest is the file. Every input must end in a model or a message — never a crash, an
// out-of-bounds read (ASan) or undefined behaviour (UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "io/hf_model.h"
#include "scratch_dir.h"

namespace {

// The tiny fixtures' configurations (tests/fixtures/hf/*/config.json), the keys that matter.
const char* const kConfigs[] = {
    R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 32, "n_head": 4, "n_layer": 2,
        "n_positions": 32, "n_inner": null, "vocab_size": 757, "layer_norm_epsilon": 1e-5})",
    R"({"model_type": "marian", "d_model": 32, "encoder_layers": 2, "decoder_layers": 2,
        "encoder_attention_heads": 4, "decoder_attention_heads": 2, "encoder_ffn_dim": 48, "decoder_ffn_dim": 64,
        "vocab_size": 328, "decoder_vocab_size": 328, "max_position_embeddings": 64, "scale_embedding": true,
        "pad_token_id": 327, "decoder_start_token_id": 327, "activation_function": "swish"})",
    R"({"model_type": "bert", "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
        "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 311,
        "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 0})"};

sf::Vocab stand_in(int size) {
  std::vector<std::string> t{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(t.size()) < size) t.push_back("t" + std::to_string(t.size()));
  return *sf::Vocab::make(t, sf::Tokenizer::Word, "fuzz");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // config.json and model.safetensors, rewritten for every input; the folder is removed at exit.
  static const sf::test::ScratchDir scratch("fuzz_hf_weights");
  const std::string& dir = scratch.dir();
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool config_mode = data[0] % 4 == 3;
  std::ofstream(dir + "/config.json") << (config_mode ? rest.c_str() : kConfigs[data[0] % 4]);
  if (config_mode) {
    std::ifstream tiny(std::string(STEPFORMER_SOURCE_DIR) + "/tests/fixtures/hf/gpt2-tiny/model.safetensors",
                       std::ios::binary);
    std::ofstream(dir + "/model.safetensors", std::ios::binary) << tiny.rdbuf();
  } else {
    std::ofstream(dir + "/model.safetensors", std::ios::binary) << rest;
  }
  auto files = sf::find_hf_files(dir);
  if (!files) std::abort();
  auto h = sf::read_hf_config(*files);
  if (!h) {
    if (!config_mode || h.error().empty()) std::abort();  // the configurations above are valid
    return 0;
  }
  if (h->vocab_size > 4096 || h->src_vocab_size > 4096)
    return 0;  // a stand-in vocabulary that big is slow, not interesting
  sf::HfVocabs v;
  v.tgt = stand_in(h->vocab_size);
  v.src = stand_in(h->src_vocab_size);
  auto m = sf::load_hf_model(*files, *h, v);
  if (!m && m.error().empty()) std::abort();  // a failure always says why
  return 0;
}
