// attribution.h — direct logit attribution: how much each head, each MLP and the embedding write,
// directly, into the logit of a chosen token (or into the difference of two tokens' logits).
//
// The residual stream is a sum of what each part wrote into it. The unembedding is linear; the
// norms on the way are not, so their statistics are frozen at the run's values, which makes each
// an affine map:
//   LayerNorm  x ↦ (x − mean(x)) · rstd ⊙ γ + β,   rstd = 1/√(σ² + ε) of this run, per token.
// Each part goes through the linear half (x − mean(x)) · rstd ⊙ γ; the β's are a part of their own
// ("norm biases"). Pre-LN: only the final LayerNorm lies between a part and the logits. Post-LN:
// every block's LayerNorm after the part does. With the scales frozen the parts add up exactly
// (in real arithmetic) to the stream the unembedding reads, so
//   Σ parts + unembedding bias = the logit (or the difference)                     (tested)
// A head's part is its slice of the output projection: head_h W_o[:, h·dk:(h+1)·dk]ᵀ; the output
// projection's bias is the layer's "attention bias" part. An MLP's part includes its biases.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "model/trace.h"
#include "stepper/stage.h"

namespace sf {

enum class PartKind { Embedding, Head, AttentionBias, Mlp, NormBias, UnembeddingBias };
const char* to_string(PartKind k);

struct AttributionPart {
  PartKind kind = PartKind::Embedding;
  int layer = -1;             // -1 for the embedding, the norm biases, the unembedding bias
  Block block = Block::None;  // SelfAttention or CrossAttention for heads and their bias
  int head = -1;              // heads only
  double value = 0;           // its direct contribution to the logit (difference)
};

struct Attribution {
  int position = 0;
  int token = 0;
  int other = -1;    // -1: the logit of `token`; else logit(token) − logit(other)
  double total = 0;  // the model's own logit (difference) at `position`, from the recording
  double sum = 0;    // Σ parts.value
  std::vector<AttributionPart> parts;
  // The value of head (layer, head) of an attention kind, or of layer's MLP; 0 when absent.
  double head(int layer, Block b, int h) const;
  double mlp(int layer) const;
  double attention_bias(int layer, Block b) const;  // the output projection's bias of that sublayer
  double of_kind(PartKind k) const;                 // Σ of every part of one kind
  std::string note;                                 // what was frozen, said in one sentence for the UI
};

// For a full decoder recording (decoder-only or encoder-decoder) of a model with a linear
// unembedding. Errors name what is missing: a compact recording, an encoder-only model (its MLM
// head is not linear), a position or token out of range.
Result<Attribution> direct_logit_attribution(const Model& m, const DecoderTrace& t, int position, int token,
                                             int other = -1);

}  // namespace sf
