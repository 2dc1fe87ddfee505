#include "text/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "text/bpe_pipeline.h"
#include "text/byte_bpe.h"
#include "text/hf_files.h"
#include "text/tokenizer_config.h"
#include "text/unicode.h"

namespace sf {

namespace {

using json = nlohmann::json;

std::string type_of(const json& o) {
  return o.is_object() && o.contains("type") && o["type"].is_string() ? o["type"].get<std::string>() : std::string();
}

// A component's list of steps: a Sequence's (under `list_key`), or the component alone.
std::vector<json> steps_of(const json& c, const char* list_key) {
  if (c.is_null()) return {};
  if (type_of(c) == "Sequence" && c.contains(list_key) && c[list_key].is_array())
    return std::vector<json>(c[list_key].begin(), c[list_key].end());
  return {c};
}

// Reading one file; every check throws InputError with the file named.
struct Reader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& m) const { throw InputError(path + ": " + m); }

  [[noreturn]] void refuse(const char* component, const json& step, const char* supported) const {
    const std::string t = type_of(step);
    fail("expected " + std::string(component) + " " + supported + ", found " +
         (t.empty() ? shown(step.dump()) : "'" + t + "'") + ", which is not supported");
  }

  bool flag(const json& o, const char* key, bool fallback, const char* where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail(std::string(where) + "." + key + ": expected true or false, found " + it->dump());
    return it->get<bool>();
  }

