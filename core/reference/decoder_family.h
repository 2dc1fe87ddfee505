// decoder_family.h — the hub families' decoder-only forward pass (Llama, Qwen2, Mistral,
// GPT-NeoX/Pythia) composed from the Llama-style pieces: RMSNorm (or LayerNorm), rotary
// attention with grouped-query heads, SwiGLU (or the plain MLP), the sliding window for Mistral,
// partial rotary and the parallel residual for GPT-NeoX.
#pragma once

#include <vector>

#include "base/tensor.h"
#include "model/model.h"
#include "reference/attention.h"
#include "reference/encoder.h"

namespace sf::ref {

// Each head of x (n, heads·d_k) turned by rotary() at positions 0 .. n − 1.
Mat rotate_heads(const Mat& x, int heads, const RowVec& theta);  // (n, heads·d_k) -> (n, heads·d_k)

// The family's norm: RMSNorm (Llama, Qwen2, Mistral) or LayerNorm (GPT-NeoX).
Mat family_norm(const Config& c, const Mat& x, const LayerNormWeights& w);  // (n, d) -> (n, d)

// The family's MLP: SwiGLU (Mlp::Gated) or the plain two-layer feed-forward.
Mat family_mlp(const Config& c, const Mat& x, const FeedForwardWeights& w);  // (n, d) -> (n, d)

// Self-attention on the normed input h: q = rotary(hW_qᵀ), k = rotary(hW_kᵀ), v = hW_vᵀ, then
// grouped-query attention under `mask` (causal, or the sliding window).
MultiHeadAttention family_self_attention(const Config& c, const AttentionWeights& w, const Mat& h, const RowVec& theta,
                                         const Mat& mask);  // h (n, d), mask (n, n)

struct FamilyLayer {
  Mat out;                   // (n, d)
  std::vector<Mat> weights;  // [head] (n, n)
};

// One block. Sequential (Llama, Qwen2, Mistral):
//   y = x + Attn(Norm₁(x));  out = y + MLP(Norm₂(y))
// Parallel (GPT-NeoX, Pythia), both sublayers reading the same x:
//   out = x + Attn(Norm₁(x)) + MLP(Norm₂(x))
FamilyLayer family_layer(const Config& c, const DecoderLayerWeights& w, const Mat& x, const RowVec& theta,
                         const Mat& mask);  // x (n, d)

struct FamilyDecoder {
  AttentionMaps self_weights;  // [layer][head] (n, n)
  Mat logits;                  // (n, V) row t scores the token after position t
};

// ids (n): embedding, the blocks, the final norm, then logits = x W_embᵀ (or the untied head),
// without bias. Ids must be in range (check_ids in model/model.h).
FamilyDecoder family_decoder(const Model& m, const std::vector<int>& ids);

}  // namespace sf::ref
