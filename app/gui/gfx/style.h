// style.h — fonts and colours. Text is rasterised at the size it is shown (the atlas is rebuilt
// when the UI scale changes), so it stays crisp at any scale; presentation mode enlarges every
// font and switches to a high-contrast light theme that survives a washed-out projector.
#pragma once

#include <string>

#include "imgui.h"

namespace sf::gui {

struct Fonts {
  ImFont* ui = nullptr;     // body text
  ImFont* bold = nullptr;   // headings, the current stage
  ImFont* mono = nullptr;   // numbers, formulas with values
  ImFont* small = nullptr;  // axis labels of dense maps
  ImFont* big = nullptr;    // stage title in the stepper
  bool from_files = false;  // false: DejaVu missing, ImGui's built-in font is used
  float size = 16;          // pixel size of `ui`
};

// Rebuilds the font atlas for `px` pixels (call between frames; the caller re-creates the GL
// font texture). Falls back to the built-in font if fonts-dejavu-core is not installed.
void build_fonts(Fonts& f, float px);

enum class Theme { Dark, Projector };
// Colours and sizes for `scale` (1 = 16 px text).
void apply_style(Theme theme, float scale);

// Palette used by panels for their own drawing (depends on the theme).
struct Palette {
  ImU32 text, text_dim, accent, accent2, stage_done, stage_now, stage_todo, box_border, warn, error, ok, chip, chip_unk,
      chip_special, highlight, grid;
};
const Palette& palette();

// Distinct colours for overlaid attention heads (up to 16, then they repeat).
ImU32 head_colour(int head, float alpha = 1.0f);

}  // namespace sf::gui