  std::string text(const json& o, const char* key, const char* where) const {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string())
      fail(std::string(where) + "." + key + ": expected a string, found " + (it == o.end() ? "none" : it->dump()));
    return it->get<std::string>();
  }

  // A Replace / Split pattern: {"String": …} or {"Regex": …}.
  std::pair<std::string, bool> pattern(const json& step, const char* where) const {
    const json p = step.value("pattern", json());
    if (p.is_object() && p.size() == 1 && p.begin().value().is_string())
      return {p.begin().value().get<std::string>(), p.begin().key() == "String"};
    fail(std::string(where) + ".pattern: expected {\"String\": …} or {\"Regex\": …}, found " + shown(p.dump()));
  }

  PreTokenizerStep::Prepend prepend_scheme(const json& step, const char* where) const {
    // tokenizers' Metaspace: add_prefix_space false means "never"; the scheme defaults to "always".
    if (step.contains("add_prefix_space") && step["add_prefix_space"] == false) return PreTokenizerStep::Never;
    const json s = step.value("prepend_scheme", json("always"));
    if (s == "always") return PreTokenizerStep::Always;
    if (s == "first") return PreTokenizerStep::First;
    if (s == "never") return PreTokenizerStep::Never;
    fail(std::string(where) + ".prepend_scheme: expected \"always\", \"first\" or \"never\", found " + s.dump());
  }

  std::vector<NormalizerStep> normalizers(const json& n) const {
    std::vector<NormalizerStep> out;
    for (const json& s : steps_of(n, "normalizers")) {
      const std::string t = type_of(s);
      if (t == "NFC") {
        out.push_back({NormalizerStep::Nfc, "", ""});
      } else if (t == "Prepend") {
        out.push_back({NormalizerStep::Prepend, "", text(s, "prepend", "normalizer Prepend")});
      } else if (t == "Replace") {
        auto [p, literal] = pattern(s, "normalizer Replace");
        if (!literal)
          fail("expected normalizer Replace with a String pattern, found the Regex " + shown(p) +
               ", which is not supported");
        if (p.empty()) fail("normalizer Replace: expected a non-empty pattern, found \"\"");
        out.push_back({NormalizerStep::Replace, p, text(s, "content", "normalizer Replace")});
      } else {
        refuse("normalizer", s, "NFC, Prepend, Replace or a Sequence of them");
      }
    }
    return out;
  }

  std::vector<PreTokenizerStep> pre_tokenizers(const json& p) const {
    std::vector<PreTokenizerStep> out;
    const std::vector<json> steps = steps_of(p, "pretokenizers");
    for (size_t i = 0; i < steps.size(); ++i) {
      const json& s = steps[i];
      const std::string t = type_of(s);
      PreTokenizerStep step{};
      if (t == "ByteLevel") {
        if (i + 1 != steps.size())
          fail("expected ByteLevel to be the last pre_tokenizer, found it before '" + type_of(steps[i + 1]) +
               "', which is not supported");
        step.kind = PreTokenizerStep::ByteLevel;
        step.add_prefix_space = flag(s, "add_prefix_space", true, "pre_tokenizer ByteLevel");
        step.use_regex = flag(s, "use_regex", true, "pre_tokenizer ByteLevel");
      } else if (t == "Split") {
        step.kind = PreTokenizerStep::Split;
        auto [pat, literal] = pattern(s, "pre_tokenizer Split");
        auto re = SplitRegex::compile(pat, literal, path + ": pre_tokenizer Split");
        if (!re) throw InputError(re.error());
        step.regex = std::make_shared<const SplitRegex>(std::move(*re));
        static const std::pair<const char*, SplitBehavior> behaviors[] = {
            {"Removed", SplitBehavior::Removed},
            {"Isolated", SplitBehavior::Isolated},
            {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
            {"MergedWithNext", SplitBehavior::MergedWithNext},
            {"Contiguous", SplitBehavior::Contiguous}};
        const json b = s.value("behavior", json());
        bool known = false;
        for (auto [name, kind] : behaviors)
          if (b == name) {
            step.behavior = kind;
            known = true;
          }
        if (!known)
          fail(
              "pre_tokenizer Split.behavior: expected Removed, Isolated, MergedWithPrevious, MergedWithNext or "
              "Contiguous, found " +
              b.dump());
        step.invert = flag(s, "invert", false, "pre_tokenizer Split");
      } else if (t == "Digits") {
        step.kind = PreTokenizerStep::Digits;
        step.individual_digits = flag(s, "individual_digits", false, "pre_tokenizer Digits");
      } else if (t == "Metaspace") {
        step.kind = PreTokenizerStep::Metaspace;
        step.replacement = text(s, "replacement", "pre_tokenizer Metaspace");
        if (unicode::decode(step.replacement).size() != 1)
          fail("pre_tokenizer Metaspace.replacement: expected one character, found " + shown(step.replacement));
        step.prepend = prepend_scheme(s, "pre_tokenizer Metaspace");
        step.split = flag(s, "split", true, "pre_tokenizer Metaspace");
      } else {
        refuse("pre_tokenizer", s, "ByteLevel, Split, Digits, Metaspace or a Sequence of them");
      }
      out.push_back(std::move(step));
    }
    return out;
  }

  std::vector<DecoderStep> decoders(const json& d) const {
    std::vector<DecoderStep> out;
    for (const json& s : steps_of(d, "decoders")) {
      const std::string t = type_of(s);
      DecoderStep step{};
      if (t == "ByteLevel") {
        step.kind = DecoderStep::ByteLevel;
      } else if (t == "Metaspace") {
        step.kind = DecoderStep::Metaspace;
        step.content = text(s, "replacement", "decoder Metaspace");
        step.prepend = prepend_scheme(s, "decoder Metaspace");
      } else if (t == "Replace") {
        step.kind = DecoderStep::Replace;
        auto [p, literal] = pattern(s, "decoder Replace");
        if (!literal || p.empty())
          fail("expected decoder Replace with a non-empty String pattern, found " + shown(s.dump()) +
               ", which is not supported");
        step.pattern = p;
        step.content = text(s, "content", "decoder Replace");
      } else if (t == "ByteFallback") {
        step.kind = DecoderStep::ByteFallback;
      } else if (t == "Fuse") {
        step.kind = DecoderStep::Fuse;
      } else if (t == "Strip") {
        step.kind = DecoderStep::Strip;
        step.content = text(s, "content", "decoder Strip");
        for (auto [key, slot] : {std::pair{"start", &step.start}, std::pair{"stop", &step.stop}}) {
          const json v = s.value(key, json(0));
          if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
            fail(std::string("decoder Strip.") + key + ": expected a count 0..1000, found " + v.dump());
          *slot = v.get<int>();
        }
      } else {
        refuse("decoder", s, "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip or a Sequence of them");
      }
      out.push_back(std::move(step));
    }
    return out;
  }
};

