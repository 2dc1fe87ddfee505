// inspect_panel.h — the "Inspect" panel (docs/inspect.md): why the model predicts what it does.
// Four tabs over one full recording of the explorer's input, every number from core/analysis:
//   Logit lens    rows = residual points, columns = positions, each cell the lens's top token
//   Attribution   direct logit attribution per head / attention bias / MLP (layer × part grid)
//   Heads         previous-token, duplicate-token, induction and first-token scores per head
//   Rollout       attention rollout through a stack
//   Ablation      heads and MLPs picked on a layer × head grid, removed; the output before and after
//   Patching      activation patching of a clean prompt into a corrupted one: the recovered grid
// The script commands that drive it (inspect_script.cpp) reach it through these methods.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "inspect_worker.h"
#include "ui.h"

namespace sf::gui {

enum class InspectTab { Lens = 0, Attribution = 1, Heads = 2, Rollout = 3, Ablation = 4, Patching = 5 };
constexpr int kInspectTabs = 6;
const char* to_string(InspectTab t);  // "lens", "attribution", "heads", "rollout", "ablation", "patching"

class InspectPanel : public Panel {
 public:
  InspectPanel();
  void Draw(Ctx& c) override;
  const Heatmap* main_heatmap() const override;

  // ---- used by the script commands
  // Posts a recording of the explorer's current input when it changed (and the head detectors
  // when the Heads tab wants them); true once everything posted has been published.
  void sync(const Snapshot& s);
  bool settled() const;
  std::shared_ptr<const InspectSnap> data() const;
  void select_tab(InspectTab t) {
    tab_ = t;
    tab_request_ = static_cast<int>(t);
  }
  // The model whose heads the detectors should score (the Heads tab asks for the explorer's).
  void want_heads(std::shared_ptr<const Model> m) { want_detect_ = std::move(m); }
  InspectTab tab() const { return tab_; }
  // The lens cell whose token is followed through the depth (−1: none).
  void pin_lens(int point, int position);
  void attribute(int position, int token, int other);
  void detect(int r, uint64_t seed);
  // The head whose attention on the probe is opened (stack 0 = the first the detection scored).
  void open_head(int stack, int layer, int head);
  void set_rollout(int stack, int layer);
  // Ablation: the heads and sublayers removed (empty: none) and how; re-runs the recorded input.
  void set_ablation(std::vector<AblationTarget> targets, EditMode mode);
  void toggle_ablation(const AblationTarget& t);
  const std::vector<AblationTarget>& ablation_targets() const { return abl_sel_; }
  // Patching: starts a job on the worker (progress and cancel through patch_progress_).
  void run_patch(const PatchRequest& req);
  void cancel_patch();
  bool patch_running() const;
  void open_patch_cell(int layer, int index);
  // The current tab's grid as CSV text; false (and `error`) when nothing is computed in it.
  bool csv(std::string& out, std::string& error) const;

 private:
  void ensure_worker();
  void export_csv(App& app) const;
  void draw_lens(Ctx& c, const InspectSnap& d);
  void draw_follow(Ctx& c, const InspectRun& r);
  void draw_attribution(Ctx& c, const InspectSnap& d);
  void draw_heads(Ctx& c, const InspectSnap& d);
  void draw_head_map(Ctx& c, const HeadDetection& det);
  void draw_rollout(Ctx& c, const InspectSnap& d);
  void draw_ablation(Ctx& c, const InspectSnap& d);
  void ablation_controls(const std::string& selected);  // zero / mean, Clear, what is removed
  void draw_ablation_grid(Ctx& c, const Config& cfg);   // layers × (heads, MLP), click to toggle
  void draw_patching(Ctx& c, const InspectSnap& d);
  void patch_form(Ctx& c, const Config& cfg, bool running);  // the prompts, tokens, what to patch; Run or Cancel
  void draw_patch_grid(Ctx& c, const InspectSnap& d, const Config& cfg);  // recovered per cell, the top lists
  void post_ablation();

  std::unique_ptr<InspectWorker> worker_;
  InspectInput posted_;
  std::shared_ptr<const Model> want_detect_;  // the model whose heads the Heads tab wants scored
  std::shared_ptr<const Model> detect_posted_;
  uint64_t last_ticket_ = 0;
  InspectTab tab_ = InspectTab::Lens;
  int tab_request_ = -1;  // a tab to select at the next draw (−1: none)

  int pin_point_ = -1, pin_pos_ = -1;
  std::vector<float> follow_prob_, follow_rank_;  // [point] of the followed token
  std::vector<std::string> follow_labels_;
  uint64_t follow_key_ = 0;
  int follow_token_ = -1;

  int attr_pos_ = -1;
  char attr_token_[128] = {0}, attr_other_[128] = {0};
  int detect_r_ = 20;
  int detect_seed_ = 1;
  int head_stack_ = -1, head_layer_ = 0, head_ = 0;
  int heads_pattern_ = static_cast<int>(HeadPattern::Induction);
  int roll_stack_ = 1, roll_layer_ = -1;  // −1: the last layer

  std::vector<AblationTarget> abl_sel_;
  int abl_mode_ = 0;  // 0 zero, 1 mean
  char patch_clean_[256] = {0}, patch_corrupt_[256] = {0}, patch_answer_[64] = {0}, patch_wrong_[64] = {0};
  int patch_what_ = 0;
  std::shared_ptr<PatchProgress> patch_progress_;
  uint64_t patch_ticket_ = 0;

  std::vector<std::string> cols_, rows_;  // scratch labels
  Heatmap lens_hm_, attr_hm_, roll_hm_, probe_hm_, cbar_, abl_hm_, patch_hm_;
  std::vector<Heatmap> heads_hm_;  // [stack · kHeadPatterns + pattern]
};

std::unique_ptr<Panel> make_inspect_panel();

// Script commands of the Inspect panel (docs/explorer.md). Returns −1 when `a[0]` is not one of
// them, else 1 (done) or 0 (error set); `until` is polled until the panel's worker has published.
int run_inspect_command(App& app, const std::vector<std::string>& a, std::string& error,
                        std::function<bool(std::string&)>& until);

}  // namespace sf::gui
