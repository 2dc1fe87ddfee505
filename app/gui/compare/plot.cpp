// plot.cpp
//
// [SECTION] export requests and framebuffer capture
// [SECTION] ticks
// [SECTION] line plot
// [SECTION] grid
#include "compare/plot.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>

#include "app.h"
#include "gfx/gl.h"
#include "gfx/imgui_math.h"
#include "gfx/screenshot.h"
#include "io/safetensors.h"
#include "widgets.h"

namespace sf::gui {

ImU32 placement_colour(bool pre, bool light) {
  if (pre) return light ? IM_COL32(120, 190, 245, 255) : IM_COL32(50, 140, 230, 255);
  return light ? IM_COL32(255, 185, 110, 255) : IM_COL32(240, 120, 40, 255);
}

// [SECTION] export requests and framebuffer capture

namespace {

struct Request {
  std::string id, path;
};
std::vector<Request> g_requests;

// A capture scheduled inside this frame's draw data; the callback fills `error`/`done`.
struct Capture {
  std::string id, path;
  ImVec2 min, max;
  bool done = false, ok = false;
  std::string error;
};
std::vector<std::unique_ptr<Capture>> g_captures;

int g_frame = -1;
std::vector<std::string> g_drawn, g_drawn_last;

void capture_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* c = static_cast<Capture*>(cmd->UserCallbackData);
  GLint vp[4] = {0, 0, 0, 0};
  glGetIntegerv(GL_VIEWPORT, vp);
  const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
  const int x = std::max(0, static_cast<int>(c->min.x * s.x)), y = std::max(0, static_cast<int>(c->min.y * s.y));
  const int w = std::min(static_cast<int>((c->max.x - c->min.x) * s.x), vp[2] - x);
  const int h = std::min(static_cast<int>((c->max.y - c->min.y) * s.y), vp[3] - y);
  c->ok = save_framebuffer_png(c->path, x, y, w, h, vp[3], c->error);
  c->done = true;
}

std::string stem_of(const std::string& id) {
  std::string s = id;
  std::replace(s.begin(), s.end(), '.', '-');
  return s;
}

// Once per frame: the list of plots drawn, and the results of last frame's captures.
void begin_widget(const std::string& id, App& app) {
  const int f = ImGui::GetFrameCount();
  if (f != g_frame) {
    g_frame = f;
    g_drawn_last.swap(g_drawn);
    g_drawn.clear();
    for (auto it = g_captures.begin(); it != g_captures.end();) {
      if (!(*it)->done) {
        ++it;
        continue;
      }
      if ((*it)->ok) app.notify(Message::Info, "wrote " + (*it)->path);
      else app.notify(Message::Error, "plot " + (*it)->id + ": " + (*it)->error);
      it = g_captures.erase(it);
    }
  }
  g_drawn.push_back(id);
}

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// Serves this plot's pending requests: CSV now, PNG by a capture after this frame renders.
void serve_requests(const std::string& id, ImVec2 a, ImVec2 b, const std::function<std::string()>& csv, App& app) {
  for (auto it = g_requests.begin(); it != g_requests.end();) {
    if (it->id != id) {
      ++it;
      continue;
    }
    if (ends_with(it->path, ".csv")) {
      std::string e;
      if (auto r = write_file_atomic(it->path, csv()); r) app.notify(Message::Info, "wrote " + it->path);
      else app.notify(Message::Error, "plot " + id + ": " + r.error());
    } else {
      auto c = std::make_unique<Capture>();
      c->id = id;
      c->path = it->path;
      c->min = a;
      c->max = b;
      ImGui::GetForegroundDrawList()->AddCallback(capture_callback, c.get());
      ImGui::GetForegroundDrawList()->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
      g_captures.push_back(std::move(c));
    }
    it = g_requests.erase(it);
  }
}

void export_menu(const char* id, const std::function<std::string()>& csv, PlotView* view, App& app) {
  if (!ImGui::BeginPopupContextItem(id)) return;
  if (view) {
    bool lg = view->log_y;
    if (ImGui::MenuItem("Log scale", nullptr, &lg)) view->log_y = lg, view->log_set = true;
    ImGui::Separator();
  }
  if (ImGui::MenuItem("Export plot as PNG")) {
    std::string e;
    request_plot_export(id, app.default_export_path(stem_of(id), ".png"), e);
  }
  if (ImGui::MenuItem("Export data as CSV")) {
    const std::string path = app.default_export_path(stem_of(id), ".csv");
    if (auto r = write_file_atomic(path, csv()); r) app.notify(Message::Info, "wrote " + path);
    else app.notify(Message::Error, r.error());
  }
  ImGui::EndPopup();
}

}  // namespace

