// ui.cpp — the few lines every explorer panel starts with: the guard that says what is missing
// (no model or input, no decoder) and the shared attention selection's header line.
#include "ui.h"

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
  ImGui::Text("%s · layer %d · head %d", to_string(c.ui.kind), c.ui.layer, c.ui.head);
  return c.snap.attn_view(c.ui.kind, c.ui.layer);
}

}  // namespace sf::gui
