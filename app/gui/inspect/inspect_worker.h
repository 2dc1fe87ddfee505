// inspect_worker.h — the Inspect panel's own worker thread (docs/inspect.md): it runs the model
// on the explorer's input, recorded in full, and computes the logit lens, attention rollout, direct
// logit attribution and head detectors of core/analysis on it. The model is the explorer's
// (an immutable shared Model), so this thread never touches the explorer's Engine; the panel reads
// the immutable InspectSnap it publishes, as the other panels read the explorer's Snapshot.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/ablation.h"
#include "analysis/attribution.h"
#include "analysis/head_detector.h"
#include "analysis/logit_lens.h"
#include "analysis/patching.h"
#include "job_thread.h"
#include "snapshot.h"

namespace sf::gui {

// What the inspection tools read: the explorer's input with the decoder teacher-forced on the
// target if there is one, else on the tokens decoded so far.
struct InspectInput {
  std::shared_ptr<const Model> model;
  PreparedInput input;  // tgt_ids: the decoder's whole input (empty for encoder-only models)
  RunOptions run;
  bool same(const InspectInput& o) const {
    return model == o.model && input.src_ids == o.input.src_ids && input.tgt_ids == o.input.tgt_ids &&
           run.positional_encoding == o.run.positional_encoding && run.causal_mask == o.run.causal_mask;
  }
};
// A token typed by the user: the vocabulary entry, else a display form (e.g. '␣the'); −1 if none.
int find_token(const Vocab& v, const std::string& text);

// From the explorer's snapshot (null model when it has no session).
InspectInput inspect_input(const Snapshot& s);

// One full recording and what is read off it. Built in place (the lens points into the trace).
struct InspectRun {
  InspectInput in;
  Trace trace;
  bool on_decoder = true;                     // the lens reads the decoder (false: an encoder-only model)
  std::vector<int> ids;                       // (n) the ids of the stack the lens reads
  std::vector<std::string> tokens;            // (n) their display form
  const Vocab* out_vocab = nullptr;           // the vocabulary the lens predicts
  LogitLens lens;                             // [point] (n, V)
  std::vector<std::string> point_names;       // [point] "embedding", "L0 attn", …
  std::vector<std::vector<LensCell>> top;     // [point][position] the top 5
  std::string readout;                        // lens_readout_description
  std::vector<Mat> rollout_enc, rollout_dec;  // [layer] (n, n)
};

// A patching job's progress, shared by the panel (which reads it every frame and may set cancel)
// and the worker thread (which writes it after each patched run).
struct PatchProgress {
  std::atomic<int> done{0}, total{0};
  std::atomic<bool> cancel{false};
};

// What the Patching tab asks: the prompts and tokens as typed, and what to patch.
struct PatchRequest {
  std::shared_ptr<const Model> model;
  std::string clean, corrupt, answer, wrong;
  PatchWhat what = PatchWhat::Resid;
};

// A patching result with what the panel labels it with.
struct PatchView {
  PatchRequest request;
  PatchInputs inputs;
  PatchResult result;
  std::vector<std::string> col_labels;  // positions ("2 cat") or heads ("h3")
  std::vector<std::string> row_labels;  // "L0", …
  // The opened cell: its patched run's top 5 at the prediction position (−1: none opened).
  int cell_layer = -1, cell_index = -1;
  double cell_ld = 0;
  std::vector<TokenProb> cell_top, clean_top, corrupt_top;
};

struct InspectSnap {
  uint64_t generation = 0, ticket = 0, last_error_ticket = 0;
  std::vector<Message> log;
  std::shared_ptr<const InspectRun> run;
  std::shared_ptr<const Attribution> attribution;  // for the run above
  std::string attribution_error;
  std::shared_ptr<const HeadDetection> detection;
  std::shared_ptr<const Model> detection_model;  // the model the detection ran on
  std::string detection_error;
  std::shared_ptr<const AblationResult> ablation;  // for the run above (null: nothing ablated)
  std::shared_ptr<const InspectRun> ablation_run;  // the run it was computed on
  std::string ablation_error;
  std::shared_ptr<const PatchView> patch;
  std::string patch_error;
};

struct InspectEngine {
  uint64_t ticket = 0, last_error_ticket = 0, seq = 0;
  std::vector<Message> log;
  std::shared_ptr<const InspectRun> run;
  std::shared_ptr<const Attribution> attribution;
  std::string attribution_error;
  std::shared_ptr<const HeadDetection> detection;
  std::shared_ptr<const Model> detection_model;
  std::string detection_error;
  std::shared_ptr<const AblationResult> ablation;
  std::shared_ptr<const InspectRun> ablation_run;
  std::string ablation_error;
  std::shared_ptr<const PatchView> patch;
  std::string patch_error;

  void error(const std::string& m);
  // Records the input in full and reads the lens and rollout off it; attributes the last
  // position's top token.
  void record(const InspectInput& in);
  // Direct logit attribution of `token` (minus `other` when ≥ 0) at `position` of the run.
  void attribute(int position, int token, int other);
  // The head detectors on r random tokens repeated (seeded).
  void detect(std::shared_ptr<const Model> m, int r, uint64_t seed);
  // The recorded run again with these heads or sublayers ablated (none: the result is cleared).
  void ablate(const std::vector<AblationTarget>& targets, EditMode mode);
  // Activation patching, one patched run per cell; progress written to `progress` as it goes, a
  // set cancel flag stops it between runs.
  void run_patching(const PatchRequest& req, std::shared_ptr<PatchProgress> progress);
  // The patched run of one cell of the last patching result, its output read off.
  void open_patch_cell(int layer, int index);
};

class InspectWorker : public JobThread<InspectEngine, InspectSnap> {
 public:
  explicit InspectWorker(std::function<void()> wake = {});
};

}  // namespace sf::gui
