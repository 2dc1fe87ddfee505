#include "text/tokenizer_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sf {

namespace {

using json = nlohmann::json;

// A class whose __init__ rebuilds the post-processor from add_bos_token / add_eos_token, with its
// defaults.
struct BosEosClass {
  const char* name;
  bool add_bos, add_eos;
};
constexpr BosEosClass kBosEosClasses[] = {
    {"LlamaTokenizer", true, false},        {"LlamaTokenizerFast", true, false},
    {"CodeLlamaTokenizer", true, false},    {"CodeLlamaTokenizerFast", true, false},
    {"GPTNeoXTokenizerFast", false, false}, {"GPTNeoXTokenizer", false, false},
};

// The class that decides BOS/EOS from add_bos_token / add_eos_token, or null when the
// post-processor decides. `name` is what the reasons call it.
const BosEosClass* bos_eos_class(const TokenizerConfig& c, const std::string& model_type, bool sentencepiece_only,
                                 std::string& name) {
  std::string cls = c.tokenizer_class;
  if (cls.empty()) {  // AutoTokenizer's choice for the model type
    if (sentencepiece_only || model_type == "llama" || model_type == "mistral")
      cls = sentencepiece_only ? "LlamaTokenizer" : "LlamaTokenizerFast";
    else if (model_type == "gpt_neox")
      cls = "GPTNeoXTokenizerFast";
  }
  for (const BosEosClass& k : kBosEosClasses)
    if (cls == k.name) {
      name = cls;
      return &k;
    }
  return nullptr;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// One template item of TemplateProcessing's "single": the ids of a SpecialToken, or none for $A.
Result<std::vector<int>> template_ids(const json& item, const json& specials, const Vocab& v, const std::string& at) {
  if (item.is_object() && item.contains("Sequence")) return std::vector<int>{};
  if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].is_object() ||
      !item["SpecialToken"].value("id", json()).is_string())
    return Error{at + ": expected {\"SpecialToken\": {\"id\": …}} or {\"Sequence\": …}, found " + item.dump()};
  const std::string name = item["SpecialToken"]["id"];
  const json* entry = specials.is_object() && specials.contains(name) ? &specials[name] : nullptr;
  if (!entry || !entry->is_object() || !entry->value("ids", json()).is_array())
    return Error{at + ": expected special_tokens to list the ids of " + quoted(name) + ", found none"};
  std::vector<int> ids;
  for (const json& id : (*entry)["ids"]) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= v.size())
      return Error{at + ": special token " + quoted(name) + " has id " + id.dump() + ", expected an id below " +
                   std::to_string(v.size())};
    ids.push_back(id.get<int>());
  }
  return ids;
}

// Framing from a TemplateProcessing's single-sequence template.
Result<Framing> from_template(const json& p, const Vocab& v, const std::string& where) {
  const std::string at = where + " post_processor (TemplateProcessing)";
  const json single = p.value("single", json());
  if (!single.is_array()) return Error{at + ": expected \"single\" to be a list, found " + single.dump()};
  Framing f;
  bool seen_text = false;
  std::string shape;
  for (const json& item : single) {
    auto ids = template_ids(item, p.value("special_tokens", json()), v, at);
    if (!ids) return Error{ids.error()};
    if (ids->empty()) {
      if (seen_text) return Error{at + ": expected $A once in \"single\", found it twice"};
      seen_text = true;
      shape += shape.empty() ? "$A" : " $A";
      continue;
    }
    for (int id : *ids) {
      (seen_text ? f.after : f.before).push_back(id);
      shape += (shape.empty() ? "" : " ") + v.token(id);
    }
  }
  if (!seen_text) return Error{at + ": expected $A in \"single\", found " + single.dump()};
  for (int id : f.before)
    f.reasons.push_back(v.token(id) + " added before the text: tokenizer.json post_processor \"" + shape + "\"");
  for (int id : f.after)
    f.reasons.push_back(v.token(id) + " added after the text: tokenizer.json post_processor \"" + shape + "\"");
  if (f.reasons.empty()) f.reasons.push_back("nothing added: tokenizer.json post_processor \"" + shape + "\"");
  return f;
}

// Framing from tokenizer.json's post_processor (null: none).
Result<Framing> from_post_processor(const json* p, const Vocab& v, const std::string& where) {
  const std::string type = p && p->is_object() ? p->value("type", std::string()) : std::string();
  if (!p || p->is_null() || type == "ByteLevel") {
    Framing f;
    f.reasons.push_back(std::string("nothing added: ") + (p && !p->is_null()
                                                              ? "tokenizer.json post_processor ByteLevel adds no token"
                                                              : "tokenizer.json has no post_processor"));
    return f;
  }
  if (type == "TemplateProcessing") return from_template(*p, v, where);
  if (type == "Sequence") {
    const json list = p->value("processors", json());
    if (!list.is_array()) return Error{where + " post_processor (Sequence): expected \"processors\" to be a list"};
    std::optional<Framing> chosen;
    for (const json& q : list) {
      const std::string t = q.is_object() ? q.value("type", std::string()) : std::string();
      if (t == "ByteLevel") continue;
      if (t != "TemplateProcessing" || chosen)
        return Error{where + ": expected post_processor ByteLevel and at most one TemplateProcessing, found " +
                     (t.empty() ? q.dump() : quoted(t)) + ", which is not supported"};
      auto f = from_template(q, v, where);
      if (!f) return f;
      chosen = std::move(*f);
    }
    if (chosen) return *chosen;
    return from_post_processor(nullptr, v, where);
  }
  return Error{where + ": expected post_processor TemplateProcessing, ByteLevel or a Sequence of them, found " +
               (type.empty() ? p->dump() : quoted(type)) + ", which is not supported"};
}