bool request_plot_export(const std::string& id, const std::string& path, std::string& error) {
  if (!ends_with(path, ".png") && !ends_with(path, ".csv")) {
    error = "plot export: expected a .png or .csv file name, found '" + path + "'";
    return false;
  }
  g_requests.push_back({id, path});
  return true;
}

int pending_plot_exports() {
  return static_cast<int>(g_requests.size() + g_captures.size());
}

std::vector<std::string> drawn_plot_ids() { return g_drawn_last; }

// [SECTION] ticks

namespace {

// 1, 2 or 5 × 10^k closest above `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

std::vector<double> linear_ticks(double lo, double hi, int target, bool integer) {
  double step = nice_step((hi - lo) / std::max(1, target));
  if (integer) step = std::max(1.0, std::round(step));
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9 && t.size() < 50; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_text(double v) {
  char b[32];
  const double a = std::fabs(v);
  if (v == 0) return "0";
  if (a >= 1e5 || a < 1e-3) std::snprintf(b, sizeof b, "%.0e", v);
  else if (a >= 100 || std::fabs(v - std::round(v)) < 1e-9) std::snprintf(b, sizeof b, "%.0f", v);
  else if (a >= 1) std::snprintf(b, sizeof b, "%.1f", v);
  else std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "—";
  char b[32];
  std::snprintf(b, sizeof b, "%.5g", v);
  return b;
}

// `phase` carries the pattern from one segment to the next; it stays in [0, 2·dash).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float th, float& phase, float dash) {
  const ImVec2 d = b - a;
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (!(len > 0) || !(dash > 0)) return;
  float t = 0;
  while (t < len) {
    const bool on = phase < dash;
    const float left = std::max(0.5f, (on ? dash : 2 * dash) - phase);  // at least half a pixel per turn
    const float t1 = std::min(len, t + left);
    if (on) dl->AddLine(a + d * (t / len), a + d * (t1 / len), col, th);
    phase += t1 - t;
    if (phase >= 2 * dash) phase -= 2 * dash;
    t = t1;
  }
}

}  // namespace

// [SECTION] line plot

