// plot.cpp — the line plot (compare/plot.h, plot_widget): data range, title and legend (outside the
// axes, never over the curves), axes with ticks, the series, the hover readout. Its parts elsewhere:
// plot_ticks.cpp (tick steps and text, dashed lines), plot_export.cpp (PNG / CSV export),
// plot_grid.cpp (the layer × step grid).
#include "compare/plot.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "app.h"
#include "gfx/imgui_math.h"
#include "label_stride.h"
#include "compare/plot_parts.h"
#include "widgets.h"

namespace sf::gui {

ImU32 placement_colour(bool pre, bool light) {
  if (pre) return light ? IM_COL32(120, 190, 245, 255) : IM_COL32(50, 140, 230, 255);
  return light ? IM_COL32(255, 185, 110, 255) : IM_COL32(240, 120, 40, 255);
}

using namespace plot_parts;

namespace {

ImU32 series_colour(const PlotSeries& s, size_t k) { return s.colour ? s.colour : head_colour(static_cast<int>(k)); }

// The extent of the finite points (a log axis: positive y only).
struct DataRange {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
};

DataRange data_range(const PlotData& d, bool log_y) {
  DataRange r;
  for (const PlotSeries& s : d.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      const double x = s.x[i], y = s.y[i];
      if (!std::isfinite(x) || !std::isfinite(y) || (log_y && y <= 0)) continue;
      r.xlo = std::min(r.xlo, x), r.xhi = std::max(r.xhi, x), r.ylo = std::min(r.ylo, y), r.yhi = std::max(r.yhi, y);
    }
  if (!d.x_categories.empty()) r.xlo = -0.5, r.xhi = static_cast<double>(d.x_categories.size()) - 0.5;
  return r;
}

// Where the plot draws and how its data maps to the screen.
struct Frame {
  ImDrawList* dl = nullptr;
  ImFont* small = nullptr;
  float fs = 0;             // the small font's size
  float th = 0;             // line thickness
  ImVec2 p0, p1;            // the widget
  ImVec2 a, b;              // the axes box
  double xlo = 0, xhi = 0;  // x range
  double ya = 0, yb = 0;    // y range (log10 of y on a log axis)
  bool log_y = false, cats = false;
  float X(double x) const { return a.x + static_cast<float>((x - xlo) / (xhi - xlo)) * (b.x - a.x); }
  float Y(double y) const {
    const double v = log_y ? std::log10(y) : y;
    return b.y - static_cast<float>((v - ya) / (yb - ya)) * (b.y - a.y);
  }
};

// The title, wrapped between words at the plot's width, then the legend outside the axes: on the
// title's line when both fit, else in rows of their own under the title (never inside the axes,
// where it would cover curves). Returns the axes' top edge.
float draw_title_and_legend(const PlotData& d, const Fonts& f, ImVec2 size, float left, Frame& fr) {
  const Palette& pal = palette();
  ImDrawList* dl = fr.dl;
  ImFont* small = fr.small;
  const float fs = fr.fs;
  ImGui::PushFont(f.bold ? f.bold : ImGui::GetFont());
  const float tfs = ImGui::GetFontSize() * 0.9f;
  const ImVec2 title_size = ImGui::GetFont()->CalcTextSizeA(tfs, FLT_MAX, size.x, d.title.c_str());
  dl->AddText(ImGui::GetFont(), tfs, fr.p0, pal.text, d.title.c_str(), nullptr, size.x);
  drawn_boxes().add("title " + d.title, fr.p0, fr.p0 + title_size);
  ImGui::PopFont();
  const float title_h = std::max(tfs, title_size.y);
  fr.th = std::max(1.5f, ImGui::GetFontSize() / 9.0f);
  const float th = fr.th;
  const float sample = fs * 1.6f;
  // Entries laid out in rows of at most the plot's width; a name too long for a row of its own is
  // shortened with "…" (the hover readout names the series in full).
  const float row_max = size.x - left;
  std::vector<float> entry_w;
  std::vector<std::string> names;
  for (const PlotSeries& s : d.series) {
    std::string name = s.name;
    const auto width = [&] { return sample + 4 + small->CalcTextSizeA(fs, FLT_MAX, 0, name.c_str()).x + fs; };
    if (width() > row_max) {
      std::string base = s.name;
      while (!base.empty() && (name = base + "…", width() > row_max)) {
        // Drops the last character: its continuation bytes, then its first byte.
        while (!base.empty() && (static_cast<unsigned char>(base.back()) & 0xC0) == 0x80) base.pop_back();
        if (!base.empty()) base.pop_back();
      }
    }
    names.push_back(name);
    entry_w.push_back(width());
  }
  std::vector<int> entry_row(entry_w.size(), 0);
  float legend_w = 0, row_w = 0;
  int rows = d.series.empty() ? 0 : 1;
  for (size_t k = 0; k < entry_w.size(); ++k) {
    legend_w += entry_w[k];
    if (row_w > 0 && row_w + entry_w[k] > row_max) ++rows, row_w = 0;
    entry_row[k] = rows - 1;
    row_w += entry_w[k];
  }
  const float title_w = (f.bold ? f.bold : ImGui::GetFont())->CalcTextSizeA(tfs, FLT_MAX, 0, d.title.c_str()).x;
  // 1: on the title's line; 2: rows of their own under the title.
  const int legend_mode = title_h < tfs * 1.5f && title_w + fs * 2 + legend_w <= size.x ? 1 : 2;
  const auto legend_rows = [&](ImVec2 at) {
    float x = at.x;
    for (size_t k = 0; k < d.series.size(); ++k) {
      const PlotSeries& s = d.series[k];
      if (k > 0 && entry_row[k] != entry_row[k - 1]) x = at.x;
      const ImU32 col = series_colour(s, k);
      const float y0 = at.y + (legend_mode == 2 ? static_cast<float>(entry_row[k]) * (fs + 2) : 0);
      const float y = y0 + fs * 0.55f;
      float phase = 0;
      if (s.dashed)
        dashed_line(dl, ImVec2(x, y), ImVec2(x + sample, y), col, th, phase, th * 3);
      else
        dl->AddLine(ImVec2(x, y), ImVec2(x + sample, y), col, th);
      dl->AddText(small, fs, ImVec2(x + sample + 4, y0), pal.text, names[k].c_str());
      drawn_boxes().add("legend " + names[k], ImVec2(x, y0), ImVec2(x + entry_w[k] - fs, y0 + fs));
      x += entry_w[k];
    }
  };
  if (legend_mode == 1) legend_rows(ImVec2(fr.p1.x - 6 - legend_w + fs, fr.p0.y + (tfs - fs) * 0.5f));
  if (legend_mode == 2) legend_rows(ImVec2(fr.p0.x + left, fr.p0.y + title_h + 3));
  return fr.p0.y + title_h + 6 + (legend_mode == 2 ? static_cast<float>(rows) * (fs + 2) + 2 : 0);
}

// The axes' ranges from the data's: x padded so the first and last points stay off the frame; y
// on a log axis — whole decades' worth of padding; linear — the plot's own range when it has one,
// else 6% padding with 0 included when close.
void set_ranges(const PlotData& d, const DataRange& r, Frame& fr) {
  double xlo = r.xlo, xhi = r.xhi;
  if (xhi - xlo < 1e-12) xlo -= 0.5, xhi += 0.5;
  if (!fr.cats) {
    const double pad = (xhi - xlo) * 0.03;
    xlo -= pad, xhi += pad;
  }
  double ya, yb;
  if (d.y_min < d.y_max && !fr.log_y) {
    ya = d.y_min, yb = d.y_max;
    const double pad = (yb - ya) * 0.04;
    ya -= pad, yb += pad;
  } else if (fr.log_y) {
    ya = std::log10(r.ylo), yb = std::log10(r.yhi);
    if (yb - ya < 0.3) ya -= 0.15, yb += 0.15;
    const double pad = (yb - ya) * 0.06;
    ya -= pad, yb += pad;
  } else {
    ya = r.ylo, yb = r.yhi;
    if (ya > 0 && ya < 0.35 * yb) ya = 0;
    if (yb - ya < 1e-12) ya -= std::max(1e-6, std::fabs(ya) * 0.1), yb += std::max(1e-6, std::fabs(yb) * 0.1);
    const double pad = (yb - ya) * 0.06;
    ya = ya == 0 ? 0 : ya - pad;
    yb += pad;
  }
  fr.xlo = xlo, fr.xhi = xhi, fr.ya = ya, fr.yb = yb;
}

// Y ticks with their grid lines: decades (and 2, 5 between them when few) on a log axis.
void draw_y_ticks(const Frame& fr) {
  const Palette& pal = palette();
  ImDrawList* dl = fr.dl;
  const ImVec2 a = fr.a, b = fr.b;
  const float fs = fr.fs;
  dl->PushClipRect(ImVec2(fr.p0.x, a.y - fs), ImVec2(fr.p1.x, b.y + fs), true);
  std::vector<double> yt;
  if (fr.log_y) {
    for (double k = std::floor(fr.ya); k <= std::ceil(fr.yb); k += 1) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = k + std::log10(m);
        if (v < fr.ya || v > fr.yb) continue;
        if (m != 1 && fr.yb - fr.ya > 2.5) {
          dl->AddLine(ImVec2(a.x, fr.Y(std::pow(10, v))), ImVec2(a.x + 4, fr.Y(std::pow(10, v))), pal.grid);
          continue;
        }
        yt.push_back(std::pow(10.0, v));
      }
    }
  } else {
    yt = linear_ticks(fr.ya, fr.yb, std::max(2, static_cast<int>((b.y - a.y) / (fs * 2.5f))), false);
  }
  for (double v : yt) {
    const float y = fr.Y(v);
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), IM_COL32(128, 128, 128, 40));
    const std::string s = tick_text(v);
    const float w = fr.small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    dl->AddText(fr.small, fs, ImVec2(a.x - 5 - w, y - fs * 0.5f), pal.text_dim, s.c_str());
  }
  dl->PopClipRect();
}

