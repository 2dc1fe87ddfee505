// tokenizer_config.json and tokenizer.json's post_processor: which tokens are the specials of a
// Hugging Face decoder tokenizer, and which of them are put around a text, with the reason.
//
// transformers decides BOS/EOS in one of two ways (tokenization_llama_fast.py,
// tokenization_utils_fast.py):
//   * LlamaTokenizer(Fast) and CodeLlamaTokenizer(Fast) (Llama 2, TinyLlama, Mistral; also the
//     class AutoTokenizer picks for model_type llama / mistral when tokenizer_config.json names
//     none, and for a folder with only tokenizer.model) and GPTNeoXTokenizerFast (Pythia):
//     add_bos_token and add_eos_token of tokenizer_config.json rebuild the post-processor —
//     bos_token first, eos_token last; the defaults are true / false for Llama, false / false for
//     GPT-NeoX;
//   * every other fast tokenizer (PreTrainedTokenizerFast for Llama 3, Qwen2TokenizerFast,
//     GPT2TokenizerFast for SmolLM2): tokenizer.json's post_processor — a TemplateProcessing's
//     single-sequence template says which specials go before and after $A; ByteLevel (offsets
//     only) or none adds nothing.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

struct TokenizerConfig {
  std::string path;             // for messages; empty when the folder has no tokenizer_config.json
  std::string tokenizer_class;  // "LlamaTokenizer", "PreTrainedTokenizerFast", … ("" when absent)
  std::optional<bool> add_bos_token, add_eos_token;
  // bos_token, eos_token, pad_token, unk_token: a string, an AddedToken object's "content", or
  // null (none); nullopt when the key is absent.
  std::optional<std::string> bos, eos, pad, unk;
};

// Reads tokenizer_config.json; a missing file gives an empty TokenizerConfig (defaults apply).
Result<TokenizerConfig> read_tokenizer_config(const std::string& path);

// The special names: tokenizer_config.json's where it gives them, else `defaults` (the
// SentencePiece model's own, or none).
SpecialNames special_names(const TokenizerConfig& c, const SpecialNames& defaults);

// What is put around a text, and why (Vocab::framing), as above. `model_type`: config.json's (for
// the class AutoTokenizer picks); `sentencepiece_only`: the folder has tokenizer.model and no
// tokenizer.json; `post_processor`: tokenizer.json's (null when absent). `where` names
// tokenizer.json in messages. Fails for a post-processor other than TemplateProcessing / ByteLevel
// / a Sequence of those, a template naming a token the vocabulary lacks, and add_bos_token = true
// without a bos_token.
Result<Framing> decide_framing(const Vocab& v, const TokenizerConfig& c, const std::string& model_type,
                               bool sentencepiece_only, const nlohmann::json* post_processor, const std::string& where);

// GPT-2's: stepformer starts every input with <|endoftext|>, which GPT-2's tokenizer does not add.
Framing gpt2_framing(const Vocab& v);

}  // namespace sf
