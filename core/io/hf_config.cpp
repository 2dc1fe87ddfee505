#include "io/hf_config.h"

#include <nlohmann/json.hpp>

namespace sf {

using nlohmann::json;

namespace {

std::string found(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// Reads config.json fields with messages that name the file and the key.
struct Reader {
  const json& j;
  const std::string& what;

  [[noreturn]] void fail(const std::string& msg) const { throw InputError(what + ": " + msg); }

  int integer(const char* key, int lo, int hi) const {
    if (!j.contains(key) || j[key].is_null()) fail(std::string("missing field '") + key + "'");
    return integer_value(key, j[key], lo, hi);
  }
  int integer_or(const char* key, int lo, int hi, int fallback) const {
    return !j.contains(key) || j[key].is_null() ? fallback : integer_value(key, j[key], lo, hi);
  }
  int integer_value(const char* key, const json& v, int lo, int hi) const {
    if (!v.is_number_integer()) fail(std::string("field '") + key + "' expected an integer, found " + found(v));
    const long long x = v.get<long long>();
    if (x < lo || x > hi)
      fail(std::string("field '") + key + "' expected " + std::to_string(lo) + ".." + std::to_string(hi) + ", found " +
           std::to_string(x));
    return static_cast<int>(x);
  }
  bool boolean(const char* key, bool fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) fail(std::string("field '") + key + "' expected true or false, found " + found(j[key]));
    return j[key].get<bool>();
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) fail(std::string("field '") + key + "' expected a string, found " + found(j[key]));
    return j[key].get<std::string>();
  }
  float epsilon(const char* key, float fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    const json& v = j[key];
    if (!v.is_number() || !(v.get<double>() > 0.0) || !(v.get<double>() < 1.0))
      fail(std::string("field '") + key + "' expected a number in (0, 1), found " + found(v));
    return static_cast<float>(v.get<double>());
  }
  double number(const char* key, double fallback, double lo, double hi) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    return number_value(key, lo, hi);
  }
  double required_number(const char* key, double lo, double hi, const char* within) const {
    if (!j.contains(key) || j[key].is_null()) fail(std::string(within) + ": missing field '" + key + "'");
    return number_value(key, lo, hi);
  }
  double number_value(const char* key, double lo, double hi) const {
    const json& v = j[key];
    if (!v.is_number() || !(v.get<double>() >= lo) || !(v.get<double>() <= hi))
      fail(std::string("field '") + key + "' expected a number in [" + json(lo).dump() + ", " + json(hi).dump() +
           "], found " + found(v));
    return v.get<double>();
  }
  // transformers' ACT2FN names for the activations stepformer has.
  Activation activation(const char* key, const std::string& fallback) const {
    const std::string a = string(key, fallback);
    if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") return Activation::GeluTanh;
    if (a == "gelu") return Activation::Gelu;
    if (a == "relu") return Activation::Relu;
    if (a == "swish" || a == "silu") return Activation::Swish;
    fail(std::string("field '") + key +
         "' expected gelu_new | gelu_pytorch_tanh | gelu | relu | swish | silu, found \"" + a + "\"");
  }
  // A key whose value must be `want` for the model to be computed as stepformer computes it.
  void require(const char* key, const json& want, const std::string& why) const {
    if (j.contains(key) && !j[key].is_null() && j[key] != want)
      fail(std::string("field '") + key + "' is " + found(j[key]) + "; stepformer implements only " + want.dump() +
           " (" + why + ")");
  }
};

// What each family calls the sizes every model has, and its fixed architectural choices.
struct Family {
  Arch arch;
  NormPlacement norm;
  Positional positional;
  const char *d_model, *heads, *layers, *d_ff, *max_len, *activation, *default_activation;
};

void read_family(const Reader& r, const Family& f, Config& c) {
  c.arch = f.arch;
  c.norm = f.norm;
  c.positional = f.positional;
  c.d_model = r.integer(f.d_model, 2, 1 << 16);
  c.n_heads = r.integer(f.heads, 1, 1 << 10);
  (f.arch == Arch::DecoderOnly ? c.n_decoder_layers : c.n_encoder_layers) = r.integer(f.layers, 1, 1000);
  c.d_ff = r.integer_or(f.d_ff, 1, 1 << 20, 4 * c.d_model);  // GPT-2's n_inner null: 4 · n_embd
  c.max_len = r.integer(f.max_len, 1, 1 << 16);              // Marian's table is computed: (max_len, d) floats
  c.activation = r.activation(f.activation, f.default_activation);
  c.scale_embeddings = false;
}