// X ticks: every category that fits, or round numbers with their grid lines.
void draw_x_ticks(const PlotData& d, const Frame& fr) {
  const Palette& pal = palette();
  ImDrawList* dl = fr.dl;
  ImFont* small = fr.small;
  const ImVec2 a = fr.a, b = fr.b;
  const float fs = fr.fs;
  if (fr.cats) {
    const float slot = (b.x - a.x) / static_cast<float>(d.x_categories.size());
    float widest = 0;
    for (auto& c : d.x_categories) widest = std::max(widest, small->CalcTextSizeA(fs, FLT_MAX, 0, c.c_str()).x);
    const size_t every = slot_label_step(slot, widest + 6, d.x_categories.size());
    for (size_t i = 0; i < d.x_categories.size(); i += every) {
      const float x = fr.X(static_cast<double>(i));
      const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, d.x_categories[i].c_str()).x;
      dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 3), pal.grid);
      dl->AddText(small, fs, ImVec2(x - w * 0.5f, b.y + 3), pal.text_dim, d.x_categories[i].c_str());
    }
    return;
  }
  const int target = std::max(2, static_cast<int>((b.x - a.x) / (fs * 5)));
  for (double v : linear_ticks(fr.xlo, fr.xhi, target, d.integer_x)) {
    const float x = fr.X(v);
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), IM_COL32(128, 128, 128, 28));
    dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 3), pal.grid);
    const std::string s = tick_text(v);
    const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    // Centred under its tick, kept within the plot's width.
    const float tx = std::clamp(x - w * 0.5f, fr.p0.x, std::max(fr.p0.x, fr.p1.x - w));
    dl->AddText(small, fs, ImVec2(tx, b.y + 3), pal.text_dim, s.c_str());
  }
}

