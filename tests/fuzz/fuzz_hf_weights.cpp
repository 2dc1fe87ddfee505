// fuzz_hf_weights.cpp — libFuzzer harness: a Hugging Face model.safetensors read through the
// mapped reader into a model's weights (io/hf_model, io/hf_weights, io/tensor_placement): the
// first byte picks the family (gpt2, marian, bert, llama, qwen2, gpt_neox; each with its tiny
// fixture's config.json) and the rest is the file; or (mode 3) the rest is a config.json for
// gpt2-tiny's weights; or (mode 7) the rest is a model.safetensors.index.json beside
// mistral-tiny-sharded's two shards. Every input must end in a model or a message — never a
// crash, an out-of-bounds read (ASan) or undefined behaviour (UBSan).
#include <unistd.h>

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
        "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 0})",
    nullptr,  // mode 3: the input is the config.json
    R"({"model_type": "llama", "hidden_size": 32, "intermediate_size": 48, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 12, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-5, "vocab_size": 300, "rope_scaling": {"rope_type": "llama3", "factor": 4.0,
        "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}})",
    R"({"model_type": "qwen2", "hidden_size": 32, "intermediate_size": 48, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 1, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
        "vocab_size": 300, "tie_word_embeddings": true, "rope_theta": 1000000.0})",
    R"({"model_type": "gpt_neox", "hidden_size": 32, "intermediate_size": 128, "num_attention_heads": 2,
        "num_hidden_layers": 2, "max_position_embeddings": 32, "layer_norm_eps": 1e-5, "rotary_pct": 0.25,
        "rotary_emb_base": 10000, "use_parallel_residual": true, "vocab_size": 304})",
    nullptr};  // mode 7: the input is the shard index

void copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream(to, std::ios::binary) << in.rdbuf();
}

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
  const int mode = data[0] % 8;
  const bool config_mode = mode == 3, index_mode = mode == 7;
  const std::string fixtures = std::string(STEPFORMER_SOURCE_DIR) + "/tests/fixtures/hf/";
  const char* const shards[] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  if (config_mode) {
    std::ofstream(dir + "/config.json") << rest;
    copy_file(fixtures + "gpt2-tiny/model.safetensors", dir + "/model.safetensors");
  } else if (index_mode) {
    copy_file(fixtures + "mistral-tiny-sharded/config.json", dir + "/config.json");
    for (const char* s : shards) copy_file(fixtures + "mistral-tiny-sharded/" + s, dir + "/" + s);
    std::ofstream(dir + "/model.safetensors.index.json") << rest;
  } else {
    std::ofstream(dir + "/config.json") << kConfigs[mode];
    std::ofstream(dir + "/model.safetensors", std::ios::binary) << rest;
  }
  const auto clean = [&] {
    for (const std::string f : {"model.safetensors", "config.json", "model.safetensors.index.json"})
      ::unlink((dir + "/" + f).c_str());
    for (const char* s : shards) ::unlink((dir + "/" + s).c_str());
  };
  auto files = sf::find_hf_files(dir);
  if (!files) {
    if (!index_mode || files.error().empty()) std::abort();  // only an index can make the folder unreadable
    clean();
    return 0;
  }
  auto h = sf::read_hf_config(*files);
  if (!h) {
    if (!config_mode || h.error().empty()) std::abort();  // the configurations above are valid
    clean();
    return 0;
  }
  if (h->vocab_size > 4096 || h->src_vocab_size > 4096) {
    clean();
    return 0;  // a stand-in vocabulary that big is slow, not interesting
  }
  sf::HfVocabs v;
  v.tgt = stand_in(h->vocab_size);
  v.src = stand_in(h->src_vocab_size);
  auto m = sf::load_hf_model(*files, *h, v);
  if (!m && m.error().empty()) std::abort();  // a failure always says why
  clean();
  return 0;
}
