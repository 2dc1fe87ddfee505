// hf_tokenizers.cpp — reading and checking the tokenizer files of Hugging Face checkpoints.
#include "text/hf_tokenizers.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "text/byte_bpe.h"
#include "text/hf_files.h"
#include "text/sentencepiece.h"
#include "text/tokenizer_config.h"
#include "text/tokenizer_json.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace sf {

namespace {

using json = nlohmann::json;

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

// vocab.json -> tokens by id.
Result<std::vector<std::string>> read_vocab_json(const std::string& path) {
  auto text = read_file(path, "a JSON object {token: id}");
  if (!text) return Error{text.error()};
  VocabJsonReader r;
  json::sax_parse(*text, &r);
  if (!r.error.empty()) return Error{path + ": " + r.error};
  return tokens_by_id(std::move(r.entries), path);
}

// merges.txt: '#version: …' header, then one merge per line, 'left right', rank = order.
Result<std::vector<MergeText>> read_merges(const std::string& path) {
  auto text = read_file(path, "BPE merges, one 'left right' pair per line");
  if (!text) return Error{text.error()};
  std::vector<MergeText> merges;
  std::istringstream in(*text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.compare(0, 8, "#version") == 0) continue;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t space = line.find(' ');
    MergeText m{line.substr(0, space), space == std::string::npos ? "" : line.substr(space + 1),
                path + " line " + std::to_string(number) + ": "};
    if (m.left.empty() || m.right.empty() || m.right.find(' ') != std::string::npos)
      return Error{m.at + "expected two symbols separated by one space, found " + shown(line)};
    merges.push_back(std::move(m));
  }
  return merges;
}

// The byte-level BPE Vocab from its tokens and merges, every symbol checked; `specials`: further
// tokens kept whole when written in the text (tokenizer.json's added tokens).
Result<Vocab> byte_bpe_vocab(std::vector<std::string> tokens, const std::vector<MergeText>& merge_text,
                             const std::string& vocab_what, const std::vector<std::string>& specials = {}) {
  auto v = Vocab::make(std::move(tokens), Tokenizer::ByteBpe, vocab_what);
  if (!v) return v;
  std::vector<int> byte_ids(256);
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    unicode::append_utf8(sym, bytes_to_unicode()[static_cast<size_t>(b)]);
    byte_ids[static_cast<size_t>(b)] = v->id(sym);
    if (byte_ids[static_cast<size_t>(b)] < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return Error{vocab_what + ": expected the 256 one-byte tokens of GPT-2's byte alphabet, found no '" + sym +
                   "' (byte " + hex + ")"};
    }
  }
  std::vector<std::array<int, 3>> merges;
  merges.reserve(merge_text.size());
  for (const MergeText& t : merge_text) {
    const std::string merged = t.left + t.right;
    const std::array<int, 3> m{v->id(t.left), v->id(t.right), v->id(merged)};
    for (int k = 0; k < 3; ++k)
      if (m[static_cast<size_t>(k)] < 0)
        return Error{t.at + "expected symbols that " + vocab_what + " holds, found " +
                     shown(k == 0   ? t.left
                           : k == 1 ? t.right
                                    : merged) +
                     " (" +
                     (k == 2   ? "the merged symbol"
                      : k == 0 ? "the left symbol"
                               : "the right symbol") +
                     "), which it does not"};
    merges.push_back(m);
  }
  std::vector<int> special_ids{v->eos()};
  for (const std::string& s : specials)
    if (v->id(s) != v->eos()) special_ids.push_back(v->id(s));
  v->set_engine(std::make_shared<ByteBpe>(std::move(byte_ids), merges, std::move(special_ids)));
  return v;
}

}  // namespace

Result<Vocab> load_byte_bpe(const std::string& vocab_json, const std::string& merges_txt) {
  auto tokens = read_vocab_json(vocab_json);
  if (!tokens) return Error{tokens.error()};
  auto merges = read_merges(merges_txt);
  if (!merges) return Error{merges.error()};
  return byte_bpe_vocab(std::move(*tokens), *merges, vocab_json);
}

