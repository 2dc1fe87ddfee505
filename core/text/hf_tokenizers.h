// hf_tokenizers.h — loaders that turn Hugging Face tokenizer files into a Vocab.
//
// Each loader reads the files a hub checkpoint ships and returns a Vocab whose tokenize()
// dispatches to the matching subword tokenizer (text/byte_bpe, text/wordpiece, SentencePiece).
// Every bad file (missing, truncated JSON, unknown merge symbol, duplicate token, empty vocab,
// unreadable .spm) is a Result error naming the file, what was expected and what was found.
#pragma once

#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

// GPT-2 byte-level BPE from vocab.json (token -> id) and merges.txt (ranked merge pairs).
// Specials: <|endoftext|> is bos = eos; no pad, no unk (byte-level BPE covers every byte).
Result<Vocab> load_byte_bpe(const std::string& vocab_json, const std::string& merges_txt);

// BERT WordPiece from vocab.txt (one token per line, id = line number). `lowercase`: the uncased
// models' BasicTokenizer (lowercase + strip accents). Specials: [PAD] [UNK] [CLS] [SEP] [MASK].
Result<Vocab> load_wordpiece(const std::string& vocab_txt, bool lowercase);

// One side of a Marian model: the SentencePiece model (source.spm or target.spm) splits text into
// pieces, vocab.json (piece -> id, shared by both sides) numbers them; an unknown piece -> <unk>.
// Specials: <pad>, </s>, <unk>; no <s>. The framing code appends </s>.
Result<Vocab> load_sentencepiece(const std::string& spm_model, const std::string& vocab_json);

}  // namespace sf