void plot_widget(const char* id, const PlotData& d, PlotView& view, ImVec2 size, const Fonts& f, App& app) {
  begin_widget(id, app);
  if (!view.log_set) view.log_y = d.log_y;
  const bool log_y = view.log_y;
  const Palette& pal = palette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* small = f.small ? f.small : ImGui::GetFont();
  const float fs = small->FontSize;
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  const std::function<std::string()> csv = [&d] { return plot_csv(d); };  // built only when exported
  export_menu(id, csv, &view, app);
  const ImVec2 p1 = p0 + size;
  serve_requests(id, p0, p1, csv, app);

  // Data range.
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const PlotSeries& s : d.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      const double x = s.x[i], y = s.y[i];
      if (!std::isfinite(x) || !std::isfinite(y) || (log_y && y <= 0)) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  const bool cats = !d.x_categories.empty();
  if (cats) xlo = -0.5, xhi = static_cast<double>(d.x_categories.size()) - 0.5;

  // Title, then the axes box with room for tick labels.
  ImGui::PushFont(f.bold ? f.bold : ImGui::GetFont());
  const float tfs = ImGui::GetFontSize() * 0.9f;
  dl->AddText(ImGui::GetFont(), tfs, p0, pal.text, d.title.c_str());
  ImGui::PopFont();
  const float left = small->CalcTextSizeA(fs, FLT_MAX, 0, "−0.000").x + 8;
  // Legend outside the axes when it fits: on the title's line, else on a line of its own; only
  // a legend too wide for either goes inside, in the corner that hides the fewest points.
  const float th = std::max(1.5f, ImGui::GetFontSize() / 9.0f);
  const float sample = fs * 1.6f;
  // Entries laid out in rows of at most the plot's width.
  const float row_max = size.x - left;
  std::vector<float> entry_w;
  for (const PlotSeries& s : d.series) entry_w.push_back(sample + 4 + small->CalcTextSizeA(fs, FLT_MAX, 0, s.name.c_str()).x + fs);
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
  // 1: on the title's line; 2: rows of their own under the title; 0: inside the axes.
  const int legend_mode = title_w + fs * 2 + legend_w <= size.x ? 1 : rows <= 2 ? 2 : 0;
  const auto legend_rows = [&](ImVec2 at) {
    float x = at.x;
    for (size_t k = 0; k < d.series.size(); ++k) {
      const PlotSeries& s = d.series[k];
      if (k > 0 && entry_row[k] != entry_row[k - 1]) x = at.x;
      const ImU32 col = s.colour ? s.colour : head_colour(static_cast<int>(k));
      const float y0 = at.y + (legend_mode == 2 ? static_cast<float>(entry_row[k]) * (fs + 2) : 0);
      const float y = y0 + fs * 0.55f;
      float phase = 0;
      if (s.dashed) dashed_line(dl, ImVec2(x, y), ImVec2(x + sample, y), col, th, phase, th * 3);
      else dl->AddLine(ImVec2(x, y), ImVec2(x + sample, y), col, th);
      dl->AddText(small, fs, ImVec2(x + sample + 4, y0), pal.text, s.name.c_str());
      x += entry_w[k];
    }
  };
  if (legend_mode == 1) legend_rows(ImVec2(p1.x - 6 - legend_w + fs, p0.y + (tfs - fs) * 0.5f));
  if (legend_mode == 2) legend_rows(ImVec2(p0.x + left, p0.y + tfs + 3));
  const float top = p0.y + tfs + 6 + (legend_mode == 2 ? static_cast<float>(rows) * (fs + 2) + 2 : 0);
  const ImVec2 a(p0.x + left, top), b(p1.x - 6, p1.y - fs * 2.2f);
  dl->AddRectFilled(a, b, IM_COL32(128, 128, 128, 18));
  dl->AddRect(a, b, pal.grid);
  if (!(xlo <= xhi) || !(ylo <= yhi)) {
    dl->AddText(small, fs, a + ImVec2(8, 8), pal.text_dim, "(no data yet)");
    return;
  }
  if (xhi - xlo < 1e-12) xlo -= 0.5, xhi += 0.5;
  if (!cats) {  // keep the first and last points off the frame
    const double pad = (xhi - xlo) * 0.03;
    xlo -= pad, xhi += pad;
  }
  // y range: log — whole decades' worth of padding; linear — 6% padding, 0 included when close.
  double ya, yb;
  if (d.y_min < d.y_max && !log_y) {
    ya = d.y_min, yb = d.y_max;
    const double pad = (yb - ya) * 0.04;
    ya -= pad, yb += pad;
  } else if (log_y) {
    ya = std::log10(ylo), yb = std::log10(yhi);
    if (yb - ya < 0.3) ya -= 0.15, yb += 0.15;
    const double pad = (yb - ya) * 0.06;
    ya -= pad, yb += pad;
  } else {
    ya = ylo, yb = yhi;
    if (ya > 0 && ya < 0.35 * yb) ya = 0;
    if (yb - ya < 1e-12) ya -= std::max(1e-6, std::fabs(ya) * 0.1), yb += std::max(1e-6, std::fabs(yb) * 0.1);
    const double pad = (yb - ya) * 0.06;
    ya = ya == 0 ? 0 : ya - pad;
    yb += pad;
  }
  const auto X = [&](double x) { return a.x + static_cast<float>((x - xlo) / (xhi - xlo)) * (b.x - a.x); };
  const auto Y = [&](double y) {
    const double v = log_y ? std::log10(y) : y;
    return b.y - static_cast<float>((v - ya) / (yb - ya)) * (b.y - a.y);
  };

  // Y ticks and grid.
  dl->PushClipRect(ImVec2(p0.x, a.y - fs), ImVec2(p1.x, b.y + fs), true);
  std::vector<double> yt;
  if (log_y) {
    for (double k = std::floor(ya); k <= std::ceil(yb); k += 1) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = k + std::log10(m);
        if (v < ya || v > yb) continue;
        if (m != 1 && yb - ya > 2.5) {
          dl->AddLine(ImVec2(a.x, Y(std::pow(10, v))), ImVec2(a.x + 4, Y(std::pow(10, v))), pal.grid);
          continue;
        }
        yt.push_back(std::pow(10.0, v));
      }
    }
  } else {
    yt = linear_ticks(ya, yb, std::max(2, static_cast<int>((b.y - a.y) / (fs * 2.5f))), false);
  }
  for (double v : yt) {
    const float y = Y(v);
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), IM_COL32(128, 128, 128, 40));
    const std::string s = tick_text(v);
    const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    dl->AddText(small, fs, ImVec2(a.x - 5 - w, y - fs * 0.5f), pal.text_dim, s.c_str());
  }
  dl->PopClipRect();
  // X ticks.
  if (cats) {
    const float slot = (b.x - a.x) / static_cast<float>(d.x_categories.size());
    float widest = 0;
    for (auto& c : d.x_categories) widest = std::max(widest, small->CalcTextSizeA(fs, FLT_MAX, 0, c.c_str()).x);
    const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil((widest + 6) / slot)));
    for (size_t i = 0; i < d.x_categories.size(); i += every) {
      const float x = X(static_cast<double>(i));
      const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, d.x_categories[i].c_str()).x;
      dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 3), pal.grid);
      dl->AddText(small, fs, ImVec2(x - w * 0.5f, b.y + 3), pal.text_dim, d.x_categories[i].c_str());
    }
  } else {
    const int target = std::max(2, static_cast<int>((b.x - a.x) / (fs * 5)));
    for (double v : linear_ticks(xlo, xhi, target, d.integer_x)) {
      const float x = X(v);
      dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), IM_COL32(128, 128, 128, 28));
      dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 3), pal.grid);
      const std::string s = tick_text(v);
      const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
      dl->AddText(small, fs, ImVec2(x - w * 0.5f, b.y + 3), pal.text_dim, s.c_str());
    }
  }
  {
    const std::string xl = d.x_label;
    const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, xl.c_str()).x;
    dl->AddText(small, fs, ImVec2((a.x + b.x - w) * 0.5f, b.y + fs + 4), pal.text_dim, xl.c_str());
    std::string yl = d.y_label + (log_y ? "  (log)" : "");
    dl->AddText(small, fs, ImVec2(p0.x, b.y + fs + 4), pal.text_dim, yl.c_str());
  }

  // Series.
  dl->PushClipRect(a, b, true);
  for (size_t k = 0; k < d.series.size(); ++k) {
    const PlotSeries& s = d.series[k];
    const ImU32 col = s.colour ? s.colour : head_colour(static_cast<int>(k));
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
      if (!std::isfinite(y) || (log_y && y <= 0) || !std::isfinite(s.x[i])) {
        flush();
        continue;
      }
      pts.emplace_back(X(s.x[i]), Y(y));
    }
    if (n <= 24)
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(s.y[i]) && !(log_y && s.y[i] <= 0)) dl->AddCircleFilled(ImVec2(X(s.x[i]), Y(s.y[i])), th * 1.8f, col);
    flush();
  }
  dl->PopClipRect();

  // Legend inside the box (when it fits nowhere else).
  if (legend_mode == 0) {
    float w = 0;
    for (const PlotSeries& s : d.series) w = std::max(w, small->CalcTextSizeA(fs, FLT_MAX, 0, s.name.c_str()).x);
    const float line = fs * 1.8f;
    const ImVec2 box(w + line + 10, 2 + fs * 1.15f * static_cast<float>(d.series.size()));
    // The corner that hides the fewest points (top right on a tie).
    const ImVec2 corners[4] = {ImVec2(b.x - 4 - box.x, a.y + 4), ImVec2(a.x + 4, a.y + 4),
                               ImVec2(b.x - 4 - box.x, b.y - 4 - box.y), ImVec2(a.x + 4, b.y - 4 - box.y)};
    int best = 0, best_n = INT32_MAX;
    for (int k = 0; k < 4; ++k) {
      int n = 0;
      const ImVec2 c0 = corners[k], c1 = c0 + box;
      for (const PlotSeries& s : d.series)
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (!std::isfinite(s.y[i]) || (log_y && s.y[i] <= 0)) continue;
          const float x = X(s.x[i]), y = Y(s.y[i]);
          if (x >= c0.x - 4 && x <= c1.x + 4 && y >= c0.y - 4 && y <= c1.y + 4) ++n;
        }
      if (n < best_n) best = k, best_n = n;
    }
    const ImVec2 l0 = corners[best], l1 = l0 + box;
    ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    bg.w = 0.82f;
    dl->AddRectFilled(l0, l1, ImGui::ColorConvertFloat4ToU32(bg), 3);
    for (size_t k = 0; k < d.series.size(); ++k) {
      const PlotSeries& s = d.series[k];
      const ImU32 col = s.colour ? s.colour : head_colour(static_cast<int>(k));
      const float y = l0.y + 2 + fs * 1.15f * static_cast<float>(k) + fs * 0.55f;
      float phase = 0;
      if (s.dashed) dashed_line(dl, ImVec2(l0.x + 5, y), ImVec2(l0.x + 5 + line, y), col, th, phase, th * 3);
      else dl->AddLine(ImVec2(l0.x + 5, y), ImVec2(l0.x + 5 + line, y), col, th);
      dl->AddText(small, fs, ImVec2(l0.x + line + 9, y - fs * 0.5f), pal.text, s.name.c_str());
    }
  }

  // Hover: every series at the nearest x.
  if (hovered) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (m.x >= a.x && m.x <= b.x && m.y >= a.y && m.y <= b.y) {
      const double xm = xlo + (m.x - a.x) / (b.x - a.x) * (xhi - xlo);
      dl->AddLine(ImVec2(m.x, a.y), ImVec2(m.x, b.y), pal.text_dim);
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
          if (cats && ci < d.x_categories.size()) ImGui::Text("%s %s", d.x_label.c_str(), d.x_categories[ci].c_str());
          else ImGui::Text("%s %s", d.x_label.c_str(), value_text(x).c_str());
          header = true;
        }
        const ImU32 col = s.colour ? s.colour : head_colour(static_cast<int>(k));
        if (std::isfinite(s.y[best]) && !(log_y && s.y[best] <= 0))
          dl->AddCircle(ImVec2(X(x), Y(s.y[best])), th * 3, col, 0, th);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col), "■");
        ImGui::SameLine();
        ImGui::Text("%s: %s%s", s.name.c_str(), value_text(s.y[best]).c_str(),
                    std::fabs(x - xm) > (xhi - xlo) * 0.05 && !cats ? "  (nearest point)" : "");
      }
      ImGui::TextDisabled("right-click: log scale, export PNG / CSV");
      ImGui::EndTooltip();
    }
  }
}