// A token setting of tokenizer_config.json: a string, {"content": …} (AddedToken), or null.
Result<std::optional<std::string>> token_setting(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) return std::optional<std::string>{};
  if (it->is_null()) return std::optional<std::string>{std::string()};
  if (it->is_string()) return std::optional<std::string>{it->get<std::string>()};
  if (it->is_object() && it->value("content", json()).is_string())
    return std::optional<std::string>{(*it)["content"].get<std::string>()};
  return Error{path + ": expected " + key + " to be a token string, {\"content\": …} or null, found " + it->dump()};
}

}  // namespace

Result<TokenizerConfig> read_tokenizer_config(const std::string& path) {
  TokenizerConfig c;
  std::ifstream in(path, std::ios::binary);
  if (!in) return c;
  std::ostringstream s;
  s << in.rdbuf();
  const json j = json::parse(s.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error{path + ": expected a JSON object (tokenizer_config.json), found " +
                 (j.is_discarded() ? std::string("invalid JSON") : std::string(j.type_name()))};
  c.path = path;
  if (auto it = j.find("tokenizer_class"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Error{path + ": expected tokenizer_class to be a string, found " + it->dump()};
    c.tokenizer_class = it->get<std::string>();
  }
  for (auto [key, slot] :
       {std::pair{"add_bos_token", &c.add_bos_token}, std::pair{"add_eos_token", &c.add_eos_token}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_boolean()) return Error{path + ": expected " + key + " to be true or false, found " + it->dump()};
    *slot = it->get<bool>();
  }
  for (auto [key, slot] : {std::pair{"bos_token", &c.bos}, std::pair{"eos_token", &c.eos},
                           std::pair{"pad_token", &c.pad}, std::pair{"unk_token", &c.unk}}) {
    auto t = token_setting(j, key, path);
    if (!t) return Error{t.error()};
    *slot = *t;
  }
  return c;
}

SpecialNames special_names(const TokenizerConfig& c, const SpecialNames& defaults) {
  SpecialNames n = defaults;
  if (c.bos) n.bos = *c.bos;
  if (c.eos) n.eos = *c.eos;
  if (c.pad) n.pad = *c.pad;
  if (c.unk) n.unk = *c.unk;
  return n;
}

Result<Framing> decide_framing(const Vocab& v, const TokenizerConfig& c, const std::string& model_type,
                               bool sentencepiece_only, const json* post_processor, const std::string& where) {
  std::string cls;
  const BosEosClass* k = bos_eos_class(c, model_type, sentencepiece_only, cls);
  if (!k) return from_post_processor(post_processor, v, where);
  const std::string config = c.path.empty() ? std::string("tokenizer_config.json") : c.path;
  Framing f;
  const struct {
    std::optional<bool> set;
    bool fallback;
    const char* key;
    int id;
    const char* role;
    std::vector<int>* where;
    const char* place;
  } sides[] = {{c.add_bos_token, k->add_bos, "add_bos_token", v.bos(), "bos_token", &f.before, "before"},
               {c.add_eos_token, k->add_eos, "add_eos_token", v.eos(), "eos_token", &f.after, "after"}};
  std::vector<std::string> off;
  for (const auto& s : sides) {
    const bool add = s.set.value_or(s.fallback);
    const std::string why = s.set ? "tokenizer_config.json " + std::string(s.key) + " = " + (add ? "true" : "false")
                                  : cls + "'s default " + s.key + " = " + (add ? "true" : "false") +
                                        " (tokenizer_config.json does not set it)";
    if (!add) {
      off.push_back(why);
      continue;
    }
    if (s.id < 0) return Error{config + ": expected a " + s.role + " since " + s.key + " is true, found none"};
    s.where->push_back(s.id);
    f.reasons.push_back(v.token(s.id) + " added " + s.place + " the text: " + why);
  }
  if (f.reasons.empty()) f.reasons.push_back("nothing added: " + off[0] + ", " + off[1]);
  return f;
}

Framing gpt2_framing(const Vocab& v) {
  Framing f;
  f.before = {v.bos()};
  f.tokenizer_adds = false;
  f.reasons.push_back(v.token(v.bos()) +
                      " added before the text by stepformer: a GPT-2 prompt starts with its bos_token, the token "
                      "that separated its training documents (GPT-2's own tokenizer adds nothing)");
  return f;
}

}  // namespace sf
