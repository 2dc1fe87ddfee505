// ablation.h — what a model does without some of its heads or MLPs: the run again with them
// zero- or mean-ablated (model/intervention.h), and how the output distribution moved.
//
// The stack ablated is the one the model predicts from: the decoder (decoder-only and
// encoder-decoder models; an encoder-decoder's decoder self-attention, cross-attention and MLPs),
// or the encoder of an encoder-only model (BERT). The comparison is read at one position: the
// last one for a decoder (the next-token distribution), the first [MASK] of an encoder-only
// model's input (else its last position).
//
//   KL(clean ‖ ablated) = Σ_v p_clean(v) (log p_clean(v) − log p_ablated(v))      (nats)
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "model/intervention.h"
#include "model/model.h"
#include "model/trace.h"
#include "stepper/run.h"

namespace sf {

// One thing to ablate: a head (head ≥ 0) of an attention sublayer, or a whole sublayer (head −1:
// an attention sublayer's output, or the MLP).
struct AblationTarget {
  SiteKind kind = SiteKind::SelfAttention;  // SelfAttention, CrossAttention or Mlp
  int layer = 0;
  int head = -1;
  bool operator==(const AblationTarget& o) const { return kind == o.kind && layer == o.layer && head == o.head; }
};

// "L.H" (head H of layer L's self-attention), "L.xH" (head H of its cross-attention), "L.attn",
// "L.cross", "L.mlp" (whole sublayers); comma-separated.
std::string target_label(const AblationTarget& t);
// Parses a comma-separated list and checks it against the model: layers and heads in range, cross-
// attention only where there is one, no MLP where the configuration has none.
Result<std::vector<AblationTarget>> parse_ablation(const Model& m, const std::string& spec);
Result<bool> check_target(const Model& m, const AblationTarget& t);
Result<EditMode> parse_ablation_mode(const std::string& s);  // "zero" or "mean"

// The stack ablation and patching act on (see above).
Stack predicting_stack(const Config& c);
// The position the comparison reads (see above), for an input prepared by prepare_input.
int prediction_position(const Model& m, const PreparedInput& in);
// The logits (n, V) of the predicting stack in a full recording.
const Mat& stack_logits(const Model& m, const Trace& t);

// The intervention that ablates the targets (mode Zero or Mean).
std::shared_ptr<Intervention> ablation(const Model& m, const std::vector<AblationTarget>& targets, EditMode mode);

struct TokenProb {
  int id = 0;
  float prob = 0;
};

struct AblationResult {
  std::vector<AblationTarget> targets;
  EditMode mode = EditMode::Zero;
  int position = 0;                               // the row compared
  Trace clean, ablated;                           // full recordings of both runs
  std::vector<float> clean_probs, ablated_probs;  // (V) at `position`
  double kl = 0;                                  // KL(clean ‖ ablated), nats
  int clean_top = 0, ablated_top = 0;
  bool top_changed() const { return clean_top != ablated_top; }
  std::vector<TokenProb> clean_top_k, ablated_top_k;  // best first
};

// Runs the input clean and ablated (every target checked first) and compares them.
Result<AblationResult> run_ablation(const Model& m, const PreparedInput& in, const std::vector<AblationTarget>& targets,
                                    EditMode mode, const RunOptions& base = {}, int top_k = 5);

// KL(p ‖ q) in nats of two rows of probabilities, from their log-probabilities.
double kl_divergence(const Mat& log_p, const Mat& log_q, int row);

}  // namespace sf
