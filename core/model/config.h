// config.h — a model's hyper-parameters and vocabularies (the "stepformer.config" JSON).
//
// Each architectural choice is one enum, dispatched in one place in the model code.
#pragma once

#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

enum class Arch { EncoderDecoder, DecoderOnly };
// Where LayerNorm sits around each sublayer (Xiong et al. 2020):
//   Post: x = LN(x + Sublayer(x))          (Vaswani et al. 2017)
//   Pre:  x = x + Sublayer(LN(x)), and a final LN closes each stack.
enum class NormPlacement { Pre, Post };
enum class Activation { Relu, Gelu };  // Gelu is the exact erf form (PyTorch's default)
enum class Positional { Sinusoidal, Learned };

struct Config {
  Arch arch = Arch::EncoderDecoder;
  int d_model = 0;
  int n_heads = 0;
  int n_encoder_layers = 0;
  int n_decoder_layers = 0;
  int d_ff = 0;
  int max_len = 0;
  NormPlacement norm = NormPlacement::Post;
  Activation activation = Activation::Relu;
  Positional positional = Positional::Sinusoidal;
  bool share_embeddings = false;
  Vocab src_vocab;  // empty for decoder-only models
  Vocab tgt_vocab;

  int d_k() const { return d_model / n_heads; }
  bool has_encoder() const { return arch == Arch::EncoderDecoder; }
};

// Parses and validates; the message names the field, what was expected and what was found.
Result<Config> parse_config(const std::string& json_text);
std::string config_to_json(const Config& c);  // round-trips through parse_config

const char* to_string(Arch a);
const char* to_string(NormPlacement n);
const char* to_string(Activation a);
const char* to_string(Positional p);
const char* to_string(Tokenizer t);

}  // namespace sf
