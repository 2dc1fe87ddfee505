// ui.cpp — the few lines every explorer panel starts with: the guard that says what is missing
// (no model or input, no decoder) and the shared attention selection's header line.
#include "ui.h"

#include <algorithm>

namespace sf::gui {

bool Panel::ready(const Snapshot& s) const {
  if (info_.needs == Needs::Nothing) return true;
  if (!s.ok()) {
    ImGui::TextDisabled("No model or input loaded.");
    return false;
  }
  if (info_.needs == Needs::Decoder && !s.model->config.has_decoder()) {
    ImGui::TextWrapped(
        "%s is an encoder-only model: it has no decoder, so there is nothing for the %s panel "
        "to show. Its encoder is in the Attention, Q/K/V, Positional encoding, Masks and Residual panels; "
        "the Output panel shows its masked-token predictions.",
        s.model_name.c_str(), info_.title);
    return false;
  }
  return true;
}

bool Panel::export_heatmap(const std::string& path, std::string& error) const {
  const Heatmap* h = main_heatmap();
  if (!h) return error = std::string("the ") + title() + " panel has no heatmap to export", false;
  if (h->empty()) return error = std::string(title()) + ": the heatmap is empty (nothing computed yet)", false;
  return h->write_png(path, error);
}

const AttnView* selected_attention(const Ctx& c) {
  UiState& ui = c.ui;
  const float fs = ImGui::GetFontSize();
  if (!c.snap.model) {
    ImGui::Text("%s · layer %d · head %d", to_string(ui.kind), ui.layer, ui.head);
    return nullptr;
  }
  // The same selection the Attention panel edits, editable here too, so a panel opened on its own
  // (a lecture layout) can choose its sublayer.
  const Config& m = c.snap.model->config;
  ImGui::PushID("attention selection");
  ImGui::SetNextItemWidth(fs * 13);
  if (ImGui::BeginCombo("##kind", to_string(ui.kind))) {
    for (AttnKind k : attention_kinds(m))
      if (ImGui::Selectable(to_string(k), k == ui.kind)) ui.kind = k, ui.follow_stage = false;
    ImGui::EndCombo();
  }
  const int layers = std::max(1, kind_layers(m, ui.kind)), heads = std::max(1, kind_heads(m, ui.kind));
  ui.layer = std::clamp(ui.layer, 0, layers - 1);
  ui.head = std::clamp(ui.head, 0, heads - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 5);
  if (ImGui::SliderInt("layer", &ui.layer, 0, layers - 1)) ui.follow_stage = false;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 5);
  ImGui::SliderInt("head", &ui.head, 0, heads - 1);
  ImGui::PopID();
  return c.snap.attn_view(ui.kind, ui.layer);
}

}  // namespace sf::gui
