#include "model/config.h"

#include <nlohmann/json.hpp>

namespace sf {

using nlohmann::json;

const char* to_string(Arch a) {
  switch (a) {
    case Arch::EncoderDecoder:
      return "encoder-decoder";
    case Arch::DecoderOnly:
      return "decoder-only";
    case Arch::EncoderOnly:
      return "encoder-only";
  }
  return "?";
}
const char* to_string(NormPlacement n) { return n == NormPlacement::Pre ? "pre" : "post"; }
const char* to_string(Activation a) {
  switch (a) {
    case Activation::Relu:
      return "relu";
    case Activation::Gelu:
      return "gelu";
    case Activation::GeluTanh:
      return "gelu_tanh";
    case Activation::Swish:
      return "swish";
  }
  return "?";
}
const char* to_string(Positional p) {
  switch (p) {
    case Positional::Sinusoidal:
      return "sinusoidal";
    case Positional::Learned:
      return "learned";
    case Positional::SinusoidalHalves:
      return "sinusoidal_halves";
    case Positional::Rotary:
      return "rotary";
  }
  return "?";
}
const char* to_string(NormKind n) { return n == NormKind::RMSNorm ? "rms_norm" : "layer_norm"; }
const char* to_string(Mlp m) { return m == Mlp::Gated ? "gated" : "standard"; }
const char* to_string(Residual r) { return r == Residual::Parallel ? "parallel" : "sequential"; }
const char* to_string(RopeScaling r) {
  switch (r) {
    case RopeScaling::None:
      return "none";
    case RopeScaling::Linear:
      return "linear";
    case RopeScaling::Llama3:
      return "llama3";
  }
  return "?";
}
const char* to_string(Tokenizer t) {
  switch (t) {
    case Tokenizer::Word:
      return "word";
    case Tokenizer::Character:
      return "char";
    case Tokenizer::ByteBpe:
      return "byte_bpe";
    case Tokenizer::WordPiece:
      return "wordpiece";
    case Tokenizer::SentencePiece:
      return "sentencepiece";
    case Tokenizer::SentencePieceBpe:
      return "sentencepiece_bpe";
  }
  return "?";
}

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

bool get_bool(const json& j, const char* key, bool fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_boolean())
    throw InputError(std::string("config: field '") + key + "' expected true or false, found " + found(j[key]));
  return j[key].get<bool>();
}

int get_int_or(const json& j, const char* key, int lo, int hi, int fallback) {
  return j.contains(key) ? get_int(j, key, lo, hi) : fallback;
}

float get_positive_float(const json& j, const char* key, float fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0.0) || !(v.get<double>() < 1.0))
    throw InputError(std::string("config: field '") + key + "' expected a number in (0, 1), found " + found(v));
  return static_cast<float>(v.get<double>());
}

float get_float(const json& j, const char* key, double lo, double hi, float fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= lo) || !(v.get<double>() <= hi))
    throw InputError(std::string("config: field '") + key + "' expected a number in [" + found(json(lo)) + ", " +
                     found(json(hi)) + "], found " + found(v));
  return static_cast<float>(v.get<double>());
}

