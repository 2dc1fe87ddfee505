// plot_grid.cpp — the layer × step grid (compare/plot.h, grid_widget): values drawn through the shared
// heatmap textures (log10 colour scale on request), step ticks, hover readout, the plots' export menu.
#include <algorithm>
#include <cmath>
#include <functional>

#include "app.h"
#include "compare/plot.h"
#include "compare/plot_parts.h"
#include "widgets.h"

namespace sf::gui {

using namespace plot_parts;

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
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + size.x);
  ImGui::TextUnformatted(g.title.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  note_item("title " + g.title);
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
    const float x =
        C == 1 ? hit.min.x + w * 0.5f : hit.min.x + w * static_cast<float>((t - s0) / std::max(1e-9, s1 - s0));
    const std::string s = tick_text(t);
    const float tw = small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    dl->AddLine(ImVec2(x, hit.max.y), ImVec2(x, hit.max.y + 3), pal.grid);
    // Centred under its tick, kept within the widget's width.
    const float tx = std::clamp(x - tw * 0.5f, p0.x, std::max(p0.x, p0.x + size.x - tw));
    dl->AddText(small, fs, ImVec2(tx, hit.max.y + 3), pal.text_dim, s.c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(p0.x, hit.max.y + fs + 6));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + size.x);
  ImGui::TextDisabled("%s (%s%s: %s … %s, viridis)", g.col_label.c_str(), log ? "log10 " : "", g.value_label.c_str(),
                      value_text(log ? std::pow(10.0, lo) : lo).c_str(),
                      value_text(log ? std::pow(10.0, hi) : hi).c_str());
  ImGui::PopTextWrapPos();
  note_item("scale " + g.title);
  serve_requests(id, ImVec2(p0.x, p0.y), ImVec2(p0.x + size.x, ImGui::GetCursorScreenPos().y), csv, app);
  if (hit.hovered && hit.row >= 0 && hit.col >= 0) {
    const size_t c = static_cast<size_t>(hit.col), r = static_cast<size_t>(hit.row);
    const double first = c == 0 ? 1 : g.cols[c - 1] + 1;
    ImGui::BeginTooltip();
    ImGui::Text("%s", g.rows[r].c_str());
    if (first < g.cols[c])
      ImGui::Text("steps %.0f – %.0f (mean)", first, g.cols[c]);
    else
      ImGui::Text("step %.0f", g.cols[c]);
    ImGui::Text("%s = %s", g.value_label.c_str(), value_text(g.at(r, c)).c_str());
    ImGui::EndTooltip();
  }
}

}  // namespace sf::gui
