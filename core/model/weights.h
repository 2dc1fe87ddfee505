// weights.h — every parameter of a model, and the one name -> tensor table that drives loading,
// saving, initialisation, gradients and the optimiser.
//
// Names follow PyTorch state_dict habits: a Linear's `weight` is (out_features, in_features) and
// y = x W^T + b. The same struct holds gradients and Adam moments (a Weights of the same shape).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/tensor.h"
#include "model/config.h"
#include "model/packed_gemm.h"

namespace sf {

struct Linear {
  Mat weight;   // (out, in); empty when the weight is kept 16-bit (`half`) or held as `packed` only
  RowVec bias;  // (out)
  // `weight` packed for the matrix kernel (packed_gemm.h), for inference only: made by
  // pack_for_inference (load_model does) and read by linear_forward when present; shared by copies
  // of the model. Beside `weight` (a second copy) in a model small enough to afford one; instead
  // of it (`weight` empty) in a bigger one, where every product runs on it and param_table reads
  // the rows back from it. Whatever changes the weight afterwards must call drop_packed first, or
  // the products read the old values (the trainer never packs).
  std::shared_ptr<const PackedWeight> packed;
  // The weight as a BF16/F16 checkpoint stores it, (out, in), instead of `weight`: a hub model
  // loaded from a 16-bit file keeps its matrices so (io/hf_model.h). linear_forward reads it
  // widened in registers (base/half.h); nothing trains it.
  HalfMat half;
  WeightStorage storage() const { return half.empty() ? WeightStorage::F32 : half.storage; }
  // Held as `packed` only: no float32 rows of its own.
  bool packed_only() const { return weight.size() == 0 && packed != nullptr; }
};

struct LayerNormWeights {
  RowVec weight;                        // (d) gain, init 1
  RowVec bias;                          // (d) shift, init 0 (RMSNorm: none, stays 0 and is not a parameter)
  float eps = 1e-5f;                    // ε, set from Config::layer_norm_eps by allocate() (not a parameter)
  NormKind kind = NormKind::LayerNorm;  // set from Config::norm_kind by allocate()
};

// BERT's masked-LM head before the tied decoder: LN(act(dense(x))) (Devlin et al. 2019).
struct MlmHeadWeights {
  Linear dense;           // (d, d) + (d)
  LayerNormWeights norm;  // (d)
};

struct AttentionWeights {
  // q (h·dk, d), k and v (h_kv·dk, d), o (d, h·dk); each with a bias of its rows (zeros, not a
  // parameter, where the config has none). The original Transformer: all (d, d).
  Linear q_proj, k_proj, v_proj, o_proj;
};

struct FeedForwardWeights {
  Linear fc1;                // (dff, d); the gated MLP's up projection
  Linear fc2;                // (d, dff); the gated MLP's down projection
  Linear gate;               // (dff, d) the gated MLP's gate projection; empty for the standard one
  Mlp kind = Mlp::Standard;  // set from Config::mlp by allocate()
};

struct EncoderLayerWeights {
  AttentionWeights self_attn;
  LayerNormWeights norm1;  // around self-attention
  LayerNormWeights norm2;  // around feed-forward
  FeedForwardWeights ffn;
};

struct DecoderLayerWeights {
  AttentionWeights self_attn;
  AttentionWeights cross_attn;  // encoder-decoder only
  LayerNormWeights norm1;       // self-attention
  LayerNormWeights norm2;       // cross-attention (enc-dec) | feed-forward (decoder-only)
  LayerNormWeights norm3;       // feed-forward (enc-dec only)
  FeedForwardWeights ffn;

  // The norm around the feed-forward block: norm3 with an encoder, norm2 without.
  LayerNormWeights& ffn_norm(Arch a) { return a == Arch::EncoderDecoder ? norm3 : norm2; }
  // (Arch::EncoderOnly has no decoder layers.)
  const LayerNormWeights& ffn_norm(Arch a) const { return a == Arch::EncoderDecoder ? norm3 : norm2; }
};

struct Weights {
  Mat src_embed;                // (V_src, d); empty when shared (then tgt_embed is used)
  Mat tgt_embed;                // (V_tgt, d); empty when kept 16-bit (tgt_embed_half)
  HalfMat tgt_embed_half;       // (V_tgt, d) the 16-bit table instead (a 16-bit hub checkpoint),
                                // read by the embedding and, tied, by the output projection
  Mat pos_embed;                // (max_len, d); learned PE only
  Mat type_embed;               // (n_token_types, d); BERT's segment table only
  LayerNormWeights embed_norm;  // BERT's embedding LayerNorm only
  std::vector<EncoderLayerWeights> encoder;
  LayerNormWeights encoder_norm;  // pre-LN only
  std::vector<DecoderLayerWeights> decoder;
  LayerNormWeights decoder_norm;  // pre-LN only
  MlmHeadWeights mlm;             // encoder-only with an MLM head
  Linear generator;               // (V_tgt, d) + (V_tgt); weight empty when shared. The bias is
                                  // Marian's final_logits_bias, BERT's cls.predictions.bias

