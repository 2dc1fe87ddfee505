// hf_config.h — a Hugging Face config.json read into stepformer's Config, per model_type.
//
//   gpt2   (GPT2LMHeadModel): decoder-only, pre-LN, learned positions, tied lm_head
//   marian (MarianMTModel):   encoder-decoder, post-LN, Marian's sines-then-cosines table, × √d
//   bert   (BertForMaskedLM, BertModel): encoder-only, post-LN, learned + token-type positions,
//          embedding LayerNorm, the MLM head when the weights have one
//   llama  (LlamaForCausalLM: Llama 2/3.x, TinyLlama, SmolLM), qwen2, mistral: decoder-only,
//          pre-RMSNorm, rotary (rope_theta; rope_scaling "linear" / "llama3"), grouped-query
//          attention, SwiGLU; Qwen2's q/k/v biases, Llama's attention_bias / mlp_bias, head_dim,
//          Mistral's sliding_window
//   gpt_neox (Pythia): decoder-only, pre-LN, partial rotary (rotary_pct), parallel residual
//          (use_parallel_residual), untied embed_out
//
// Only the architecture is read here; the vocabularies come from the tokenizer files
// (text/hf_tokenizers.h) and are set by io/hf_model.cpp.
#pragma once

#include <string>

#include "base/result.h"
#include "model/config.h"

namespace sf {

struct HfConfig {
  std::string model_type;           // "gpt2" | "marian" | "bert" | "llama" | "qwen2" | "mistral" | "gpt_neox"
  std::string architecture;         // "architectures"[0] when present, e.g. "GPT2LMHeadModel"
  Config config;                    // everything but the vocabularies
  int vocab_size = 0;               // rows of the (target) embedding table
  int src_vocab_size = 0;           // Marian with separate vocabularies: rows of the encoder table; else = vocab_size
  bool tie_word_embeddings = true;  // the output projection is the (target) embedding table
  int decoder_start_token_id = -1;  // Marian: the first decoder input (<pad>)
  int pad_token_id = -1;
};

// `what` names the file in messages ("'DIR/config.json'"). Fails for a model_type other than the
// seven above and for options stepformer does not implement (each named with the value found).
Result<HfConfig> parse_hf_config(const std::string& json_text, const std::string& what);

}  // namespace sf
