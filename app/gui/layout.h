// layout.h — where the open panels go: side by side in regions of the work area, never on top of
// one another. The stepper runs across the top, "Model & input" and "Output" share a left column
// (presentation mode: the output sits at the right of the row below the stepper), and every other
// panel takes a column of the area that is left, in two rows when there are more than three.
#pragma once

#include <string>
#include <vector>

#include "imgui.h"

namespace sf::gui {

// The rectangles (x, y, w, h as fractions of the work area) of the panels `keys`, in that order.
// `keys` are panel keys ("stepper", "attention", …); the panels are placed in a fixed reading
// order unless `keep_order` is set, when the non-stepper panels go left to right as given (one
// row). No two rectangles overlap and together they cover the work area.
std::vector<ImVec4> tile_panels(const std::vector<std::string>& keys, bool presentation, bool keep_order = false);

}  // namespace sf::gui