// [SECTION] grid

void grid_range(const GridData& g, bool log, float& lo, float& hi) {
  lo = INFINITY, hi = -INFINITY;
  for (double x : g.values) {
    const double v = log ? (x > 0 ? std::log10(x) : NAN) : x;
    if (std::isfinite(v)) lo = std::min(lo, static_cast<float>(v)), hi = std::max(hi, static_cast<float>(v));
  }
}

void grid_widget(const char* id, const GridData& g, Heatmap& hm, uint64_t key, bool log, ImVec2 size, const Fonts& f,
                 App& app, float range_lo, float range_hi) {
  begin_widget(id, app);
  const Palette& pal = palette();
  ImFont* small = f.small ? f.small : ImGui::GetFont();
  const float fs = small->FontSize;
  const std::function<std::string()> csv = [&g] { return grid_csv(g); };
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::PushFont(f.bold ? f.bold : ImGui::GetFont());
  ImGui::TextUnformatted(g.title.c_str());
  ImGui::PopFont();
  const size_t R = g.rows.size(), C = g.cols.size();
  if (R == 0 || C == 0) {
    ImGui::TextDisabled("(no steps yet)");
    ImGui::Dummy(ImVec2(size.x, std::max(0.0f, size.y - ImGui::GetTextLineHeightWithSpacing() * 2)));
    return;
  }
  std::vector<float> v(R * C);
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = g.values[i];
    v[i] = static_cast<float>(log ? (x > 0 ? std::log10(x) : NAN) : x);
  }
  float lo = range_lo, hi = range_hi;
  if (!(lo < hi)) finite_range(v.data(), v.size(), lo, hi);
  hm.update(v.data(), static_cast<int>(R), static_cast<int>(C), key, Colormap::Viridis, lo, hi, 1024);
  std::vector<std::string> labels;
  for (const std::string& r : g.rows) {
    std::string s = r;
    for (const char* from : {"encoder.layers.", "decoder.layers."})
      if (s.rfind(from, 0) == 0) s = std::string(from[0] == 'e' ? "enc " : "dec ") + s.substr(std::string(from).size());
    labels.push_back(s);
  }
  HeatmapOpts o;
  o.row_labels = &labels;
  o.square = false;
  o.max_size = ImVec2(size.x, std::max(fs * 4, size.y - (ImGui::GetCursorScreenPos().y - p0.y) - fs * 2.6f));
  o.max_cell = 400;
  o.max_cell_h = std::clamp(o.max_size.y / static_cast<float>(R), fs, fs * 4);
  o.fonts = &f;
  const HeatmapHit hit = heatmap_widget(id, hm, o);
  export_menu(id, csv, nullptr, app);
  // Step ticks under the image.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const double s0 = g.cols.front(), s1 = g.cols.back();
  const float w = hit.max.x - hit.min.x;
  for (double t : linear_ticks(s0, s1, std::max(2, static_cast<int>(w / (fs * 5))), true)) {
    const float x = C == 1 ? hit.min.x + w * 0.5f : hit.min.x + w * static_cast<float>((t - s0) / std::max(1e-9, s1 - s0));
    const std::string s = tick_text(t);
    const float tw = small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    dl->AddLine(ImVec2(x, hit.max.y), ImVec2(x, hit.max.y + 3), pal.grid);
    dl->AddText(small, fs, ImVec2(x - tw * 0.5f, hit.max.y + 3), pal.text_dim, s.c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(p0.x, hit.max.y + fs + 6));
  ImGui::TextDisabled("%s (%s%s: %s … %s, viridis)", g.col_label.c_str(), log ? "log10 " : "", g.value_label.c_str(),
                      value_text(log ? std::pow(10.0, lo) : lo).c_str(), value_text(log ? std::pow(10.0, hi) : hi).c_str());
  serve_requests(id, ImVec2(p0.x, p0.y), ImVec2(p0.x + size.x, ImGui::GetCursorScreenPos().y), csv, app);
  if (hit.hovered && hit.row >= 0 && hit.col >= 0) {
    const size_t c = static_cast<size_t>(hit.col), r = static_cast<size_t>(hit.row);
    const double first = c == 0 ? 1 : g.cols[c - 1] + 1;
    ImGui::BeginTooltip();
    ImGui::Text("%s", g.rows[r].c_str());
    if (first < g.cols[c]) ImGui::Text("steps %.0f – %.0f (mean)", first, g.cols[c]);
    else ImGui::Text("step %.0f", g.cols[c]);
    ImGui::Text("%s = %s", g.value_label.c_str(), value_text(g.at(r, c)).c_str());
    ImGui::EndTooltip();
  }
}

}  // namespace sf::gui
