// plot_parts.h — internal to the plots (plot.cpp, plot_grid.cpp): their export hooks
// (plot_export.cpp) and axis helpers (plot_ticks.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "imgui.h"

namespace sf::gui {

class App;
struct PlotView;

namespace plot_parts {

// Called first by every plot drawn: notes its id for drawn_plot_ids() and, once per frame,
// reports last frame's finished captures.
void begin_widget(const std::string& id, App& app);
// Serves this plot's pending export requests: CSV now, PNG by a capture of the rectangle (a, b)
// after this frame renders.
void serve_requests(const std::string& id, ImVec2 a, ImVec2 b, const std::function<std::string()>& csv, App& app);
// The right-click menu of the last item: log scale (when `view` is given), export PNG / CSV.
void export_menu(const char* id, const std::function<std::string()>& csv, PlotView* view, App& app);

// About `target` ticks over [lo, hi] at a 1, 2 or 5 × 10^k step (whole numbers when `integer`).
std::vector<double> linear_ticks(double lo, double hi, int target, bool integer);
std::string tick_text(double v);   // short: "0", "2.5", "1e-04"
std::string value_text(double v);  // 5 significant digits; "—" for NaN
// A dashed segment; `phase` carries the pattern from one segment to the next ([0, 2·dash)).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float th, float& phase, float dash);

}  // namespace plot_parts
}  // namespace sf::gui