// The Llama-style choices (config.h); every key optional, defaulting to the original Transformer.
void parse_decoder_choices(const json& j, Config& c) {
  c.norm_kind = get_enum<NormKind>(
      j, "norm_kind", {{"layer_norm", NormKind::LayerNorm}, {"rms_norm", NormKind::RMSNorm}}, NormKind::LayerNorm);
  c.mlp = get_enum<Mlp>(j, "mlp", {{"standard", Mlp::Standard}, {"gated", Mlp::Gated}}, Mlp::Standard);
  c.residual = get_enum<Residual>(
      j, "residual", {{"sequential", Residual::Sequential}, {"parallel", Residual::Parallel}}, Residual::Sequential);
  c.n_kv_heads = get_int_or(j, "n_kv_heads", 0, 1 << 10, 0);
  c.head_dim = get_int_or(j, "head_dim", 0, 1 << 12, 0);
  c.sliding_window = get_int_or(j, "sliding_window", 0, 1 << 24, 0);
  c.qkv_bias = get_bool(j, "qkv_bias", true);
  c.o_bias = get_bool(j, "o_bias", true);
  c.mlp_bias = get_bool(j, "mlp_bias", true);
  RopeConfig& r = c.rope;
  r.theta = get_float(j, "rope_theta", 1.0, 1e12, r.theta);
  r.fraction = get_float(j, "rotary_fraction", 0.0, 1.0, r.fraction);
  r.scaling = get_enum<RopeScaling>(
      j, "rope_scaling",
      {{"none", RopeScaling::None}, {"linear", RopeScaling::Linear}, {"llama3", RopeScaling::Llama3}},
      RopeScaling::None);
  r.factor = get_float(j, "rope_factor", 1e-3, 1e6, r.factor);
  r.low_freq_factor = get_float(j, "rope_low_freq_factor", 1e-3, 1e6, r.low_freq_factor);
  r.high_freq_factor = get_float(j, "rope_high_freq_factor", 1e-3, 1e6, r.high_freq_factor);
  r.original_max_len = get_int_or(j, "rope_original_max_len", 1, 1 << 24, r.original_max_len);
}

// What the Llama-style choices require of each other and of the sizes.
void check_decoder_choices(const Config& c) {
  if (c.n_heads % c.kv_heads() != 0)
    throw InputError("config: n_heads (" + std::to_string(c.n_heads) + ") must be a multiple of n_kv_heads (" +
                     std::to_string(c.kv_heads()) + ")");
  if (c.positional == Positional::Rotary) {
    if (c.arch != Arch::DecoderOnly)
      throw InputError(std::string("config: rotary positions expect a decoder-only model, found ") + to_string(c.arch));
    if (c.rotary_dim() < 2 || c.rotary_dim() % 2 != 0)
      throw InputError("config: rotary positions need an even number >= 2 of rotating dimensions per head, found " +
                       std::to_string(c.rotary_dim()) + " (head_dim " + std::to_string(c.d_k()) +
                       " x rotary_fraction " + std::to_string(c.rope.fraction) + ")");
    if (c.rope.scaling == RopeScaling::Llama3 && !(c.rope.high_freq_factor > c.rope.low_freq_factor))
      throw InputError("config: llama3 rope scaling needs rope_high_freq_factor > rope_low_freq_factor, found " +
                       std::to_string(c.rope.high_freq_factor) + " and " + std::to_string(c.rope.low_freq_factor));
  }
  if ((c.norm_kind != NormKind::LayerNorm || c.mlp != Mlp::Standard || c.residual != Residual::Sequential ||
       c.n_kv_heads > 0 || c.head_dim > 0 || c.sliding_window > 0) &&
      c.arch != Arch::DecoderOnly)
    throw InputError(std::string("config: norm_kind, mlp, residual, n_kv_heads, head_dim and sliding_window expect a "
                                 "decoder-only model, found ") +
                     to_string(c.arch));
  if (c.residual == Residual::Parallel && c.norm != NormPlacement::Pre)
    throw InputError("config: a parallel residual expects norm 'pre', found 'post'");
}

