// tokenizer_json.h — a Hugging Face tokenizer.json read into a Vocab with a BpePipeline engine
// (text/bpe_pipeline.h), for the decoder families' tokenizers.
//
// Read, as tokenizers' serialisation writes them:
//   model          BPE: vocab, merges ("a b" or ["a", "b"]), byte_fallback, fuse_unk,
//                  ignore_merges, unk_token (dropout, continuing_subword_prefix and
//                  end_of_word_suffix must be unset)
//   added_tokens   id, content, normalized, lstrip, rstrip (single_word must be false)
//   normalizer     null, NFC, Prepend, Replace (String pattern), or a Sequence of them
//   pre_tokenizer  null, ByteLevel (last), Split (Regex or String; every behavior; invert),
//                  Digits, Metaspace, or a Sequence of them
//   decoder        null, ByteLevel, Metaspace, Replace (String), ByteFallback, Fuse, Strip, or a
//                  Sequence of them
//   post_processor TemplateProcessing, ByteLevel, or a Sequence of them (text/tokenizer_config.h)
// Anything else — another model type (WordPiece, Unigram, WordLevel), normalizer
// (NFKC, Lowercase, Precompiled, …), pre-tokenizer (Whitespace, Punctuation, …) or option — is
// refused with its name. The pipeline is byte-level BPE when the pre-tokenizers end with
// ByteLevel (GPT-2, SmolLM2, Qwen2, Llama 3), SentencePiece-style BPE otherwise (Llama 2,
// TinyLlama, Mistral).
#pragma once

#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

struct LoadedTokenizer {
  Vocab vocab;
  std::string kind;  // "byte-level BPE" | "SentencePiece BPE"
};

// `tokenizer_config_json` may be absent (defaults apply); `model_type` is config.json's (for
// BOS/EOS, text/tokenizer_config.h).
Result<LoadedTokenizer> load_tokenizer_json(const std::string& tokenizer_json, const std::string& tokenizer_config_json,
                                            const std::string& model_type);

}  // namespace sf
