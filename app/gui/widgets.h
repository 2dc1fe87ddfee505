// widgets.h — drawing helpers shared by the panels: the labelled heatmap, colour bars, token
// chips, rotated text, number formatting.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/shape.h"  // shape_str
#include "gfx/heatmap.h"
#include "gfx/style.h"
#include "imgui.h"

namespace sf::gui {

// [SECTION] numbers
std::string fmt_value(float v, int decimals = 3);  // "−∞" for −inf, "—" for NaN (not computed)
std::string fmt_bytes(int64_t b);                  // "1.5 KiB"
std::string fmt_count(int64_t n);                  // "1 234 567"
std::string fmt_flops(int64_t n);                  // "3.2 MFLOP"

// "0", "1", … "n−1" (each after `prefix`): axis labels of dimensions and positions.
std::vector<std::string> numbered(int n, const char* prefix = "");

// [SECTION] text
// Text rotated by `angle` radians around `pivot` (the start of its baseline box's top-left).
void text_rotated(ImDrawList* dl, ImFont* font, float size, ImVec2 pivot, ImU32 col, const char* text, float angle);
void help_marker(const char* text);
void heading(const Fonts& f, const char* text);
// Text wrapped at the window edge in the given colour.
void text_coloured_wrapped(ImU32 col, const char* text);
// The labels drawn into the draw list (heatmap row and column labels, diagram boxes) while
// recording is on: the explorer records them for a frame that is captured, and the screenshot's
// JSON lists them per panel for the GUI tests.
struct DrawnLabels {
  bool on = false;
  std::vector<std::string> text;
  void note(const std::string& s) {
    if (on) text.push_back(s);
  }
};
DrawnLabels& drawn_labels();
// Named rectangles (screen pixels, x0 y0 x1 y1) of the frame being drawn: text lines whose width
// matters, buttons, plots, tooltips. The explorer collects them per panel every frame; the
// screenshot's JSON lists them, and the scripts' `hover` and `click` find them by name. Each box
// also keeps the right edge of the region it is drawn in (`edges`: the visible width of its window
// or child window), so that a test sees a box cut by a column or a scrollbar, not only by the panel.
struct DrawnBoxes {
  std::vector<std::pair<std::string, ImVec4>> list;
  std::vector<float> edges;
  void add(const std::string& name, ImVec2 a, ImVec2 b);
};
DrawnBoxes& drawn_boxes();
// Adds the last ImGui item's rectangle under `name`.
void note_item(const std::string& name);
// Text wrapped at the window edge between words only (ImGui's own wrapping also breaks after
// "." or ",", which splits numbers such as 1.00 across lines); a word wider than the window is
// written on a line of its own. "\n" starts a new line; a no-break space (U+00A0, as between a
// number and its unit) joins two words. Returns the text as drawn, with its line breaks.
std::string text_wrapped_words(const std::string& text);
// Before an item `width` pixels wide that would follow the last one: on the same line when it fits
// before the window's right edge, else on the next line (rows of controls flow in narrow panels).
void same_line_if_fits(float width);
// A choice among `n` tabs that never shortens a title: an ImGui tab bar when every title and the
// `trailing` button fit the panel's width, else a row of buttons that wraps, the chosen one
// highlighted. `current` is the chosen tab; with `select` set it is shown chosen even in a tab bar
// (a tab asked for by a script or a menu). `trailing` (may be null) is a button after the tabs
// with the tooltip `tip`; returns true when it is pressed.
bool titled_tabs(const char* id, const char* const* titles, int n, int& current, bool select, const char* trailing,
                 const char* tip);
// The width of a labelled widget whose frame is `frame` pixels wide (frame, spacing, label).
float labelled_width(float frame, const char* label);
// A two-column key/value table whose key column is as wide as `widest_key` (so no key is cut)
// and whose value column takes the rest. Pair with ImGui::EndTable() when it returns true.
bool begin_key_table(const char* id, const char* widest_key);
// One row of a two-column key/value table (inside ImGui::BeginTable): the key dimmed.
void table_row(const char* key, const std::string& value);
// A result the worker is still computing (the PE order demo, the leak demo): when `result` is
// null, says `what` is running and returns true.
bool still_running(const void* result, const char* what);

// [SECTION] heatmap widget
struct HeatmapOpts {
  const std::vector<std::string>* row_labels = nullptr;
  const std::vector<std::string>* col_labels = nullptr;
  const char* row_title = nullptr;  // e.g. "query"
  const char* col_title = nullptr;  // e.g. "key"
  ImVec2 max_size = ImVec2(0, 0);   // 0: the available region
  bool own_height = false;          // max_size.y holds even past the visible region (the window scrolls)
  float max_cell = 56.0f;           // px (scaled by the UI scale)
  float min_cell = 1.0f;
  float max_cell_h = 0;  // px, cap on the cell height when not square (0: max_cell)
  bool square = true;
  bool show_values = false;  // numbers in cells when they fit
  int decimals = 2;
  const char* inf_text = nullptr;   // text for −inf cells (default "−∞"; weight maps say "0")
  int new_row0 = -1, new_rows = 0;  // rows outlined as "new at this step"
  int new_col0 = -1, new_cols = 0;
  int sel_row = -1, sel_col = -1;  // the explained cell (outlined)
  const Fonts* fonts = nullptr;
};

struct HeatmapHit {
  bool hovered = false;
  int row = -1, col = -1;
  bool clicked = false;
  ImVec2 min, max;  // image rectangle on screen
};

// Right-clicking the map offers "Export heatmap as PNG" (to path_for("heatmap-" + id)); the
// result is reported through `notify`. The app installs both once (set_heatmap_export); without
// them there is no menu.
HeatmapHit heatmap_widget(const char* id, const Heatmap& hm, const HeatmapOpts& o);
struct HeatmapExport {
  std::function<std::string(const std::string& stem)> path_for;
  std::function<void(bool ok, const std::string& text)> notify;
};
void set_heatmap_export(HeatmapExport e);

// A horizontal colour bar from lo to hi with its end values written under it.
void colour_bar(Heatmap& bar, Colormap map, float lo, float hi, float width, const char* label = nullptr);

// [SECTION] token chips
enum class ChipKind { Normal, Special, Unknown, Chosen };
// A token as a rounded chip: the token text with its id small under it. Returns true if clicked.
bool token_chip(const Fonts& f, const std::string& text, int id, ChipKind kind, bool highlighted = false);

// [SECTION] small plots
// A line plot of several series over x = 0..n−1 with labels under the axis; the legend above the
// axes; hovering names the x as "<x_name> i 'label'". Its rectangle is the box "plot ID", the
// hover's first line the box "tooltip TEXT" (DrawnBoxes).
struct Series {
  const std::vector<float>* y;
  ImU32 colour;
  const char* name;
};
void line_plot(const char* id, const std::vector<Series>& series, const std::vector<std::string>* xlabels, ImVec2 size,
               const Fonts& f, const char* y_label = nullptr, bool zero_line = false, const char* x_name = "token");

}  // namespace sf::gui
