// plot_data.h — what a plot shows, independent of how it is drawn: named series of (x, y) points
// with axis titles. The explorer draws it; export writes it as CSV; tests compare it with what the
// command line prints.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace sf {

struct PlotSeries {
  std::string name;       // legend entry
  std::vector<double> x;  // (n)
  std::vector<double> y;  // (n); NaN = no value (a gap)
  unsigned colour = 0;    // 0xAABBGGRR (ImGui's IM_COL32 layout); 0 = pick by index
  bool dashed = false;    // drawn dashed (e.g. a reference run)
};

struct PlotData {
  std::string title;
  std::string x_label, y_label;
  bool log_y = false;                     // suggested: loss and gradient norms span decades
  bool integer_x = false;                 // x is a layer or step index: ticks on whole numbers
  double y_min = 0, y_max = 0;            // a fixed y range when y_min < y_max (e.g. [0, 1] for accuracies)
  std::vector<std::string> x_categories;  // when set, x = i means x_categories[i] (e.g. "enc 0")
  std::vector<PlotSeries> series;
};

// A matrix shown as a heatmap (e.g. gradient norm per layer × training step).
struct GridData {
  std::string title;
  std::string row_label, col_label, value_label;
  std::vector<std::string> rows;  // (R) row names, top first
  std::vector<double> cols;       // (C) column coordinates (e.g. the step of each column)
  std::vector<double> values;     // (R·C) row-major; NaN = no value
  double at(size_t r, size_t c) const { return values[r * cols.size() + c]; }
};
// CSV: a header "row,<col_label>,<value_label>", then one line per cell, row by row.
std::string grid_csv(const GridData& g);

// CSV text: a header "series,<x label>,<y label>" (quoted), then one line per point, series after
// series. Values are written with 9 significant digits (floats round-trip), NaN as "nan"; with
// x_categories the x column holds the category's name ("enc 0").
std::string plot_csv(const PlotData& p);

// Writes plot_csv atomically (temporary file + rename).
Result<bool> write_plot_csv(const std::string& path, const PlotData& p);

}  // namespace sf
