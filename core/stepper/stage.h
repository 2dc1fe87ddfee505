// stage.h — the granularity a teacher steps through: one sublayer, norm or choice at a time.
//
// Encoder (encoder-decoder models), once:
//   Embed → Positional → per layer [SelfAttention, FeedForward] each with its norm → FinalNorm
//   (pre-LN) → Memory
// Decoder, per step t (step 0 feeds <s>; a decoder-only model's step 0 is the prefill of
// <s> + prompt):
//   Embed (embedding + PE of the fed tokens) → per layer [SelfAttention (reads and extends the
//   cache), CrossAttention (enc-dec), FeedForward] each with its norm → FinalNorm (pre-LN) →
//   Logits → Choose
// Norm placement (the one place it shows): post-LN puts an AddNorm stage after each sublayer
// (x = LN(x + Sublayer(x))); pre-LN puts a Norm stage before it, and the sublayer stage includes
// the residual add (x = x + Sublayer(LN(x))).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace sf {

enum class Side { Encoder, Decoder };

enum class StageKind {
  Embed,           // encoder: E[id] (·√d when the config scales); decoder: that + p_t of the fed tokens
  Positional,      // encoder only: + p_t
  Norm,            // pre-LN: LN of the stream before a sublayer
  SelfAttention,   // encoder self-attention / decoder masked self-attention
  CrossAttention,  // decoder queries over the encoder memory
  FeedForward,     // fc2(act(fc1(x)))
  AddNorm,         // post-LN: LN(x + sublayer output)
  FinalNorm,       // pre-LN: the LN closing a stack
  Memory,          // encoder output ready for cross-attention
  Logits,          // generator and softmax
  Choose,          // the next token is chosen (greedy / sample / beam / forced)
};

// The sublayer a stage belongs to (Norm and AddNorm name the block they wrap).
enum class Block { None, SelfAttention, CrossAttention, FeedForward };

const char* to_string(Side s);
const char* to_string(StageKind k);
const char* to_string(Block b);

// A tensor a stage read or wrote.
struct TensorRef {
  std::string label;           // what the screen calls it: "x", "Q", "K (cache)", "weights"
  std::string name;            // recording name ("encoder.layers.0.self_attn.weights",
                               // "steps.3.decoder.layers.1.self_attn.k"); "" if not recorded
  std::vector<int64_t> shape;  // actual shape, e.g. {2, 1, 4} for (h, n_q, n_k)
};

struct Stage {
  int index = 0;  // position in the session's stage list
  Side side = Side::Encoder;
  StageKind kind = StageKind::Embed;
  Block block = Block::None;
  int layer = -1;       // layer index; -1 outside the layer stack
  int step = -1;        // decoder step; -1 on the encoder side
  std::string title;    // "decoder layer 1 · masked self-attention (step 3)"
  std::string formula;  // what was applied, with actual shapes
  std::vector<TensorRef> reads;
  std::vector<TensorRef> writes;
  std::string note;  // e.g. "appends row 3 to layer 1's K/V cache (now 4 rows)"
};

// Stages of the encoder side (0 for decoder-only models) and of every decoder step.
int encoder_stage_count(const Config& c);
int decoder_stage_count(const Config& c);

// The structure alone, in order: what each stage is, without shapes or text.
struct StageKey {
  StageKind kind = StageKind::Embed;
  Block block = Block::None;
  int layer = -1;
};
std::vector<StageKey> encoder_layout(const Config& c);
std::vector<StageKey> decoder_layout(const Config& c);

// The sizes of one decoder step, for the shapes a stage shows.
struct StepDims {
  int step = 0;
  int fed = 1;        // m: tokens fed at this step
  int position0 = 0;  // absolute position of the first fed token
  int rows = 1;       // rows recorded: m with the cache, position0 + m without
  bool cached = true;
  int n_src = 0;  // source tokens (0 for decoder-only)
};

// Stage i of the encoder side (n_src source tokens) and stage j of a decoder step, with title,
// formula, reads and writes (recording names: "encoder.…" and "steps.{t}.…"). The Choose stage's
// formula names the strategy only; the session adds the token that was chosen.
Stage describe_encoder_stage(const Config& c, int i, int n_src);
Stage describe_decoder_stage(const Config& c, int j, const StepDims& dims);

}  // namespace sf
