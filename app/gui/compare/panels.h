// panels.h — internal: the three pre-LN vs post-LN panels and what they share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compare/hub.h"
#include "ui.h"

namespace sf::gui {

// A pre-LN vs post-LN panel: full-window, drawn from the shared hub (runs, training, gradnorms).
class HubPanel : public Panel {
 public:
  HubPanel(const char* title, const char* key, std::shared_ptr<PrePostHub> hub)
      : Panel({title, key, ImVec4(0.0f, 0.0f, 1.0f, 1.0f), false, Needs::Nothing}), hub_(std::move(hub)) {}
  // Takes the hub's newest results, then draws the view.
  void Draw(Ctx& c) final {
    hub_->poll();
    draw_view(c);
  }

 protected:
  virtual void draw_view(Ctx& c) = 0;
  std::shared_ptr<PrePostHub> hub_;
};

std::unique_ptr<Panel> make_compare_panel(std::shared_ptr<PrePostHub> hub);
std::unique_ptr<Panel> make_training_panel(std::shared_ptr<PrePostHub> hub);
std::unique_ptr<Panel> make_gradnorms_panel(std::shared_ptr<PrePostHub> hub);

// A coloured "pre-LN" / "post-LN" tag.
void placement_badge(NormPlacement n);

// "encoder self-attention", "decoder self-attention", "cross-attention".
const char* compare_kind_label(AttnKind k);

// What the compare panel keeps between frames for its statistics (compare_stats.cpp).
struct CompareStatsView {
  PlotView plots[3];          // residual norm, LN variance, LN mean
  Heatmap ent_heat[2];        // entropy grid of A and B
  std::vector<float> ent[2];  // (layers, heads) row-major
  std::vector<std::string> ent_rows[2], head_labels;
};
// Both runs' next-token distributions: the union of their 6 most likely tokens as paired bars.
void draw_compare_distributions(Ctx& c, const CompareSnap& s);
// Per-layer plots (residual norm, LN variance, LN mean) and the entropy grids of `sel`'s kind.
void draw_compare_layer_stats(Ctx& c, const CompareSnap& s, const CompareSelection& sel, CompareStatsView& view);

}  // namespace sf::gui
