#include "analysis/plot_data.h"

#include <cmath>
#include <cstdio>

#include "io/safetensors.h"

namespace sf {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string plot_csv(const PlotData& p) {
  std::string out = "series," + quoted(p.x_label.empty() ? "x" : p.x_label) + "," +
                    quoted(p.y_label.empty() ? "y" : p.y_label) + "\n";
  for (const PlotSeries& s : p.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      const double x = s.x[i];
      const bool named = !p.x_categories.empty() && x >= 0 && x < static_cast<double>(p.x_categories.size());
      out += quoted(s.name) + "," + (named ? quoted(p.x_categories[static_cast<size_t>(x)]) : number(x)) + "," +
             number(s.y[i]) + "\n";
    }
  return out;
}

std::string grid_csv(const GridData& g) {
  std::string out = quoted(g.row_label.empty() ? "row" : g.row_label) + "," +
                    quoted(g.col_label.empty() ? "col" : g.col_label) + "," +
                    quoted(g.value_label.empty() ? "value" : g.value_label) + "\n";
  for (size_t r = 0; r < g.rows.size(); ++r)
    for (size_t c = 0; c < g.cols.size(); ++c)
      out += quoted(g.rows[r]) + "," + number(g.cols[c]) + "," + number(g.at(r, c)) + "\n";
  return out;
}

Result<bool> write_plot_csv(const std::string& path, const PlotData& p) { return write_file_atomic(path, plot_csv(p)); }

}  // namespace sf
