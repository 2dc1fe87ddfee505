// panels.h — internal: the three pre-LN vs post-LN panels and what they share.
#pragma once

#include <memory>

#include "compare/hub.h"
#include "compare/prepost.h"

namespace sf::gui {

std::unique_ptr<Panel> make_compare_panel(std::shared_ptr<PrePostHub> hub);
std::unique_ptr<Panel> make_training_panel(std::shared_ptr<PrePostHub> hub);
std::unique_ptr<Panel> make_gradnorms_panel(std::shared_ptr<PrePostHub> hub);

// Set by the compare panel each frame it is drawn with the keyboard focus.
void set_compare_focus(bool focused);

// A coloured "pre-LN" / "post-LN" tag.
void placement_badge(NormPlacement n);

}  // namespace sf::gui
