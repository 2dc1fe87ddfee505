// snapshot.h — what the panels draw: an immutable picture of the worker's state, published after
// every operation as std::shared_ptr<const Snapshot>. The UI thread never mutates it and never
// runs the model; everything here is read out of the recording (the Session and its traces).
//
// Views are assembled "as of the stepper's cursor": the decoder rows of the steps decoded so far
// (following the focused hypothesis back through its beam ancestors), and the current step's row
// only once the cursor has passed that layer's stage.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/head_maps.h"
#include "analysis/layer_stats.h"
#include "stepper/attention_view.h"
#include "stepper/session.h"
#include "train/batch.h"

namespace sf::gui {

enum class AttnKind { EncoderSelf = 0, DecoderSelf = 1, Cross = 2 };
constexpr int kAttnKinds = 3;
const char* to_string(AttnKind k);
const char* short_name(AttnKind k);
// How a token is written on screen (heatmap axes, chips, lists): the vocabulary's readable form
// (GPT-2's byte alphabet decoded) with whitespace made visible, so word boundaries show: a
// word-initial GPT-2 piece starts with '␣', a SentencePiece one with '▁', a WordPiece
// continuation with '##'; a newline is '↵', a tab '⇥'.
std::string display_token(const Vocab& v, int id);
// The same for a sequence, where byte tokens that only together form characters are shown as those
// characters with their own bytes (text/token_display.h: Llama's <0xE4> <0xB8> <0xAD> -> "中·E4",
// "中·B8", "中·AD").
std::vector<std::string> display_tokens_visible(const Vocab& v, const std::vector<int>& ids);

// The attention kinds a model has (encoder self, decoder self, cross), in that order.
std::vector<AttnKind> attention_kinds(const Config& c);
bool has_kind(const Config& c, AttnKind k);
int kind_layers(const Config& c, AttnKind k);  // layers of that kind
int kind_heads(const Config& c, AttnKind k);   // heads of that kind (Marian's stacks may differ)
int kind_d_k(const Config& c, AttnKind k);     // d_k of those heads (the √d_k the scores divide by)

// What an attention view's rows determine: Q, K, V, the outputs and the mask of the rows decoded
// so far (heads' maps and thumbnails computed when first asked for, analysis/head_maps.h), and the
// tokens as shown. Immutable once built, so consecutive snapshots share it while the rows stay the
// same (moving the cursor rebuilds only the views whose rows changed).
struct AttnData {
  AttnData(StackedAttention st, int thumbnail_side) : maps(std::move(st), thumbnail_side) {}
  HeadMaps maps;
  std::vector<std::string> q_labels;  // (n_q) token of each query row
  std::vector<std::string> k_labels;  // (n_k)
  // What the rows came from (build_views compares it): the recordings, held so that an address is
  // never reused while the view lives, and each row's (recording, row).
  std::shared_ptr<const void> source;
  std::vector<std::shared_ptr<const DecoderTrace>> traces;
  std::vector<std::pair<const void*, int>> rows;
};

// One attention sublayer (all heads) as the panels show it: an AttentionTrace with B = 1 whose rows
// are the queries decoded so far. Cells whose key did not exist yet when the query ran (a cached
// decoding step never scores future keys) hold mask −inf, weight 0 and raw/scaled score NaN
// ("not computed").
struct AttnView {
  AttnKind kind = AttnKind::EncoderSelf;
  int layer = 0;
  std::shared_ptr<const AttnData> data;
  // Q, K, V, the outputs and the mask; raw scores and weights only in the encoder's recording
  // (head() gives any head's).
  const AttentionTrace& trace() const { return data->maps.trace(); }
  const std::vector<RowRun>& runs() const { return data->maps.stacked().runs; }
  // Head h's raw scores and weights (computed on first use from Q, K and the mask as the forward
  // computed them, then kept with the view; 0 ≤ h < trace().n_heads). Safe from any thread; the
  // references stay valid while the view lives.
  HeadMap head(int h) const { return data->maps.head(h); }
  // Head h's thumbnail for the model view: null until computed (Worker::want_thumbnails).
  const HeadThumbnail* thumb(int h) const { return data->maps.thumbnail(h); }
  const std::vector<std::string>& q_labels() const { return data->q_labels; }
  const std::vector<std::string>& k_labels() const { return data->k_labels; }
  // (n_k) token id of each key (what the padding mask tests)
  const std::vector<int>& k_ids() const { return data->maps.stacked().k_ids; }
  // (n_q) decoder step that computed each row; -1 on the encoder
  const std::vector<int>& q_step() const { return data->maps.stacked().q_step; }
  int new_row0 = -1, new_rows = 0;  // rows computed at the current step (highlighted)
  bool live = false;                // written at the current stage
  int stage = -1;                   // stage index where the newest rows were computed
};
constexpr int kThumbnailSide = 96;

// Residual stream and LayerNorm statistics per token, one entry per sublayer connection. The
// numbers are core's (analysis/layer_stats.h), so the explorer, the compare view and the CLI show
// one definition.
struct BlockStats {
  std::string label;  // "enc 0 · attn", "dec 1 · ffn"
  bool encoder = true;
  int layer = 0;
  std::vector<std::string> tokens;  // (n)
  BlockStat stat;                   // (n) ‖x‖ in/out, LN μ and σ² per token (no entropy)
};

// Source order demonstration (positional-encoding panel; core's analysis/word_order.h): the
// encoder run on the source and on its reverse, with and without PE. Without PE, a token's output
// does not depend on where it is.
struct OrderDemo {
  std::vector<std::string> tokens, reversed;
  float max_diff_pe = 0;                             // max |memory(x)[i] − memory(rev x)[n−1−i]| with PE
  float max_diff_no_pe = 0;                          // the same without PE (0 up to rounding)
  std::vector<float> per_token_pe, per_token_no_pe;  // (n) the max per token
  std::string next_pe, next_rev_pe, next_no_pe, next_rev_no_pe;  // greedy first output token
};

// Teacher-forced run with and without the causal mask (masks panel; core's analysis/causal_leak.h).
struct LeakDemo {
  std::vector<std::string> tokens;  // decoder input
  AttentionTrace causal, leaky;     // decoder layer 0 self-attention, all heads
  int layer = 0;
  std::vector<float> future_mass;  // (n) weight row i puts on keys j > i without the mask
  float max_logit_diff = 0;        // how much the predictions change
};

// Several example inputs of different lengths padded together (Masks panel, batch view): the
// padded token rows and the masks the forward builds for each sequence (core's batch_masks).
struct BatchDemo {
  std::vector<std::vector<std::string>> src, tgt;  // [b] (n) / (m) tokens as shown, <pad> included
  bool has_target = false;                         // the decoder side is known (task examples, decoder-only)
  BatchMasks masks;
  std::string note;  // why there is no batch (empty when there is one)
};

struct Message {
  enum Level { Info, Warning, Error } level = Info;
  std::string text;
  uint64_t ticket = 0;  // the command that produced it
  uint64_t seq = 0;     // increases by one per message
};

struct Snapshot {
  uint64_t generation = 0;  // increases with every publication
  uint64_t ticket = 0;      // the last command processed

