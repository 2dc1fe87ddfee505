// hf_tokenizers.cpp — reading and checking the tokenizer files of Hugging Face checkpoints.
#include "text/hf_tokenizers.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "text/byte_bpe.h"
#include "text/sentencepiece.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace sf {

namespace {

using json = nlohmann::json;

Result<std::string> read_file(const std::string& path, const char* expected) {
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

// vocab.json, {"token": id, ...} — read with a SAX handler: 50,257 entries without building a
// DOM, and a key that repeats (which a DOM would silently overwrite) is reported.
class VocabJsonReader : public nlohmann::json_sax<json> {
 public:
  std::vector<std::pair<std::string, int64_t>> entries;
  std::string error;

  bool start_object(std::size_t) override {
    if (depth_++ == 0) return true;
    return fail("a value of token " + shown(key_) + ": expected an integer id, found an object");
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool number_integer(number_integer_t v) override { return id(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return id(v > static_cast<number_unsigned_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v));
  }
  bool number_float(number_float_t v, const string_t&) override { return other("the number " + std::to_string(v)); }
  bool null() override { return other("null"); }
  bool boolean(bool b) override { return other(b ? "true" : "false"); }
  bool string(string_t& s) override { return other("the string " + shown(s)); }
  bool binary(binary_t&) override { return other("binary data"); }
  bool start_array(std::size_t) override { return other("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(std::string("expected a JSON object {token: id}, found invalid JSON (") + e.what() + ")");
  }

 private:
  bool id(int64_t v) {
    if (depth_ != 1) return other("the number " + std::to_string(v));
    entries.emplace_back(key_, v);
    return true;
  }
  bool other(const std::string& found) {
    if (depth_ == 0) return fail("expected a JSON object {token: id}, found " + found);
    return fail("token " + shown(key_) + ": expected an integer id, found " + found);
  }
  bool fail(std::string m) {
    if (error.empty()) error = std::move(m);
    return false;
  }
  int depth_ = 0;
  std::string key_;
};

// vocab.json -> tokens by id. The ids must number the tokens 0..n-1, each once.
Result<std::vector<std::string>> read_vocab_json(const std::string& path) {
  auto text = read_file(path, "a JSON object {token: id}");
  if (!text) return Error{text.error()};
  VocabJsonReader r;
  json::sax_parse(*text, &r);
  if (!r.error.empty()) return Error{path + ": " + r.error};
  const size_t n = r.entries.size();
  if (n == 0) return Error{path + ": expected at least one token, found an empty object"};
  std::vector<std::string> tokens(n);
  std::vector<char> seen(n, 0);
  for (auto& [tok, id] : r.entries) {
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

// merges.txt: '#version: …' header, then one merge per line, 'left right', rank = order.
Result<std::vector<std::array<int, 3>>> read_merges(const std::string& path, const Vocab& v, const std::string& vocab_path) {
  auto text = read_file(path, "BPE merges, one 'left right' pair per line");
  if (!text) return Error{text.error()};
  std::vector<std::array<int, 3>> merges;
  std::istringstream in(*text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.compare(0, 8, "#version") == 0) continue;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t space = line.find(' ');
    const std::string left = line.substr(0, space);
    const std::string right = space == std::string::npos ? "" : line.substr(space + 1);
    const std::string at = path + " line " + std::to_string(number) + ": ";
    if (left.empty() || right.empty() || right.find(' ') != std::string::npos)
      return Error{at + "expected two symbols separated by one space, found " + shown(line)};
    std::array<int, 3> m{v.id(left), v.id(right), v.id(left + right)};
    for (int k = 0; k < 3; ++k)
      if (m[static_cast<size_t>(k)] < 0) {
        const std::string& sym = k == 0 ? left : k == 1 ? right : left + right;
        return Error{at + "expected symbols that " + vocab_path + " holds, found " + shown(sym) + " (" +
                     (k == 2 ? "the merged symbol" : k == 0 ? "the left symbol" : "the right symbol") +
                     "), which it does not"};
      }
    merges.push_back(m);
  }
  return merges;
}

}  // namespace

Result<Vocab> load_byte_bpe(const std::string& vocab_json, const std::string& merges_txt) {
  auto tokens = read_vocab_json(vocab_json);
  if (!tokens) return Error{tokens.error()};
  auto v = Vocab::make(std::move(*tokens), Tokenizer::ByteBpe, vocab_json);
  if (!v) return v;
  std::vector<int> byte_ids(256);
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    unicode::append_utf8(sym, bytes_to_unicode()[static_cast<size_t>(b)]);
    byte_ids[static_cast<size_t>(b)] = v->id(sym);
    if (byte_ids[static_cast<size_t>(b)] < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return Error{vocab_json + ": expected the 256 one-byte tokens of GPT-2's byte alphabet, found no '" + sym +
                   "' (byte " + hex + ")"};
    }
  }
  auto merges = read_merges(merges_txt, *v, vocab_json);
  if (!merges) return Error{merges.error()};
  v->set_engine(std::make_shared<ByteBpe>(std::move(byte_ids), *merges, std::vector<int>{v->eos()}));
  return v;
}

Result<Vocab> load_wordpiece(const std::string& vocab_txt, bool lowercase) {
  auto text = read_file(vocab_txt, "a WordPiece vocabulary, one token per line");
  if (!text) return Error{text.error()};
  std::vector<std::string> tokens;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) tokens.push_back(line);
  if (tokens.empty()) return Error{vocab_txt + ": expected one token per line, found an empty file"};
  auto v = Vocab::make(std::move(tokens), Tokenizer::WordPiece, vocab_txt);
  if (!v) return v;
  std::vector<int> specials;
  for (int id : {v->pad(), v->unk(), v->cls(), v->sep(), v->mask()})
    if (id >= 0) specials.push_back(id);
  v->set_engine(std::make_shared<WordPiece>(lowercase, std::move(specials)));
  return v;
}

Result<bool> wordpiece_lowercase(const std::string& tokenizer_config_json) {
  std::ifstream probe(tokenizer_config_json);
  if (!probe) return true;  // BertTokenizer's default
  auto text = read_file(tokenizer_config_json, "a JSON object");
  if (!text) return Error{text.error()};
  const json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error{tokenizer_config_json + ": expected a JSON object, found " + (j.is_discarded() ? "invalid JSON" : j.type_name())};
  auto it = j.find("do_lower_case");
  if (it == j.end()) return true;
  if (!it->is_boolean())
    return Error{tokenizer_config_json + ": expected do_lower_case to be true or false, found " + it->dump()};
  return it->get<bool>();
}

Result<Vocab> load_sentencepiece(const std::string& spm_model, const std::string& vocab_json) {
  auto bytes = read_file(spm_model, "a SentencePiece model");
  if (!bytes) return Error{bytes.error()};
  auto engine = SentencePiece::load(*bytes, spm_model);
  if (!engine) return Error{engine.error()};
  auto tokens = read_vocab_json(vocab_json);
  if (!tokens) return Error{tokens.error()};
  auto v = Vocab::make(std::move(*tokens), Tokenizer::SentencePiece, vocab_json);
  if (v) v->set_engine(std::move(*engine));
  return v;
}

}  // namespace sf
