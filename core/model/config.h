// config.h — a model's hyper-parameters and vocabularies (the "stepformer.config" JSON).
//
// Each architectural choice is one enum, dispatched in one place in the model code.
#pragma once

#include <string>

#include "base/result.h"
#include "text/vocab.h"

namespace sf {

// EncoderOnly (BERT): the encoder runs alone; its "logits" are the masked-LM head's, per position.
enum class Arch { EncoderDecoder, DecoderOnly, EncoderOnly };
// Where LayerNorm sits around each sublayer (Xiong et al. 2020):
//   Post: x = LN(x + Sublayer(x))          (Vaswani et al. 2017)
//   Pre:  x = x + Sublayer(LN(x)), and a final LN closes each stack.
enum class NormPlacement { Pre, Post };
// Gelu: the exact erf form (PyTorch's default, BERT "gelu"); GeluTanh: GPT-2's "gelu_new" tanh
// approximation; Swish: x·σ(x) (Marian "swish", a.k.a. SiLU).
enum class Activation { Relu, Gelu, GeluTanh, Swish };
// Sinusoidal: Vaswani's interleaved table (sin in even, cos in odd columns). SinusoidalHalves:
// Marian's layout of the same frequencies, every sine first then every cosine.
// Learned: a trained (max_len, d) table (GPT-2, BERT).
enum class Positional { Sinusoidal, Learned, SinusoidalHalves };

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
  // One table for source, target and output projection (the output is tied to the target
  // embedding): Vaswani §3.4, Marian, GPT-2's lm_head = wte, BERT's MLM decoder = word embeddings.
  bool share_embeddings = false;
  Vocab src_vocab;  // empty for decoder-only models
  Vocab tgt_vocab;  // encoder-only: the same vocabulary as src_vocab (the MLM head predicts it)

  // Choices the Hugging Face families need; the defaults are the original Transformer's, and
  // config_to_json writes them only when they differ, so existing stepformer.config JSON is
  // unchanged.
  bool scale_embeddings = true;  // token embedding × √d (Vaswani §3.4, Marian); GPT-2 and BERT: × 1
  float layer_norm_eps = 1e-5f;  // ε of every LayerNorm (BERT: 1e-12)
  int n_encoder_heads = 0;       // 0 = n_heads (Marian may differ between the stacks)
  int d_ff_encoder = 0;          // 0 = d_ff
  int n_token_types = 0;         // BERT's token-type (segment) table rows; 0 = none
  bool embed_norm = false;       // a LayerNorm on the embedding sum before layer 0 (BERT)
  bool mlm_head = false;         // encoder-only: dense + activation + LayerNorm + tied decoder + bias
  bool decoder_pad_mask = true;  // mask <pad> keys in decoder self-attention; Marian starts the
                                 // decoder with <pad> and attends to it (HF builds no such mask)
  bool generator_bias = true;    // the output projection has a bias; GPT-2's has none: its
                                 // generator.bias stays zero and is not a parameter (not counted,
                                 // trained or stored), as in Hugging Face's count

  int d_k() const { return d_model / n_heads; }
  int encoder_heads() const { return n_encoder_heads > 0 ? n_encoder_heads : n_heads; }
  int encoder_d_ff() const { return d_ff_encoder > 0 ? d_ff_encoder : d_ff; }
  // has_encoder: an encoder stack runs (encoder-decoder, encoder-only); has_decoder: a decoder
  // stack runs (encoder-decoder, decoder-only); cross-attention needs both.
  bool has_encoder() const { return arch != Arch::DecoderOnly; }
  bool has_decoder() const { return arch != Arch::EncoderOnly; }
  bool has_cross_attention() const { return arch == Arch::EncoderDecoder; }
  bool is_sinusoidal() const { return positional != Positional::Learned; }
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