  std::shared_ptr<const Model> model;  // null: no model loaded (see `status`)
  std::string model_path;
  std::string model_name;  // file name shown in the UI
  int64_t n_params = 0;

  std::string src_text, tgt_text;          // as last set
  std::shared_ptr<const Session> session;  // null without a valid input
  std::string input_error;                 // why the input was refused (the previous session stays)

  std::vector<Stage> stages;  // known stages (encoder + computed steps)
  Stage stage;                // the current one
  int cursor = 0;

  std::vector<std::shared_ptr<const AttnView>> attn[kAttnKinds];  // [kind][layer]; null: not computed yet
  std::vector<BlockStats> blocks;                                 // residual / LN per block, as of the cursor
  KvCacheView kv;                                                 // as of the cursor
  CostReport cost;
  // Encoder-only models with an MLM head: the top 10 at every [MASK] (computed with the encoder;
  // the Output panel shows them once the cursor is on the head's stage).
  std::vector<MaskedPrediction> masked;

  std::shared_ptr<const OrderDemo> order_demo;
  std::shared_ptr<const LeakDemo> leak_demo;
  std::shared_ptr<const BatchDemo> batch_demo;

  std::vector<Message> log;        // most recent last (bounded)
  uint64_t last_error_ticket = 0;  // the last operation that failed
  bool ok() const { return model && session; }
  const AttnView* attn_view(AttnKind k, int layer) const {
    const auto& v = attn[static_cast<int>(k)];
    return layer >= 0 && layer < static_cast<int>(v.size()) ? v[static_cast<size_t>(layer)].get() : nullptr;
  }
};

// Fills the cursor-dependent views of `s` from s.session. The attention views whose rows are those
// of a view of `prev` (the snapshot published before) share its data, maps and thumbnails.
void build_views(Snapshot& s, const Snapshot* prev = nullptr);

// Builds the demos out of core's (analysis/word_order.h, analysis/causal_leak.h), with the tokens
// as shown; run on the worker: they run the model.
std::shared_ptr<const OrderDemo> make_order_demo(const Model& m, const PreparedInput& in);
std::shared_ptr<const LeakDemo> make_leak_demo(const Model& m, const PreparedInput& in,
                                               const std::vector<int>& tgt_ids);

}  // namespace sf::gui
