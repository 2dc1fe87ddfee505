// hf_tokenizers.cpp — file loaders for the Hugging Face tokenizers (stubs until each lands).
#include "text/hf_tokenizers.h"

namespace sf {

Result<Vocab> load_byte_bpe(const std::string& vocab_json, const std::string& merges_txt) {
  return Error{vocab_json + " + " + merges_txt + ": byte-level BPE loading is not implemented yet"};
}

Result<Vocab> load_wordpiece(const std::string& vocab_txt, bool) {
  return Error{vocab_txt + ": WordPiece loading is not implemented yet"};
}

Result<Vocab> load_sentencepiece(const std::string& spm_model, const std::string& vocab_json) {
  return Error{spm_model + " + " + vocab_json + ": SentencePiece loading is not implemented yet"};
}

}  // namespace sf