  const Mat& src_embedding(const Config& c) const { return c.share_embeddings ? tgt_embed : src_embed; }
  const Mat& generator_weight(const Config& c) const { return c.share_embeddings ? tgt_embed : generator.weight; }
  // The output projection's 16-bit weight (the tied table's or the generator's), or null when it is float32.
  const HalfMat* generator_half(const Config& c) const {
    const HalfMat& h = c.share_embeddings ? tgt_embed_half : generator.half;
    return h.empty() ? nullptr : &h;
  }
  // F32, or the 16-bit storage of the matrices when a 16-bit checkpoint's are kept so.
  WeightStorage matrix_storage() const { return tgt_embed_half.empty() ? generator.storage() : tgt_embed_half.storage; }
};

// One entry of the name table: a view of a parameter's storage with its expected shape.
struct ParamRef {
  std::string name;  // e.g. "decoder.layers.1.cross_attn.k_proj.weight"
  float* data;       // null when the tensor is kept 16-bit (`half`)
  int rows;          // shape (rows, cols); a 1-D tensor has rows == 1 and `vector` set
  int cols;
  bool vector;  // 1-D in the file: shape (cols)
  enum Kind { Embedding, Matrix, Bias, NormGain, NormBias } kind;
  const HalfMat* half = nullptr;         // instead of `data`: a 16-bit hub checkpoint's values
  const PackedWeight* packed = nullptr;  // instead of `data`: the panels of a Linear::packed_only
  int64_t numel() const { return int64_t{rows} * cols; }
  std::vector<float> values() const;  // the values as float32, whatever the storage
};

// Sizes every tensor of `w` for `c` (zero-filled). With `matrices` BF16 or F16, the projections'
// weights and the target embedding (the decoder-only hub families' matrices) are 16-bit instead,
// uninitialised (the loader fills them), and their float32 Mats stay empty.
void allocate(Weights& w, const Config& c, WeightStorage matrices = WeightStorage::F32);
// The ordered table of every parameter present in the file for `c`. `w` must be allocated.
std::vector<ParamRef> param_table(Weights& w, const Config& c);
inline std::vector<ParamRef> param_table(const Weights& w, const Config& c) {
  return param_table(const_cast<Weights&>(w), c);
}

// The most a model holds in second copies of its weights for inference (pack_for_inference).
constexpr int64_t kSecondCopyBytes = int64_t{256} << 20;

// Packs every float32 projection (attention, feed-forward, MLM dense, the generator — tied to the
// target embedding or not) into Linear::packed, so a forward packs only its activations. When they
// total at most `second_copy_bytes` (small and base models), each keeps its rows too. Beyond that
// (GPT-2 and up) the layers' projections and the MLM dense trade their rows for the packing, one
// at a time (held once: Linear::packed_only), and the output projection — whose rows the
// embedding, a cached step and attribution read — keeps them, with a packed copy beside them when
// it alone fits the bound. 16-bit matrices (the layers', the output projection's and the target
// embedding's) are rearranged into the same panels, still 16-bit (base/half.h's panel layout),
// which both a product over several rows and a cached step read.
void pack_for_inference(Weights& w, int64_t second_copy_bytes = kSecondCopyBytes);
// Drops every Linear::packed (before changing weights in place), unpacking the rows of one held
// as packed only.
void drop_packed(Weights& w);
// W (out, in) as float32: its rows, read back from its packing, or widened from 16 bits.
Mat float_weight(const Linear& l);

// Xavier-uniform for every matrix (embeddings included, as the Annotated Transformer does), zero
// biases, unit LayerNorm gains. Deterministic for a seed on every platform (own RNG).
void init_xavier(Weights& w, const Config& c, uint64_t seed);

// Component-wise parameter counts ("embeddings", "encoder.layers.0.self_attn", ...).
struct ParamCount {
  std::string component;
  int64_t count;
};
std::vector<ParamCount> count_params_by_component(const Weights& w, const Config& c);
int64_t count_params(const Weights& w, const Config& c);
// The bytes the parameters occupy as held: 4 per float32 value, 2 per value kept BF16/F16.
int64_t held_bytes(const Weights& w, const Config& c);

}  // namespace sf
