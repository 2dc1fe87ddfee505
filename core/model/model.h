// model.h — a loaded model (configuration + weights) and the switches a run can flip.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "base/result.h"
#include "base/tensor.h"
#include "model/embedding.h"
#include "model/intervention.h"
#include "model/model_source.h"
#include "model/rotary.h"
#include "model/weights.h"

namespace sf {

struct Model {
  Config config;
  Weights weights;
  Mat sinusoid;          // (max_len, d) the sinusoidal table (either layout), computed once (empty for learned PE)
  RowVec rope_inv_freq;  // (rotary_dim / 2) rotary models: the frequencies θ_i after rope scaling
  ModelSource source;    // where it was loaded from (family, files, stored dtype, tokenizer)

  // Builds the derived tables; call after the weights are set.
  static Model make(Config c, Weights w);
  // (max_len, d): the rows added to the scaled embeddings.
  const Mat& positions() const { return config.positional == Positional::Learned ? weights.pos_embed : sinusoid; }
  // What the encoder (source = true) or the decoder embedding reads: table, positions, the
  // √d-or-1 scale, and BERT's token types and embedding LayerNorm when the config has them.
  EmbeddingParams embedding(bool source) const;
  // Rotary models: the rotation of a decoder self-attention call over rows_per_seq rows per
  // sequence starting at position pos0; a rotation that turns nothing otherwise (rot_dim 0).
  Rotation rotation(int pos0, int rows_per_seq) const;
};

// Switches for teaching experiments (the explorer's "remove PE" and "remove causal mask").
struct RunOptions {
  bool positional_encoding = true;  // false: add nothing (rotary: turn nothing), so word order stops mattering
  bool causal_mask = true;          // false: decoder self-attention sees future tokens (the leak)
  // Ablations and patches the stacks apply to their own activations (model/intervention.h); null:
  // a normal run, which calls nothing.
  std::shared_ptr<const Intervention> intervention;
};

// Checks ids for a side ("source"/"target") before any forward pass: non-empty, within max_len
// and inside the vocabulary. The message names what was expected and what was found.
Result<bool> check_ids(const Model& m, const std::vector<int>& ids, bool source);

// Decoder input for a target or prompt: the ids framed as the vocabulary's Framing says when its
// loader set one (Hugging Face decoder families: Llama <s> …, Qwen2 nothing, GPT-2
// <|endoftext|> …; Vocab::framing() says why), else <s> followed by the ids. A vocabulary without
// <s> (Marian's SentencePiece) starts with <pad>: its decoder_start_token_id is pad_token_id.
std::vector<int> with_bos(const Vocab& v, const std::vector<int>& ids);

}  // namespace sf