// The file as a JSON object.
json parse_object(const Reader& r, const std::string& path) {
  auto bytes = read_file(path, "a Hugging Face tokenizer.json");
  if (!bytes) throw InputError(bytes.error());
  json j = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    r.fail("expected a JSON object (tokenizer.json), found " +
           (j.is_discarded() ? std::string("invalid JSON (a truncated or damaged file)") : std::string(j.type_name())));
  return j;
}

// A BPE model without the choices this loader does not implement (dropout, subword affixes).
void check_bpe_model(const Reader& r, const json& model) {
  if (type_of(model) != "BPE")
    r.fail("expected a BPE model (model.type \"BPE\"), found model.type " +
           (type_of(model).empty() ? std::string("none") : "'" + type_of(model) + "'") + ", which is not supported");
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0)
    r.fail("expected model.dropout null, found " + model["dropout"].dump() + ", which is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && model[key] != "")
      r.fail(std::string("expected model.") + key + " null, found " + model[key].dump() + ", which is not supported");
}

// The vocabulary's (token, id) entries: model.vocab, extended by the added tokens (a list) it lacks.
std::vector<std::pair<std::string, int64_t>> vocabulary_entries(const Reader& r, const json& vocab, const json& added) {
  if (!vocab.is_object())
    r.fail("expected model.vocab to be an object {token: id}, found " + std::string(vocab.type_name()));
  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer())
      r.fail("model.vocab token " + shown(it.key()) + ": expected an integer id, found " + it.value().dump());
    entries.emplace_back(it.key(), it.value().get<int64_t>());
  }
  if (!added.is_array()) r.fail("expected added_tokens to be a list, found " + std::string(added.type_name()));
  for (const json& a : added) {
    if (!a.is_object() || !a.value("content", json()).is_string() || !a.value("id", json()).is_number_integer())
      r.fail("expected each of added_tokens to hold \"id\" and \"content\", found " + shown(a.dump()));
    if (r.flag(a, "single_word", false, "added_tokens"))
      r.fail("added token " + shown(a["content"]) + ": expected single_word false, found true, which is not supported");
    if (!vocab.contains(a["content"].get<std::string>())) entries.emplace_back(a["content"], a["id"].get<int64_t>());
  }
  return entries;
}

// The added tokens as the pipeline matches them, with the vocabulary's ids.
std::vector<AddedToken> added_tokens(const Reader& r, const json& added, const Vocab& v) {
  std::vector<AddedToken> out;
  for (const json& a : added) {
    AddedToken t;
    t.content = a["content"];
    t.id = v.id(t.content);  // the vocabulary's id where model.vocab has the token (as tokenizers does)
    t.normalized = r.flag(a, "normalized", !r.flag(a, "special", false, "added_tokens"), "added_tokens");
    t.lstrip = r.flag(a, "lstrip", false, "added_tokens");
    t.rstrip = r.flag(a, "rstrip", false, "added_tokens");
    out.push_back(std::move(t));
  }
  return out;
}

// The merges as ids: both symbols and their concatenation must be tokens.
std::vector<std::array<int, 3>> merge_ids(const json& merges_json, const Vocab& v, const std::string& path) {
  auto merges = merges_from_json(merges_json, path);
  if (!merges) throw InputError(merges.error());
  std::vector<std::array<int, 3>> out;
  out.reserve(merges->size());
  for (const MergeText& m : *merges) {
    const std::array<int, 3> ids{v.id(m.left), v.id(m.right), v.id(m.left + m.right)};
    static const char* const roles[] = {"the left symbol", "the right symbol", "the merged symbol"};
    for (size_t k = 0; k < 3; ++k)
      if (ids[k] < 0)
        throw InputError(m.at + "expected symbols that model.vocab holds, found " +
                         shown(k == 0   ? m.left
                               : k == 1 ? m.right
                                        : m.left + m.right) +
                         " (" + roles[k] + "), which it does not");
    out.push_back(ids);
  }
  return out;
}

// A byte-level vocabulary holds the 256 one-byte tokens of the byte-to-unicode alphabet.
void check_byte_alphabet(const Reader& r, const Vocab& v) {
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    unicode::append_utf8(sym, bytes_to_unicode()[static_cast<size_t>(b)]);
    if (v.id(sym) < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      r.fail("expected the 256 one-byte tokens of the byte-level alphabet, found no '" + sym + "' (byte " + hex + ")");
    }
  }
}