// The x label centred under the axes, the y label at the bottom left.
void draw_axis_labels(const PlotData& d, const Frame& fr) {
  const Palette& pal = palette();
  const std::string xl = d.x_label;
  const float w = fr.small->CalcTextSizeA(fr.fs, FLT_MAX, 0, xl.c_str()).x;
  fr.dl->AddText(fr.small, fr.fs, ImVec2((fr.a.x + fr.b.x - w) * 0.5f, fr.b.y + fr.fs + 4), pal.text_dim, xl.c_str());
  std::string yl = d.y_label + (fr.log_y ? "  (log)" : "");
  fr.dl->AddText(fr.small, fr.fs, ImVec2(fr.p0.x, fr.b.y + fr.fs + 4), pal.text_dim, yl.c_str());
}

// Each series as a polyline (dashed when asked), broken where a point is missing; short series
// also get a dot per point.
void draw_series(const PlotData& d, const Frame& fr) {
  ImDrawList* dl = fr.dl;
  const float th = fr.th;
  dl->PushClipRect(fr.a, fr.b, true);
  for (size_t k = 0; k < d.series.size(); ++k) {
    const PlotSeries& s = d.series[k];
    const ImU32 col = series_colour(s, k);
    std::vector<ImVec2> pts;
    float phase = 0;
    const auto flush = [&] {
      if (pts.size() >= 2) {
        if (s.dashed)
          for (size_t i = 1; i < pts.size(); ++i) dashed_line(dl, pts[i - 1], pts[i], col, th, phase, th * 4);
        else
          dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, th);
      }
      pts.clear();
    };
    const size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; ++i) {
      const double y = s.y[i];
      if (!std::isfinite(y) || (fr.log_y && y <= 0) || !std::isfinite(s.x[i])) {
        flush();
        continue;
      }
      pts.emplace_back(fr.X(s.x[i]), fr.Y(y));
    }
    if (n <= 24)
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(s.y[i]) && !(fr.log_y && s.y[i] <= 0))
          dl->AddCircleFilled(ImVec2(fr.X(s.x[i]), fr.Y(s.y[i])), th * 1.8f, col);
    flush();
  }
  dl->PopClipRect();
}