Result<Vocab> load_byte_bpe_tokenizer_json(const std::string& tokenizer_json) {
  auto text = read_file(tokenizer_json, "a Hugging Face tokenizer.json");
  if (!text) return Error{text.error()};
  const json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const std::string& path = tokenizer_json;
  if (j.is_discarded() || !j.is_object())
    return Error{path + ": expected a JSON object (tokenizer.json), found " +
                 (j.is_discarded() ? "invalid JSON" : j.type_name())};
  // Only GPT-2's pipeline is exact here: no normalizer, the ByteLevel pre-tokenizer alone (its
  // GPT-2 regex, no added prefix space), a BPE model.
  auto type_of = [](const json& o) {
    return o.is_object() && o.contains("type") && o["type"].is_string() ? o["type"].get<std::string>()
                                                                        : std::string("none");
  };
  const json none;
  const json& model = j.contains("model") ? j["model"] : none;
  const json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : none;
  const json& norm = j.contains("normalizer") ? j["normalizer"] : none;
  if (type_of(model) != "BPE")
    return Error{path + ": expected a byte-level BPE tokenizer (model.type \"BPE\"), found model.type " +
                 shown(type_of(model))};
  if (type_of(pre) != "ByteLevel")
    return Error{path + ": expected GPT-2's pre-tokenizer (pre_tokenizer.type \"ByteLevel\"), found " +
                 shown(type_of(pre))};
  if (pre.contains("add_prefix_space") && pre["add_prefix_space"] == true)
    return Error{path + ": expected pre_tokenizer.add_prefix_space false (GPT-2), found true, which is not supported"};
  if (!norm.is_null())
    return Error{path + ": expected no normalizer (GPT-2), found normalizer " + shown(type_of(norm)) +
                 ", which is not supported"};
  const json& vocab = model.contains("vocab") ? model["vocab"] : none;
  if (!vocab.is_object())
    return Error{path + ": expected model.vocab to be an object {token: id}, found " + std::string(vocab.type_name())};
  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer())
      return Error{path + ": model.vocab token " + shown(it.key()) + ": expected an integer id, found " +
                   it.value().dump()};
    entries.emplace_back(it.key(), it.value().get<int64_t>());
  }
  // Added tokens (<|endoftext|>) are usually in model.vocab too; those that are not extend it.
  std::vector<std::string> added;
  for (const json& a : j.value("added_tokens", json::array())) {
    if (!a.is_object() || !a.value("content", json()).is_string() || !a.value("id", json()).is_number_integer())
      return Error{path + ": expected each of added_tokens to hold \"id\" and \"content\", found " + shown(a.dump())};
    const std::string content = a["content"];
    added.push_back(content);
    if (!vocab.contains(content)) entries.emplace_back(content, a["id"].get<int64_t>());
  }
  auto tokens = tokens_by_id(std::move(entries), path);
  if (!tokens) return Error{tokens.error()};
  auto merges = merges_from_json(model.contains("merges") ? model["merges"] : none, path);
  if (!merges) return Error{merges.error()};
  return byte_bpe_vocab(std::move(*tokens), *merges, path, added);
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
    return Error{tokenizer_config_json + ": expected a JSON object, found " +
                 (j.is_discarded() ? "invalid JSON" : j.type_name())};
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

Result<Vocab> load_sentencepiece_bpe(const std::string& spm_model, const std::string& tokenizer_config_json,
                                     const std::string& model_type) {
  auto bytes = read_file(spm_model, "a SentencePiece model (tokenizer.model)");
  if (!bytes) return Error{bytes.error()};
  auto engine = SentencePiece::load(*bytes, spm_model);
  if (!engine) return Error{engine.error()};
  auto config = read_tokenizer_config(tokenizer_config_json);
  if (!config) return Error{config.error()};
  const SentencePiece& sp = **engine;
  const SpecialNames names = special_names(*config, {sp.bos_piece(), sp.eos_piece(), sp.pad_piece(), sp.unk_piece()});
  auto v = Vocab::make(sp.pieces(), Tokenizer::SentencePieceBpe, spm_model, names);
  if (!v) return v;
  std::vector<int> whole;
  for (int id : {v->bos(), v->eos(), v->unk(), v->pad()})
    if (id >= 0) whole.push_back(id);
  v->set_engine(sp.with_own_ids(std::move(whole)));
  auto framing = decide_framing(*v, *config, model_type, /*sentencepiece_only=*/true, nullptr, spm_model);
  if (!framing) return Error{framing.error()};
  v->set_framing(std::move(*framing));
  return v;
}

Result<HfTokenizer> load_hf_tokenizer(const std::string& folder, const std::string& model_type) {
  const std::string tj = folder + "/tokenizer.json", tm = folder + "/tokenizer.model",
                    tc = folder + "/tokenizer_config.json";
  auto exists = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  HfTokenizer t;
  if (exists(tj)) {
    auto loaded = load_tokenizer_json(tj, tc, model_type);
    if (!loaded) return Error{loaded.error()};
    t.vocab = std::move(loaded->vocab);
    t.kind = loaded->kind;
    t.files.push_back(tj);
  } else if (exists(tm)) {
    auto v = load_sentencepiece_bpe(tm, tc, model_type);
    if (!v) return Error{v.error()};
    t.vocab = std::move(*v);
    t.kind = "SentencePiece BPE";
    t.files.push_back(tm);
  } else {
    return Error{"'" + folder + "': expected the " + model_type +
                 " tokenizer, tokenizer.json or tokenizer.model, found neither (download them from the same hub "
                 "repository)"};
  }
  if (exists(tc)) t.files.push_back(tc);
  return t;
}

}  // namespace sf
