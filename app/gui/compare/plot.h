// plot.h — a small reusable line plot for ImGui 1.86 (no implot): axes with "nice" ticks on a
// linear or log scale, a legend, a hover readout of every series at the nearest x, dashed series,
// categorical x labels; right-click for log scale and export (PNG of the plot, CSV of its data).
// Also the layer × step grid drawn through the shared heatmap textures.
//
// Export. The PNG is the plot's rectangle of the framebuffer, read after the frame is rendered (an
// ImDrawList callback on the foreground list runs after every window has been drawn), so it looks
// exactly like the screen. CSV is the PlotData (core/analysis/plot_data.h) written atomically. Scripts reach
// plots by id through request_plot_export().
#pragma once

#include <string>
#include <vector>

#include "gfx/heatmap.h"
#include "gfx/style.h"
#include "imgui.h"
#include "analysis/plot_data.h"

namespace sf::gui {

class App;

// What the user changed on a plot (kept by the panel between frames).
struct PlotView {
  bool log_y = false;
  bool log_set = false;  // false: take PlotData::log_y
};

// Draws `d` in a box of `size` (x ≤ 0: the available width). `id` names the plot for export and
// scripts ("compare.resid", "training.loss").
void plot_widget(const char* id, const PlotData& d, PlotView& view, ImVec2 size, const Fonts& f, App& app);

// A grid (layers × steps) as a heatmap with a log10 colour scale when `log` is set, row labels on
// the left, step ticks under it, a hover readout and the same export menu (CSV: the grid).
// [range_lo, range_hi] fixes the colour scale (log10 units when `log`), e.g. to share it between
// two grids; an empty range (lo ≥ hi) takes the grid's own.
void grid_widget(const char* id, const GridData& g, Heatmap& hm, uint64_t key, bool log, ImVec2 size, const Fonts& f,
                 App& app, float range_lo = 0, float range_hi = 0);
// The finite range of a grid's values (log10 of the positive ones when `log`).
void grid_range(const GridData& g, bool log, float& lo, float& hi);

// Export of a plot by id: ".png" captures the plot the next time it is drawn, ".csv" writes its
// data (also at its next drawing). Returns false when the extension is neither.
bool request_plot_export(const std::string& id, const std::string& path, std::string& error);
// Requests not yet served (a script waits for 0), and the ids drawn in the last frame.
int pending_plot_exports();
std::vector<std::string> drawn_plot_ids();

// Colours of the pre-LN / post-LN series, readable in both themes.
ImU32 placement_colour(bool pre, bool light = false);

}  // namespace sf::gui