LoadedTokenizer read(const std::string& path, const std::string& config_path, const std::string& model_type) {
  const Reader r{path};
  const json j = parse_object(r, path);
  const json none;
  auto part = [&](const char* key) -> const json& { return j.contains(key) ? j[key] : none; };
  const json& model = part("model");
  check_bpe_model(r, model);

  // The pipeline, refused by name where it is not implemented.
  PipelineSpec spec;
  spec.normalizers = r.normalizers(part("normalizer"));
  spec.pre_tokenizers = r.pre_tokenizers(part("pre_tokenizer"));
  spec.decoders = r.decoders(part("decoder"));
  spec.model.byte_level =
      !spec.pre_tokenizers.empty() && spec.pre_tokenizers.back().kind == PreTokenizerStep::ByteLevel;
  spec.model.byte_fallback = r.flag(model, "byte_fallback", false, "model");
  spec.model.fuse_unk = r.flag(model, "fuse_unk", false, "model");
  spec.model.ignore_merges = r.flag(model, "ignore_merges", false, "model");

  const json& vocab = model.contains("vocab") ? model["vocab"] : none;
  const json added = part("added_tokens").is_null() ? json::array() : part("added_tokens");
  auto tokens = tokens_by_id(vocabulary_entries(r, vocab, added), path);
  if (!tokens) throw InputError(tokens.error());

  auto config = read_tokenizer_config(config_path);
  if (!config) throw InputError(config.error());
  SpecialNames defaults;
  const json unk = model.value("unk_token", json());
  if (!unk.is_null() && !unk.is_string())
    r.fail("expected model.unk_token to be a string or null, found " + unk.dump());
  if (unk.is_string()) defaults.unk = unk;
  if (!spec.model.byte_level) {  // LlamaTokenizerFast's defaults, where the vocabulary has them
    for (auto [name, slot] : {std::pair{"<s>", &defaults.bos}, std::pair{"</s>", &defaults.eos}})
      if (std::find(tokens->begin(), tokens->end(), name) != tokens->end()) *slot = name;
  }
  const Tokenizer kind = spec.model.byte_level ? Tokenizer::ByteBpe : Tokenizer::SentencePieceBpe;
  auto v = Vocab::make(std::move(*tokens), kind, path, special_names(*config, defaults));
  if (!v) throw InputError(v.error());
  if (unk.is_string()) {
    spec.model.unk = v->id(unk);
    if (spec.model.unk < 0) r.fail("expected model.unk_token " + shown(unk) + " to be a token, found no such token");
  }
  spec.added = added_tokens(r, added, *v);
  spec.merges = merge_ids(model.contains("merges") ? model["merges"] : none, *v, path);
  if (spec.model.byte_level) check_byte_alphabet(r, *v);

  auto framing = decide_framing(*v, *config, model_type, /*sentencepiece_only=*/false, &part("post_processor"), path);
  if (!framing) throw InputError(framing.error());
  v->set_framing(std::move(*framing));
  // The normalized added tokens are matched by their normalized form (added_vocabulary.rs).
  {
    BpePipeline plain(*v, PipelineSpec{{}, spec.normalizers, {}, {}, {}, {}});
    for (AddedToken& t : spec.added)
      if (t.normalized) t.content = plain.normalize(t.content);
  }
  v->set_engine(std::make_shared<BpePipeline>(*v, std::move(spec)));
  return {std::move(*v), kind == Tokenizer::ByteBpe ? "byte-level BPE" : "SentencePiece BPE"};
}

}  // namespace

Result<LoadedTokenizer> load_tokenizer_json(const std::string& tokenizer_json, const std::string& tokenizer_config_json,
                                            const std::string& model_type) {
  try {
    return read(tokenizer_json, tokenizer_config_json, model_type);
  } catch (const InputError& e) {
    return Error{e.what()};
  } catch (const nlohmann::json::exception& e) {
    return Error{tokenizer_json + ": expected a tokenizer.json of the documented shape, found " + e.what()};
  }
}

}  // namespace sf