void gpt2(const Reader& r, HfConfig& h) {
  Config& c = h.config;
  // ln_1 / ln_2 before each sublayer, ln_f closes the stack.
  read_family(r,
              {Arch::DecoderOnly, NormPlacement::Pre, Positional::Learned, "n_embd", "n_head", "n_layer", "n_inner",
               "n_positions", "activation_function", "gelu_new"},
              c);
  c.layer_norm_eps = r.epsilon("layer_norm_epsilon", 1e-5f);
  c.decoder_pad_mask = false;  // GPT-2 has no <pad>; HF masks nothing without an attention_mask
  c.generator_bias = false;    // lm_head has no bias (generator.bias stays zero, not a parameter)
  h.vocab_size = r.integer("vocab_size", 1, 1 << 24);
  h.tie_word_embeddings = r.boolean("tie_word_embeddings", true);
  r.require("scale_attn_weights", true, "scores divided by √dk");
  r.require("scale_attn_by_inverse_layer_idx", false, "no extra 1/(layer+1) scaling");
  r.require("add_cross_attention", false, "no cross-attention in GPT-2");
}

void marian(const Reader& r, HfConfig& h) {
  Config& c = h.config;
  // Heads and FFN sizes per stack: the encoder_* keys, the decoder_* keys.
  read_family(
      r,
      {Arch::EncoderDecoder, NormPlacement::Post, Positional::SinusoidalHalves, "d_model", "decoder_attention_heads",
       "encoder_layers", "decoder_ffn_dim", "max_position_embeddings", "activation_function", "swish"},
      c);
  c.n_encoder_heads = r.integer("encoder_attention_heads", 1, 1 << 10);
  c.n_decoder_layers = r.integer("decoder_layers", 1, 1000);
  c.d_ff = r.integer("decoder_ffn_dim", 1, 1 << 20);
  c.d_ff_encoder = r.integer("encoder_ffn_dim", 1, 1 << 20);
  c.scale_embeddings = r.boolean("scale_embedding", false);
  c.layer_norm_eps = 1e-5f;    // nn.LayerNorm's default; Marian's config has no key for it
  c.decoder_pad_mask = false;  // the decoder starts with <pad> and attends to it
  h.vocab_size = r.integer_or("decoder_vocab_size", 1, 1 << 24, 0);  // null: = vocab_size
  const int v = r.integer("vocab_size", 1, 1 << 24);
  if (h.vocab_size == 0) h.vocab_size = v;
  h.src_vocab_size = v;
  c.share_embeddings = r.boolean("share_encoder_decoder_embeddings", true);
  h.tie_word_embeddings = r.boolean("tie_word_embeddings", true);
  h.pad_token_id = r.integer("pad_token_id", 0, h.vocab_size - 1);
  h.decoder_start_token_id = r.integer_or("decoder_start_token_id", 0, h.vocab_size - 1, h.pad_token_id);
  r.require("normalize_before", false, "post-LN, as every opus-mt model");
  r.require("normalize_embedding", false, "no LayerNorm on the embeddings");
  r.require("add_final_layer_norm", false, "no LayerNorm closing the stacks");
  r.require("static_position_embeddings", true, "the fixed sinusoidal table");
}

void bert(const Reader& r, HfConfig& h) {
  Config& c = h.config;
  read_family(r,
              {Arch::EncoderOnly, NormPlacement::Post, Positional::Learned, "hidden_size", "num_attention_heads",
               "num_hidden_layers", "intermediate_size", "max_position_embeddings", "hidden_act", "gelu"},
              c);
  c.share_embeddings = true;  // the MLM decoder is the word-embedding table
  c.layer_norm_eps = r.epsilon("layer_norm_eps", 1e-12f);
  c.n_token_types = r.integer_or("type_vocab_size", 0, 1 << 10, 2);
  c.embed_norm = true;
  h.vocab_size = r.integer("vocab_size", 1, 1 << 24);
  h.pad_token_id = r.integer_or("pad_token_id", 0, h.vocab_size - 1, 0);
  r.require("position_embedding_type", "absolute", "learned absolute positions");
  r.require("is_decoder", false, "a bidirectional encoder");
}

