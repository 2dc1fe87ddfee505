// hf_tokenizers.h — loaders that turn Hugging Face tokenizer files into a Vocab.
//
// Each loader reads the files a hub checkpoint ships and returns a Vocab whose tokenize()
// dispatches to the matching subword tokenizer (text/byte_bpe.h, text/wordpiece.h,
// text/sentencepiece.h). Every bad file (missing, truncated JSON, unknown merge symbol, duplicate
// token, empty vocab, unreadable .spm) is a Result error naming the file, what was expected and
// what was found. Semantics and fixtures: tests/fixtures/hf/README.md.
#pragma once

#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

// GPT-2 byte-level BPE from vocab.json (token -> id, ids 0..n-1) and merges.txt (ranked merge
// pairs; both symbols and their concatenation must be tokens of vocab.json). The 256 one-byte
// tokens must exist. Specials: <|endoftext|> is bos = eos; no pad, no unk (every byte is a token).
Result<Vocab> load_byte_bpe(const std::string& vocab_json, const std::string& merges_txt);
// The same from a Hugging Face tokenizer.json (model.vocab, model.merges as "a b" or ["a", "b"],
// added_tokens kept whole in the text), for folders that ship only that file. Refuses pipelines
// other than GPT-2's (a normalizer, a pre-tokenizer other than plain ByteLevel, add_prefix_space).
Result<Vocab> load_byte_bpe_tokenizer_json(const std::string& tokenizer_json);

// A decoder-only hub folder's tokenizer (model_type llama, qwen2, mistral, gpt_neox), picked by
// the files present:
//   tokenizer.json   its model, normalizer and pre-tokenizer name the pipeline
//                    (text/tokenizer_json.h): byte-level BPE (GPT-2's ByteLevel regex as SmolLM2;
//                    Split regexes + ByteLevel as Qwen2 and Llama 3) or SentencePiece-style BPE
//                    with byte fallback (Llama 2, TinyLlama, Mistral); anything else is refused
//                    by name;
//   tokenizer.model  otherwise: a SentencePiece model through libsentencepiece, its pieces the ids.
// tokenizer_config.json, when present, names the specials and, with tokenizer.json's
// post_processor, says which are put around a text (Vocab::framing(), text/tokenizer_config.h).
struct HfTokenizer {
  Vocab vocab;
  std::string kind;                // "byte-level BPE" | "SentencePiece BPE"
  std::vector<std::string> files;  // the files read
};
Result<HfTokenizer> load_hf_tokenizer(const std::string& folder, const std::string& model_type);
// The SentencePiece half of the above: `spm_model` (tokenizer.model) with the specials and
// framing of `tokenizer_config_json` (may be absent).
Result<Vocab> load_sentencepiece_bpe(const std::string& spm_model, const std::string& tokenizer_config_json,
                                     const std::string& model_type);

// BERT WordPiece from vocab.txt (one token per line, id = line number). `lowercase`: the uncased
// models' BasicTokenizer (lowercase + NFD + strip accents). Specials, looked up by name: [UNK]
// [CLS] [SEP] required, [PAD] and [MASK] when present.
Result<Vocab> load_wordpiece(const std::string& vocab_txt, bool lowercase);
// do_lower_case from tokenizer_config.json; true (BertTokenizer's default) when the file or the
// key is absent.
Result<bool> wordpiece_lowercase(const std::string& tokenizer_config_json);

// One side of a Marian model: the SentencePiece model (source.spm for source text, target.spm for
// target text) splits text into pieces, vocab.json (piece -> id, shared by both sides) numbers
// them; a piece vocab.json lacks -> <unk>. Specials: <pad>, </s>, <unk>; no <s>. Vocab::encode()
// appends </s>.
Result<Vocab> load_sentencepiece(const std::string& spm_model, const std::string& vocab_json);

}  // namespace sf
