#include "model/config.h"

#include <nlohmann/json.hpp>

namespace sf {

using nlohmann::json;

const char* to_string(Arch a) { return a == Arch::EncoderDecoder ? "encoder-decoder" : "decoder-only"; }
const char* to_string(NormPlacement n) { return n == NormPlacement::Pre ? "pre" : "post"; }
const char* to_string(Activation a) { return a == Activation::Relu ? "relu" : "gelu"; }
const char* to_string(Positional p) { return p == Positional::Sinusoidal ? "sinusoidal" : "learned"; }
const char* to_string(Tokenizer t) { return t == Tokenizer::Word ? "word" : "char"; }

namespace {

std::string found(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

int get_int(const json& j, const char* key, int lo, int hi) {
  if (!j.contains(key)) throw InputError(std::string("config: missing field '") + key + "'");
  const json& v = j[key];
  if (!v.is_number_integer())
    throw InputError(std::string("config: field '") + key + "' expected an integer, found " + found(v));
  long long x = v.get<long long>();
  if (x < lo || x > hi)
    throw InputError(std::string("config: field '") + key + "' expected " + std::to_string(lo) + ".." +
                     std::to_string(hi) + ", found " + std::to_string(x));
  return static_cast<int>(x);
}

template <class E>
E get_enum(const json& j, const char* key, std::initializer_list<std::pair<const char*, E>> choices,
           std::optional<E> fallback = std::nullopt) {
  std::string expected;
  for (auto& c : choices) expected += (expected.empty() ? "'" : " | '") + std::string(c.first) + "'";
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw InputError(std::string("config: missing field '") + key + "' (expected " + expected + ")");
  }
  const json& v = j[key];
  if (v.is_string())
    for (auto& c : choices)
      if (v.get<std::string>() == c.first) return c.second;
  throw InputError(std::string("config: field '") + key + "' expected " + expected + ", found " + found(v));
}

std::vector<std::string> get_vocab(const json& j, const char* key) {
  if (!j.contains(key)) throw InputError(std::string("config: missing field '") + key + "'");
  const json& v = j[key];
  if (!v.is_array()) throw InputError(std::string("config: field '") + key + "' expected a list of strings, found " + found(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw InputError(std::string("config: ") + key + "[" + std::to_string(i) + "] expected a string, found " + found(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Config parse(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError("config: expected JSON, found text that does not parse");
  if (!j.is_object()) throw InputError("config: expected a JSON object, found " + found(j));
  Config c;
  c.arch = get_enum<Arch>(j, "arch", {{"encoder-decoder", Arch::EncoderDecoder}, {"decoder-only", Arch::DecoderOnly}});
  c.d_model = get_int(j, "d_model", 1, 1 << 16);
  c.n_heads = get_int(j, "n_heads", 1, 1 << 10);
  c.n_encoder_layers = get_int(j, "n_encoder_layers", 0, 1000);
  c.n_decoder_layers = get_int(j, "n_decoder_layers", 0, 1000);
  c.d_ff = get_int(j, "d_ff", 1, 1 << 20);
  c.max_len = get_int(j, "max_len", 1, 1 << 20);
  c.norm = get_enum<NormPlacement>(j, "norm", {{"pre", NormPlacement::Pre}, {"post", NormPlacement::Post}});
  c.activation = get_enum<Activation>(j, "activation", {{"relu", Activation::Relu}, {"gelu", Activation::Gelu}});
  c.positional = get_enum<Positional>(j, "positional", {{"sinusoidal", Positional::Sinusoidal}, {"learned", Positional::Learned}});
  Tokenizer tok = get_enum<Tokenizer>(j, "tokenizer", {{"word", Tokenizer::Word}, {"char", Tokenizer::Character}}, Tokenizer::Word);
  if (j.contains("share_embeddings")) {
    if (!j["share_embeddings"].is_boolean())
      throw InputError("config: field 'share_embeddings' expected true or false, found " + found(j["share_embeddings"]));
    c.share_embeddings = j["share_embeddings"].get<bool>();
  }

  if (c.d_model % c.n_heads != 0)
    throw InputError("config: d_model (" + std::to_string(c.d_model) + ") must be divisible by n_heads (" +
                     std::to_string(c.n_heads) + ")");
  if (c.positional == Positional::Sinusoidal && c.d_model % 2 != 0)
    throw InputError("config: sinusoidal positional encoding needs an even d_model, found " + std::to_string(c.d_model));
  if (c.n_decoder_layers == 0) throw InputError("config: n_decoder_layers expected at least 1, found 0");
  if (c.has_encoder() && c.n_encoder_layers == 0)
    throw InputError("config: an encoder-decoder model needs n_encoder_layers >= 1, found 0");
  if (!c.has_encoder() && c.n_encoder_layers != 0)
    throw InputError("config: a decoder-only model expects n_encoder_layers 0, found " + std::to_string(c.n_encoder_layers));

  auto tv = Vocab::make(get_vocab(j, "tgt_vocab"), tok, "config: tgt_vocab");
  if (!tv) throw InputError(tv.error());
  c.tgt_vocab = std::move(*tv);
  if (c.has_encoder()) {
    auto sv = Vocab::make(get_vocab(j, "src_vocab"), tok, "config: src_vocab");
    if (!sv) throw InputError(sv.error());
    c.src_vocab = std::move(*sv);
    if (c.share_embeddings && c.src_vocab.tokens() != c.tgt_vocab.tokens())
      throw InputError("config: share_embeddings needs src_vocab and tgt_vocab to be identical, found " +
                       std::to_string(c.src_vocab.size()) + " and " + std::to_string(c.tgt_vocab.size()) +
                       " tokens that differ");
  }
  return c;
}

}  // namespace

Result<Config> parse_config(const std::string& json_text) {
  try {
    return parse(json_text);
  } catch (const InputError& e) {
    return Error{e.what()};
  } catch (const std::exception& e) {
    return Error{std::string("config: ") + e.what()};
  }
}

std::string config_to_json(const Config& c) {
  json j;
  j["arch"] = to_string(c.arch);
  j["d_model"] = c.d_model;
  j["n_heads"] = c.n_heads;
  j["n_encoder_layers"] = c.n_encoder_layers;
  j["n_decoder_layers"] = c.n_decoder_layers;
  j["d_ff"] = c.d_ff;
  j["max_len"] = c.max_len;
  j["norm"] = to_string(c.norm);
  j["activation"] = to_string(c.activation);
  j["positional"] = to_string(c.positional);
  j["tokenizer"] = to_string(c.tgt_vocab.tokenizer());
  j["share_embeddings"] = c.share_embeddings;
  if (c.has_encoder()) j["src_vocab"] = c.src_vocab.tokens();
  j["tgt_vocab"] = c.tgt_vocab.tokens();
  return j.dump();
}

}  // namespace sf
