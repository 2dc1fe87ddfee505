// patching.h — activation patching: which activations carry the information that makes a model
// prefer the answer to a wrong token. Two prompts of the same token length, a clean one and a
// corrupted one; the corrupted run again with one activation of the clean run put in its place:
//
//   ld(run) = logit(answer) − logit(wrong) at the prediction position      (analysis/ablation.h)
//   recovered = (ld(patched) − ld(corrupted)) / (ld(clean) − ld(corrupted))  0 = corrupted, 1 = clean
//
// What is patched (in the stack the model predicts from, analysis/ablation.h):
//   Resid   the residual stream entering layer l at position p (layer 0: the embedding)
//   Attn    the self-attention sublayer's output of layer l at position p (after W_o)
//   Cross   the cross-attention sublayer's output (encoder-decoder models)
//   Mlp     the MLP's output of layer l at position p
//   Heads   head h of layer l's self-attention, at every position (its slice of the head outputs,
//           before W_o)
//   CrossHeads  the same for cross-attention heads
// An encoder-decoder's prompts are its sources (the same decoder input for both); the patched
// activations are the decoder's.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "analysis/ablation.h"

namespace sf {

enum class PatchWhat { Resid, Attn, Cross, Mlp, Heads, CrossHeads };
const char* to_string(PatchWhat w);
Result<PatchWhat> parse_patch_what(const std::string& s);
bool per_head(PatchWhat w);

// A token given as text (--answer, --wrong): a vocabulary entry as written, or a text that the
// tokenizer reads as exactly one token (GPT-2's " Paris" is the entry "ĠParis"). `what` names the
// option in the message.
Result<int> token_from_text(const Vocab& v, const std::string& what, const std::string& text);
// The vocabulary a model predicts: the decoder's, or an encoder-only model's.
const Vocab& output_vocab(const Config& c);

struct PatchInputs {
  PreparedInput clean, corrupt;
  int answer = 0, wrong = 0;
};
// Checks the inputs against the model and each other: the same token length (and the same decoder
// input for an encoder-decoder), answer and wrong token ids inside the vocabulary and different,
// the kind of activation present in this model.
Result<bool> check_patch(const Model& m, const PatchInputs& p, PatchWhat what);

// The intervention that patches the clean recording's activation at (layer, index) into a run:
// index = position, or head for the per-head kinds.
std::shared_ptr<Intervention> patch_intervention(const Model& m, const Trace& clean, PatchWhat what, int layer,
                                                 int index);
// The logit difference logit(answer) − logit(wrong) of a recording at the prediction position.
double logit_difference(const Model& m, const Trace& t, int position, int answer, int wrong);

struct PatchResult {
  PatchWhat what = PatchWhat::Resid;
  int position = 0;                            // the prediction position
  double clean_ld = 0, corrupt_ld = 0;         // the logit differences of the two runs
  std::vector<std::vector<double>> recovered;  // [layer][position or head]
  int rows() const { return static_cast<int>(recovered.size()); }
  int cols() const { return recovered.empty() ? 0 : static_cast<int>(recovered.front().size()); }
  bool cancelled = false;  // stopped early: the cells not reached are NaN
};

// Runs the clean and corrupted prompts, then one patched run per cell. progress(done, total) is
// called after each run; a set cancel flag stops between runs (the result says cancelled).
Result<PatchResult> activation_patching(const Model& m, const PatchInputs& p, PatchWhat what,
                                        const std::function<void(int, int)>& progress = {},
                                        const std::atomic<bool>* cancel = nullptr);

// The full recording of one cell's patched run (the explorer opens it on a click).
Result<Trace> patched_run(const Model& m, const PatchInputs& p, PatchWhat what, int layer, int index);

}  // namespace sf
