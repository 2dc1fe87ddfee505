// hf_files.h — reading Hugging Face tokenizer files: the file itself, and the checks every
// {token: id} vocabulary gets (text/hf_tokenizers.cpp, text/tokenizer_json.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace sf {

// The bytes of `path`; the message says `expected` and what was there instead.
Result<std::string> read_file(const std::string& path, const char* expected);
// A token quoted for a message (cut at 40 bytes, ill-formed UTF-8 repaired).
std::string shown(const std::string& s);
// (token, id) pairs -> tokens by id. The ids must number the tokens 0..n-1, each once.
Result<std::vector<std::string>> tokens_by_id(std::vector<std::pair<std::string, int64_t>> entries,
                                              const std::string& path);

// One merge as written, and where (for messages).
struct MergeText {
  std::string left, right, at;
};
// tokenizer.json's model.merges: "left right" (tokenizers < 0.20) or ["left", "right"] each.
Result<std::vector<MergeText>> merges_from_json(const nlohmann::json& list, const std::string& path);

}  // namespace sf