// rope_theta and rope_scaling (transformers' modeling_rope_utils): "default" / absent, "linear" and
// "llama3" are computed; any other type is refused by name.
void rope(const Reader& r, const char* theta_key, float theta_fallback, Config& c) {
  RopeConfig& rc = c.rope;
  rc.theta = static_cast<float>(r.number(theta_key, theta_fallback, 1.0, 1e12));
  if (!r.j.contains("rope_scaling") || r.j["rope_scaling"].is_null()) return;
  const json& s = r.j["rope_scaling"];
  if (!s.is_object()) r.fail("field 'rope_scaling' expected an object or null, found " + found(s));
  const Reader sr{s, r.what};
  const std::string type = sr.string("rope_type", sr.string("type", ""));
  if (type == "default") return;
  if (type == "linear") {
    rc.scaling = RopeScaling::Linear;
    rc.factor = static_cast<float>(sr.required_number("factor", 1e-3, 1e6, "rope_scaling"));
    return;
  }
  if (type == "llama3") {
    rc.scaling = RopeScaling::Llama3;
    rc.factor = static_cast<float>(sr.required_number("factor", 1e-3, 1e6, "rope_scaling"));
    rc.low_freq_factor = static_cast<float>(sr.required_number("low_freq_factor", 1e-3, 1e6, "rope_scaling"));
    rc.high_freq_factor = static_cast<float>(sr.required_number("high_freq_factor", 1e-3, 1e6, "rope_scaling"));
    rc.original_max_len = sr.integer("original_max_position_embeddings", 1, 1 << 24);
    if (!(rc.high_freq_factor > rc.low_freq_factor))
      r.fail("rope_scaling: high_freq_factor (" + found(s["high_freq_factor"]) +
             ") expected greater than low_freq_factor (" + found(s["low_freq_factor"]) + ")");
    return;
  }
  r.fail("rope_scaling type \"" + type +
         "\" is not supported; stepformer computes rotary frequencies for \"default\", \"linear\" and \"llama3\"");
}

// The sizes of a Llama-style decoder and the choices it shares with the others: pre-norm, rotary
// positions, no embedding scale, no <pad> mask, a head without bias.
void rotary_decoder(const Reader& r, HfConfig& h, const char* default_activation) {
  Config& c = h.config;
  c.arch = Arch::DecoderOnly;
  c.norm = NormPlacement::Pre;
  c.positional = Positional::Rotary;
  c.d_model = r.integer("hidden_size", 2, 1 << 16);
  c.n_heads = r.integer("num_attention_heads", 1, 1 << 10);
  c.n_decoder_layers = r.integer("num_hidden_layers", 1, 1000);
  c.d_ff = r.integer("intermediate_size", 1, 1 << 20);
  // No table of max_len rows is allocated for rotary positions: Llama 3's 131,072 is accepted.
  c.max_len = r.integer("max_position_embeddings", 1, 1 << 24);
  c.activation = r.activation("hidden_act", default_activation);
  c.scale_embeddings = false;
  c.decoder_pad_mask = false;  // transformers masks no <pad> without an attention_mask
  c.generator_bias = false;    // lm_head / embed_out have no bias
  h.vocab_size = r.integer("vocab_size", 1, 1 << 24);
}

// Llama, Qwen2, Mistral: RMSNorm, SwiGLU, grouped-query attention, rotate_half rotary.
void llama_like(const Reader& r, HfConfig& h) {
  Config& c = h.config;
  rotary_decoder(r, h, "silu");
  c.norm_kind = NormKind::RMSNorm;
  c.mlp = Mlp::Gated;
  c.layer_norm_eps = r.epsilon("rms_norm_eps", 1e-6f);
  c.n_kv_heads = r.integer_or("num_key_value_heads", 1, c.n_heads, c.n_heads);
  if (c.n_heads % c.n_kv_heads != 0)
    r.fail("num_attention_heads (" + std::to_string(c.n_heads) + ") expected a multiple of num_key_value_heads (" +
           std::to_string(c.n_kv_heads) + ")");
  c.head_dim = r.integer_or("head_dim", 2, 1 << 12, 0);
  if (c.head_dim == 0) {
    if (c.d_model % c.n_heads != 0)
      r.fail("hidden_size " + std::to_string(c.d_model) + " is not divisible by num_attention_heads " +
             std::to_string(c.n_heads) + " (and there is no head_dim)");
    c.head_dim = c.d_model / c.n_heads;
  }
  if (c.head_dim % 2 != 0) r.fail("head_dim " + std::to_string(c.head_dim) + " expected even (rotary pairs)");
  rope(r, "rope_theta", 10000.0f, c);
  r.require("partial_rotary_factor", 1.0, "every dimension of a head rotates");
  h.tie_word_embeddings = r.boolean("tie_word_embeddings", false);  // the default of all three
  c.share_embeddings = h.tie_word_embeddings;
  if (h.model_type == "llama") {
    const bool attention_bias = r.boolean("attention_bias", false);
    c.qkv_bias = c.o_bias = attention_bias;
    c.mlp_bias = r.boolean("mlp_bias", false);
  } else if (h.model_type == "qwen2") {
    c.qkv_bias = true;  // Qwen2: q/k/v with bias, o_proj without
    c.o_bias = false;
    c.mlp_bias = false;
    r.require("use_sliding_window", false, "full causal attention in every layer");
  } else {  // mistral
    c.qkv_bias = c.o_bias = c.mlp_bias = false;
    c.sliding_window = r.integer_or("sliding_window", 1, 1 << 24, 0);
  }
}

