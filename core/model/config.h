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
// Learned: a trained (max_len, d) table (GPT-2, BERT). Rotary (Su et al. 2021; Llama, Qwen2,
// Mistral, GPT-NeoX): nothing added to the input; queries and keys are rotated by their position
// inside self-attention (model/rotary.h).
enum class Positional { Sinusoidal, Learned, SinusoidalHalves, Rotary };
// LayerNorm: (x − μ)/√(σ² + ε)·w + b. RMSNorm (Zhang & Sennrich 2019; Llama, Qwen2, Mistral):
// x/√(mean(x²) + ε)·w, no mean subtracted, no bias.
enum class NormKind { LayerNorm, RMSNorm };
// Standard: fc2(act(fc1(x))). Gated (SwiGLU, Shazeer 2020; Llama): down(act(gate(x)) ⊙ up(x)),
// fc1 = up, fc2 = down, plus the gate projection.
enum class Mlp { Standard, Gated };
// Sequential: x += attn(LN1(x)), then x += mlp(LN2(x)). Parallel (GPT-NeoX, GPT-J): both branches
// read the layer's input, x + attn(LN1(x)) + mlp(LN2(x)).
enum class Residual { Sequential, Parallel };
// How rotary frequencies are changed for long contexts (transformers' rope_scaling "rope_type").
//   Linear: θ_i / factor.  Llama3: long wavelengths / factor, short ones kept, a smooth ramp between.
enum class RopeScaling { None, Linear, Llama3 };

struct RopeConfig {
  float theta = 10000.0f;  // base of the frequencies θ_i = theta^(−2i/rotary_dim)
  float fraction = 1.0f;   // share of each head's dimensions that rotate (GPT-NeoX rotary_pct)
  RopeScaling scaling = RopeScaling::None;
  float factor = 1.0f;            // Linear, Llama3
  float low_freq_factor = 1.0f;   // Llama3
  float high_freq_factor = 4.0f;  // Llama3
  int original_max_len = 8192;    // Llama3: original_max_position_embeddings
};

struct Config {
  Arch arch = Arch::EncoderDecoder;
  int d_model = 0;
  int n_heads = 0;
  int n_encoder_layers = 0;
  int n_decoder_layers = 0;
  int d_ff = 0;  // 0: no feed-forward sublayers (an attention-only decoder, Elhage et al. 2021)
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

  // Choices of the Llama-style decoders (Llama, Qwen2, Mistral, GPT-NeoX); the defaults are the
  // original Transformer's, written to JSON only when they differ.
  NormKind norm_kind = NormKind::LayerNorm;
  Mlp mlp = Mlp::Standard;
  Residual residual = Residual::Sequential;
  int n_kv_heads = 0;      // K/V heads (grouped-query attention); 0 = n_heads. Query head h reads
                           // K/V head h ÷ (n_heads ÷ n_kv_heads)
  int head_dim = 0;        // 0 = d_model / n_heads; Llama's head_dim may differ
  int sliding_window = 0;  // decoder self-attention: query i sees keys j with i − W < j ≤ i; 0 = all
  bool qkv_bias = true;    // q/k/v projections have a bias (Llama: attention_bias; Qwen2: yes)
  bool o_bias = true;      // the attention output projection has a bias (Qwen2: no)
  bool mlp_bias = true;    // the feed-forward projections have biases (Llama: mlp_bias)
  RopeConfig rope;         // Positional::Rotary only

  int d_k() const { return head_dim > 0 ? head_dim : d_model / n_heads; }
  int kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  int d_attn() const { return n_heads * d_k(); }   // width of Q and of the heads' concat
  int d_kv() const { return kv_heads() * d_k(); }  // width of K and V (the KV cache's rows)
  // Dimensions of each head that rotate: int(d_k · fraction), as transformers rounds it.
  int rotary_dim() const { return static_cast<int>(static_cast<float>(d_k()) * rope.fraction); }
  int encoder_heads() const { return n_encoder_heads > 0 ? n_encoder_heads : n_heads; }
  // The encoder's head width: its heads split d_model (head_dim is a decoder-only choice), so its
  // d_k — the √d_k its scores divide by — differs from d_k() when its head count does.
  int encoder_d_k() const { return d_model / encoder_heads(); }
  int encoder_d_ff() const { return d_ff_encoder > 0 ? d_ff_encoder : d_ff; }
  // has_encoder: an encoder stack runs (encoder-decoder, encoder-only); has_decoder: a decoder
  // stack runs (encoder-decoder, decoder-only); cross-attention needs both.
  bool has_encoder() const { return arch != Arch::DecoderOnly; }
  bool has_decoder() const { return arch != Arch::EncoderOnly; }
  bool has_cross_attention() const { return arch == Arch::EncoderDecoder; }
  // Each layer has its feed-forward sublayer (and the norm around it); false for an attention-only
  // decoder (d_ff 0), whose layers are self-attention alone.
  bool has_ffn() const { return d_ff > 0; }
  bool is_sinusoidal() const {
    return positional == Positional::Sinusoidal || positional == Positional::SinusoidalHalves;
  }
  // A choice the training code (backward, trainer) does not implement: these models run forward only.
  bool forward_only() const {
    return positional == Positional::Rotary || norm_kind != NormKind::LayerNorm || mlp != Mlp::Standard ||
           residual != Residual::Sequential || kv_heads() != n_heads || d_attn() != d_model || sliding_window > 0;
  }
};

// Parses and validates; the message names the field, what was expected and what was found.
Result<Config> parse_config(const std::string& json_text);
std::string config_to_json(const Config& c);  // round-trips through parse_config

const char* to_string(Arch a);
const char* to_string(NormPlacement n);
const char* to_string(Activation a);
const char* to_string(Positional p);
const char* to_string(Tokenizer t);
const char* to_string(NormKind n);
const char* to_string(Mlp m);
const char* to_string(Residual r);
const char* to_string(RopeScaling r);

}  // namespace sf
