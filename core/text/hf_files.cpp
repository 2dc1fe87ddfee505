#include "text/hf_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "text/unicode.h"

namespace sf {

Result<std::string> read_file(const std::string& path, const char* expected) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Error{path + ": expected " + expected + ", found a folder"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": expected " + expected + ", found no readable file (" + std::strerror(errno) + ")"};
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Error{path + ": expected " + expected + ", found a file that cannot be read"};
  return s.str();
}

std::string shown(const std::string& s) {
  std::string q = s.size() > 40 ? s.substr(0, 37) + "..." : s;
  return "'" + unicode::repair_utf8(q) + "'";
}

// (token, id) pairs -> tokens by id. The ids must number the tokens 0..n-1, each once.
Result<std::vector<std::string>> tokens_by_id(std::vector<std::pair<std::string, int64_t>> entries,
                                              const std::string& path) {
  const size_t n = entries.size();
  if (n == 0) return Error{path + ": expected at least one token, found an empty vocabulary"};
  std::vector<std::string> tokens(n);
  std::vector<char> seen(n, 0);
  for (auto& [tok, id] : entries) {
    if (id < 0 || static_cast<size_t>(id) >= n)
      return Error{path + ": token " + shown(tok) + " has id " + std::to_string(id) + ", expected ids 0.." +
                   std::to_string(n - 1) + " (one per token)"};
    if (seen[static_cast<size_t>(id)]) {
      if (tokens[static_cast<size_t>(id)] == tok)
        return Error{path + ": token " + shown(tok) + " appears more than once"};
      return Error{path + ": id " + std::to_string(id) + " is given to both " + shown(tokens[static_cast<size_t>(id)]) +
                   " and " + shown(tok) + ", expected one token per id"};
    }
    seen[static_cast<size_t>(id)] = 1;
    tokens[static_cast<size_t>(id)] = std::move(tok);
  }
  return tokens;
}

Result<std::vector<MergeText>> merges_from_json(const nlohmann::json& list, const std::string& path) {
  if (!list.is_array())
    return Error{path + ": expected model.merges to be a list, found " + std::string(list.type_name())};
  std::vector<MergeText> merges;
  merges.reserve(list.size());
  for (size_t r = 0; r < list.size(); ++r) {
    const nlohmann::json& m = list[r];
    MergeText t{"", "", path + " model.merges[" + std::to_string(r) + "]: "};
    if (m.is_string()) {  // "left right" (tokenizers < 0.20)
      const std::string s = m;
      const size_t space = s.find(' ');
      if (space != std::string::npos) {
        t.left = s.substr(0, space);
        t.right = s.substr(space + 1);
      }
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["left", "right"]
      t.left = m[0];
      t.right = m[1];
    }
    if (t.left.empty() || t.right.empty() || (m.is_string() && t.right.find(' ') != std::string::npos))
      return Error{t.at + "expected \"left right\" or [\"left\", \"right\"], found " + shown(m.dump())};
    merges.push_back(std::move(t));
  }
  return merges;
}

}  // namespace sf