// The hover readout: every series at the point nearest the mouse's x.
void draw_hover(const PlotData& d, const Frame& fr) {
  const Palette& pal = palette();
  const ImVec2 m = ImGui::GetIO().MousePos, a = fr.a, b = fr.b;
  if (!(m.x >= a.x && m.x <= b.x && m.y >= a.y && m.y <= b.y)) return;
  const double xm = fr.xlo + (m.x - a.x) / (b.x - a.x) * (fr.xhi - fr.xlo);
  fr.dl->AddLine(ImVec2(m.x, a.y), ImVec2(m.x, b.y), pal.text_dim);
  ImGui::BeginTooltip();
  bool header = false;
  for (size_t k = 0; k < d.series.size(); ++k) {
    const PlotSeries& s = d.series[k];
    const size_t n = std::min(s.x.size(), s.y.size());
    if (!n) continue;
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
      if (std::fabs(s.x[i] - xm) < std::fabs(s.x[best] - xm)) best = i;
    const double x = s.x[best];
    if (!header) {
      const size_t ci = static_cast<size_t>(std::max(0.0, std::round(x)));
      if (fr.cats && ci < d.x_categories.size())
        ImGui::Text("%s %s", d.x_label.c_str(), d.x_categories[ci].c_str());
      else
        ImGui::Text("%s %s", d.x_label.c_str(), value_text(x).c_str());
      header = true;
    }
    const ImU32 col = series_colour(s, k);
    if (std::isfinite(s.y[best]) && !(fr.log_y && s.y[best] <= 0))
      fr.dl->AddCircle(ImVec2(fr.X(x), fr.Y(s.y[best])), fr.th * 3, col, 0, fr.th);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col), "■");
    ImGui::SameLine();
    ImGui::Text("%s: %s%s", s.name.c_str(), value_text(s.y[best]).c_str(),
                std::fabs(x - xm) > (fr.xhi - fr.xlo) * 0.05 && !fr.cats ? "  (nearest point)" : "");
  }
  ImGui::TextDisabled("right-click: log scale, export PNG / CSV");
  ImGui::EndTooltip();
}

}  // namespace

void plot_widget(const char* id, const PlotData& d, PlotView& view, ImVec2 size, const Fonts& f, App& app) {
  begin_widget(id, app);
  if (!view.log_set) view.log_y = d.log_y;
  const Palette& pal = palette();
  Frame fr;
  fr.log_y = view.log_y;
  fr.cats = !d.x_categories.empty();
  fr.dl = ImGui::GetWindowDrawList();
  fr.small = f.small ? f.small : ImGui::GetFont();
  fr.fs = fr.small->FontSize;
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  fr.p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  const std::function<std::string()> csv = [&d] { return plot_csv(d); };  // built only when exported
  export_menu(id, csv, &view, app);
  fr.p1 = fr.p0 + size;
  serve_requests(id, fr.p0, fr.p1, csv, app);

  const DataRange r = data_range(d, fr.log_y);
  // The axes box, with room for tick labels on the left and below.
  const float left = fr.small->CalcTextSizeA(fr.fs, FLT_MAX, 0, "−0.000").x + 8;
  const float top = draw_title_and_legend(d, f, size, left, fr);
  fr.a = ImVec2(fr.p0.x + left, top);
  fr.b = ImVec2(fr.p1.x - 6, fr.p1.y - fr.fs * 2.2f);
  fr.dl->AddRectFilled(fr.a, fr.b, IM_COL32(128, 128, 128, 18));
  fr.dl->AddRect(fr.a, fr.b, pal.grid);
  if (!(r.xlo <= r.xhi) || !(r.ylo <= r.yhi)) {
    fr.dl->AddText(fr.small, fr.fs, fr.a + ImVec2(8, 8), pal.text_dim, "(no data yet)");
    return;
  }
  set_ranges(d, r, fr);
  draw_y_ticks(fr);
  draw_x_ticks(d, fr);
  draw_axis_labels(d, fr);
  draw_series(d, fr);
  if (hovered) draw_hover(d, fr);
}

}  // namespace sf::gui