std::vector<std::string> get_vocab(const json& j, const char* key) {
  if (!j.contains(key)) throw InputError(std::string("config: missing field '") + key + "'");
  const json& v = j[key];
  if (!v.is_array())
    throw InputError(std::string("config: field '") + key + "' expected a list of strings, found " + found(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw InputError(std::string("config: ") + key + "[" + std::to_string(i) + "] expected a string, found " +
                       found(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// The architecture, sizes and choices of every family (the Llama-style ones in
// parse_decoder_choices), in the order they are checked; returns the vocabularies' tokenizer.
Tokenizer parse_fields(const json& j, Config& c) {
  c.arch = get_enum<Arch>(j, "arch",
                          {{"encoder-decoder", Arch::EncoderDecoder},
                           {"decoder-only", Arch::DecoderOnly},
                           {"encoder-only", Arch::EncoderOnly}});
  c.d_model = get_int(j, "d_model", 1, 1 << 16);
  c.n_heads = get_int(j, "n_heads", 1, 1 << 10);
  c.n_encoder_layers = get_int(j, "n_encoder_layers", 0, 1000);
  c.n_decoder_layers = get_int(j, "n_decoder_layers", 0, 1000);
  c.d_ff = get_int(j, "d_ff", 0, 1 << 20);
  c.max_len = get_int(j, "max_len", 1, 1 << 20);
  c.norm = get_enum<NormPlacement>(j, "norm", {{"pre", NormPlacement::Pre}, {"post", NormPlacement::Post}});
  c.activation = get_enum<Activation>(j, "activation",
                                      {{"relu", Activation::Relu},
                                       {"gelu", Activation::Gelu},
                                       {"gelu_tanh", Activation::GeluTanh},
                                       {"swish", Activation::Swish}});
  c.positional = get_enum<Positional>(j, "positional",
                                      {{"sinusoidal", Positional::Sinusoidal},
                                       {"learned", Positional::Learned},
                                       {"sinusoidal_halves", Positional::SinusoidalHalves},
                                       {"rotary", Positional::Rotary}});
  const Tokenizer tok =
      get_enum<Tokenizer>(j, "tokenizer", {{"word", Tokenizer::Word}, {"char", Tokenizer::Character}}, Tokenizer::Word);
  c.share_embeddings = get_bool(j, "share_embeddings", false);
  c.scale_embeddings = get_bool(j, "scale_embeddings", true);
  c.layer_norm_eps = get_positive_float(j, "layer_norm_eps", 1e-5f);
  c.n_encoder_heads = get_int_or(j, "n_encoder_heads", 0, 1 << 10, 0);
  c.d_ff_encoder = get_int_or(j, "d_ff_encoder", 0, 1 << 20, 0);
  c.n_token_types = get_int_or(j, "n_token_types", 0, 1 << 10, 0);
  c.embed_norm = get_bool(j, "embed_norm", false);
  c.mlm_head = get_bool(j, "mlm_head", false);
  c.decoder_pad_mask = get_bool(j, "decoder_pad_mask", true);
  c.generator_bias = get_bool(j, "generator_bias", true);
  parse_decoder_choices(j, c);
  return tok;
}

// What the sizes and the stacks require of each other.
void check_sizes_and_stacks(const Config& c) {
  if (c.head_dim == 0 && c.d_model % c.n_heads != 0)
    throw InputError("config: d_model (" + std::to_string(c.d_model) + ") must be divisible by n_heads (" +
                     std::to_string(c.n_heads) + ")");
  if (c.has_encoder() && c.d_model % c.encoder_heads() != 0)
    throw InputError("config: d_model (" + std::to_string(c.d_model) + ") must be divisible by n_encoder_heads (" +
                     std::to_string(c.encoder_heads()) + ")");
  if (c.is_sinusoidal() && c.d_model % 2 != 0)
    throw InputError("config: sinusoidal positional encoding needs an even d_model, found " +
                     std::to_string(c.d_model));
  if (c.has_decoder() && c.n_decoder_layers == 0)
    throw InputError("config: n_decoder_layers expected at least 1, found 0");
  if (!c.has_decoder() && c.n_decoder_layers != 0)
    throw InputError("config: an encoder-only model expects n_decoder_layers 0, found " +
                     std::to_string(c.n_decoder_layers));
  if (c.has_encoder() && c.n_encoder_layers == 0)
    throw InputError(std::string("config: an ") + to_string(c.arch) + " model needs n_encoder_layers >= 1, found 0");
  if (c.arch == Arch::EncoderOnly && !c.share_embeddings)
    throw InputError(
        "config: an encoder-only model expects share_embeddings true (its output is tied to the input table), found "
        "false");
  if (c.mlm_head && c.arch != Arch::EncoderOnly)
    throw InputError(std::string("config: mlm_head expects an encoder-only model, found ") + to_string(c.arch));
  if (!c.has_encoder() && c.n_encoder_layers != 0)
    throw InputError("config: a decoder-only model expects n_encoder_layers 0, found " +
                     std::to_string(c.n_encoder_layers));
  if (!c.has_ffn() && c.arch != Arch::DecoderOnly)
    throw InputError(std::string("config: d_ff 0 (attention-only, no feed-forward sublayers) expects a decoder-only "
                                 "model, found ") +
                     to_string(c.arch));
  if (!c.has_ffn() && c.residual == Residual::Parallel)
    throw InputError("config: d_ff 0 (attention-only) expects residual \"sequential\", found \"parallel\"");
  check_decoder_choices(c);
}

// The vocabularies, tokenised the config's way; an encoder's source vocabulary too.
void read_vocabularies(const json& j, Tokenizer tok, Config& c) {
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
}

Config parse(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError("config: expected JSON, found text that does not parse");
  if (!j.is_object()) throw InputError("config: expected a JSON object, found " + found(j));
  Config c;
  const Tokenizer tok = parse_fields(j, c);
  check_sizes_and_stacks(c);
  read_vocabularies(j, tok, c);
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
  // The Hugging Face choices: written only when they differ from the original Transformer's.
  const Config base;
  if (c.scale_embeddings != base.scale_embeddings) j["scale_embeddings"] = c.scale_embeddings;
  if (c.layer_norm_eps != base.layer_norm_eps) j["layer_norm_eps"] = c.layer_norm_eps;
  if (c.n_encoder_heads != base.n_encoder_heads) j["n_encoder_heads"] = c.n_encoder_heads;
  if (c.d_ff_encoder != base.d_ff_encoder) j["d_ff_encoder"] = c.d_ff_encoder;
  if (c.n_token_types != base.n_token_types) j["n_token_types"] = c.n_token_types;
  if (c.embed_norm != base.embed_norm) j["embed_norm"] = c.embed_norm;
  if (c.mlm_head != base.mlm_head) j["mlm_head"] = c.mlm_head;
  if (c.decoder_pad_mask != base.decoder_pad_mask) j["decoder_pad_mask"] = c.decoder_pad_mask;
  if (c.generator_bias != base.generator_bias) j["generator_bias"] = c.generator_bias;
  if (c.norm_kind != base.norm_kind) j["norm_kind"] = to_string(c.norm_kind);
  if (c.mlp != base.mlp) j["mlp"] = to_string(c.mlp);
  if (c.residual != base.residual) j["residual"] = to_string(c.residual);
  if (c.n_kv_heads != base.n_kv_heads) j["n_kv_heads"] = c.n_kv_heads;
  if (c.head_dim != base.head_dim) j["head_dim"] = c.head_dim;
  if (c.sliding_window != base.sliding_window) j["sliding_window"] = c.sliding_window;
  if (c.qkv_bias != base.qkv_bias) j["qkv_bias"] = c.qkv_bias;
  if (c.o_bias != base.o_bias) j["o_bias"] = c.o_bias;
  if (c.mlp_bias != base.mlp_bias) j["mlp_bias"] = c.mlp_bias;
  if (c.positional == Positional::Rotary) {
    j["rope_theta"] = c.rope.theta;
    j["rotary_fraction"] = c.rope.fraction;
    j["rope_scaling"] = to_string(c.rope.scaling);
    if (c.rope.scaling != RopeScaling::None) j["rope_factor"] = c.rope.factor;
    if (c.rope.scaling == RopeScaling::Llama3) {
      j["rope_low_freq_factor"] = c.rope.low_freq_factor;
      j["rope_high_freq_factor"] = c.rope.high_freq_factor;
      j["rope_original_max_len"] = c.rope.original_max_len;
    }
  }
  if (c.has_encoder()) j["src_vocab"] = c.src_vocab.tokens();
  j["tgt_vocab"] = c.tgt_vocab.tokens();
  return j.dump();
}

}  // namespace sf