// GPT-NeoX (Pythia): LayerNorm with bias, fused per-head QKV, partial rotary, parallel residual.
void gpt_neox(const Reader& r, HfConfig& h) {
  Config& c = h.config;
  rotary_decoder(r, h, "gelu");
  if (c.d_model % c.n_heads != 0)
    r.fail("hidden_size " + std::to_string(c.d_model) + " is not divisible by num_attention_heads " +
           std::to_string(c.n_heads));
  c.layer_norm_eps = r.epsilon("layer_norm_eps", 1e-5f);
  c.rope.fraction = static_cast<float>(r.number("rotary_pct", 0.25, 0.0, 1.0));
  if (c.rotary_dim() < 2 || c.rotary_dim() % 2 != 0)
    r.fail("rotary_pct " + found(r.j.value("rotary_pct", json(0.25))) + " of head size " + std::to_string(c.d_k()) +
           " gives " + std::to_string(c.rotary_dim()) + " rotating dimensions; expected an even number >= 2");
  // Newer files name the base rope_theta, older ones rotary_emb_base.
  rope(r, r.j.contains("rope_theta") ? "rope_theta" : "rotary_emb_base", 10000.0f, c);
  c.residual = r.boolean("use_parallel_residual", true) ? Residual::Parallel : Residual::Sequential;
  const bool bias = r.boolean("attention_bias", true);
  c.qkv_bias = c.o_bias = bias;
  h.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  c.share_embeddings = h.tie_word_embeddings;
}

HfConfig parse(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(what +
                     ": expected a JSON object (a Hugging Face config.json), found text that does not parse as one");
  Reader r{j, what};
  HfConfig h;
  h.model_type = r.string("model_type", "");
  if (h.model_type.empty()) r.fail("missing field 'model_type' (expected \"gpt2\", \"marian\" or \"bert\")");
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    h.architecture = j["architectures"][0].get<std::string>();
  if (h.model_type == "gpt2")
    gpt2(r, h);
  else if (h.model_type == "marian")
    marian(r, h);
  else if (h.model_type == "bert")
    bert(r, h);
  else if (h.model_type == "llama" || h.model_type == "qwen2" || h.model_type == "mistral")
    llama_like(r, h);
  else if (h.model_type == "gpt_neox")
    gpt_neox(r, h);
  else
    r.fail("model_type \"" + h.model_type +
           "\" is not supported; stepformer opens \"gpt2\" (GPT-2, distilgpt2), "
           "\"marian\" (opus-mt), \"bert\" (BERT-style encoders), \"llama\" (Llama, TinyLlama, SmolLM), "
           "\"qwen2\", \"mistral\" and \"gpt_neox\" (Pythia)");
  if (h.src_vocab_size == 0) h.src_vocab_size = h.vocab_size;
  const Config& c = h.config;
  if (c.head_dim == 0 && (c.d_model % c.n_heads != 0 || c.d_model % c.encoder_heads() != 0))
    r.fail("the hidden size " + std::to_string(c.d_model) + " is not divisible by the number of heads (" +
           std::to_string(c.encoder_heads()) + " / " + std::to_string(c.n_heads) + ")");
  return h;
}

}  // namespace

Result<HfConfig> parse_hf_config(const std::string& json_text, const std::string& what) {
  try {
    return parse(json_text, what);
  } catch (const InputError& e) {
    return Error{e.what()};
  } catch (const std::exception& e) {
    return Error{what + ": " + e.what()};
  }
}

}  // namespace sf
