// ui.cpp — the few lines every explorer panel starts with: the "nothing loaded" guard and the
// shared attention selection's header line.
#include "ui.h"

namespace sf::gui {

bool require_session(const Snapshot& s) {
  if (s.ok()) return true;
  ImGui::TextDisabled("No model or input loaded.");
  return false;
}

const AttnView* selected_attention(const Ctx& c) {
  ImGui::Text("%s · layer %d · head %d", to_string(c.ui.kind), c.ui.layer, c.ui.head);
  return c.snap.attn_view(c.ui.kind, c.ui.layer);
}

}  // namespace sf::gui
