// compare.h — two runs side by side on the same input, stepped in lockstep: a pre-LN and a
// post-LN model of one task, any two models, or one model's weights with the LayerNorm placement
// switched (Xiong et al. 2020).
//
// Lockstep. The two stage lists differ (pre-LN has a Norm stage before each sublayer and a final
// norm; post-LN an AddNorm after each sublayer), so stages are aligned by a key, not by index:
//
//   (side, step, section, layer, block, phase)
//   section: embed · positional · the layer stack · final norm · memory/logits · choose
//   block:   self-attention · cross-attention · feed-forward
//   phase:   before the sublayer (pre-LN Norm) · the sublayer · after it (post-LN AddNorm)
//
// The keys of one run increase strictly along its stage list. The comparison holds one key, the
// current point of the merged timeline (the union of both runs' keys); each run sits on its last
// stage whose key is ≤ that point. So a pre-LN Norm stage of block b faces the post-LN AddNorm of
// the block before (both show the stream entering block b), the sublayers face each other, a
// post-LN AddNorm faces the pre-LN sublayer (whose stage includes the residual add), and pre-LN's
// FinalNorm faces the other run's last stage before it. Decoder steps stay aligned token by token:
// both runs are always on the same step, except that a run which has finished decoding stays on
// its last stage while the other goes on.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stepper/session.h"

namespace sf {

struct AlignKey {
  int side = 0;     // 0 encoder, 1 decoder
  int step = -1;    // decoder step; -1 on the encoder side
  int section = 0;  // 0 embed, 1 positional, 2 layer stack, 3 final norm, 4 memory / logits, 5 choose
  int layer = 0;
  int block = 0;  // 0 self-attention, 1 cross-attention, 2 feed-forward
  int phase = 0;  // 0 before (pre-LN Norm), 1 sublayer, 2 after (post-LN AddNorm)

  bool operator<(const AlignKey& o) const;
  bool operator==(const AlignKey& o) const;
  bool operator<=(const AlignKey& o) const { return !(o < *this); }
  bool operator>(const AlignKey& o) const { return o < *this; }
};

AlignKey align_key(Side side, int step, const StageKey& k);
// The key of stage `index` of a session (computed from the layouts, no description built).
AlignKey align_key(const Session& s, int index);
// "decoder step 2 · layer 1 · self-attention (after)", for status lines and logs.
std::string describe(const AlignKey& k);

// The same weights with the LayerNorm placement switched. Switching to pre-LN adds the final
// norms the placement needs (gain 1, bias 0 — the usual initialisation; they still normalise, so
// they are not an identity); switching to post-LN drops them. This is an experiment, not an
// equivalent model: every sublayer now reads differently scaled inputs than the ones its weights
// were trained on, so the outputs change — which is the point of looking.
Model with_norm_placement(const Model& m, NormPlacement p);

// One head's attention weights in two runs, A − B: over the query rows and keys both maps have (a
// run that decoded fewer tokens has fewer), with the largest |A − B|.
struct WeightDifference {
  Mat diff;           // (min rows, min cols) A − B
  float max_abs = 0;  // max |A − B|; 0 when there is no common cell
  bool cut = false;   // the shapes differ: only the common rows and keys are compared
};
WeightDifference weight_difference(const Mat& a, const Mat& b);

class Comparison {
 public:
  // Both runs get the same source/target text and decoding settings. Either may refuse the input
  // (unknown words are only warnings; an empty or too long input is an error naming the run).
  static Result<Comparison> create(std::shared_ptr<const Model> a, std::shared_ptr<const Model> b,
                                   const std::string& src, const std::string& tgt = "",
                                   const DecodeSettings& settings = {}, bool use_cache = true);

  // ---- movement in lockstep: true when the point moved; false sets message()
  bool forward();  // the next point of the merged timeline (computes steps as needed)
  bool back();
  bool next_token();        // both runs to the Choose stage of the next step
  bool prev_token();        // both runs to the Choose stage of the previous step
  void run_to_end();        // decode both to the end; both on their last stage
  void home();              // both on their first stage
  bool jump(int position);  // a point of timeline() (known points only)
  Result<bool> set_input(const std::string& src, const std::string& tgt = "");
  Result<bool> set_settings(const DecodeSettings& s);

  // ---- reading
  const Session& run(int i) const { return runs_[static_cast<size_t>(i)]; }  // 0 = A, 1 = B
  const AlignKey& key() const { return key_; }
  // The merged timeline of the stages known so far, and the index of the current point in it.
  std::vector<AlignKey> timeline() const;
  int position() const;
  bool finished() const { return runs_[0].finished() && runs_[1].finished(); }
  bool at_end() const;
  const std::string& message() const { return message_; }
  const std::string& src_text() const { return src_; }
  const std::string& tgt_text() const { return tgt_; }
  std::vector<std::string> warnings() const;  // both runs' input warnings, prefixed "A: " / "B: "

  // The index in run i of its last stage with a key ≤ k (−1 if none).
  int last_at_or_before(int i, const AlignKey& k) const;

 private:
  Comparison() = default;
  void align();                         // each run onto its last stage with key ≤ key_
  bool move_to(const AlignKey& k);      // key_ = k, aligned, no message; true
  bool refuse(std::string why);         // the message says why the move did not happen; false
  bool ensure_stage(int i, int index);  // computes run i's steps until `index` exists

  std::vector<Session> runs_;  // (2)
  AlignKey key_;
  std::string src_, tgt_;
  std::string message_;
};

}  // namespace sf
