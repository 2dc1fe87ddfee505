// widgets.cpp
//
// [SECTION] numbers
// [SECTION] text
// [SECTION] heatmap widget
// [SECTION] colour bar
// [SECTION] token chips
// [SECTION] line plot
#include "widgets.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "gfx/imgui_math.h"
#include "label_stride.h"

namespace sf::gui {

// [SECTION] numbers

std::string fmt_value(float v, int decimals) {
  if (std::isnan(v)) return "—";
  if (std::isinf(v)) return v < 0 ? "−∞" : "+∞";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, static_cast<double>(v));
  std::string s = b;
  // A typographic minus reads better on a projector than a hyphen.
  if (!s.empty() && s[0] == '-') s = "−" + s.substr(1);
  return s;
}

std::string fmt_bytes(int64_t b) {
  char buf[64];
  if (b < 1024)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  else if (b < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

std::string fmt_count(int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += "\xE2\x80\x89";  // thin space
    out += s[i];
  }
  return n < 0 ? "−" + out : out;
}

std::string fmt_flops(int64_t n) {
  char buf[64];
  const double v = static_cast<double>(n);
  if (v < 1e3)
    std::snprintf(buf, sizeof buf, "%lld FLOP", static_cast<long long>(n));
  else if (v < 1e6)
    std::snprintf(buf, sizeof buf, "%.1f kFLOP", v / 1e3);
  else if (v < 1e9)
    std::snprintf(buf, sizeof buf, "%.2f MFLOP", v / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f GFLOP", v / 1e9);
  return buf;
}

std::vector<std::string> numbered(int n, const char* prefix) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

// [SECTION] text

void text_rotated(ImDrawList* dl, ImFont* font, float size, ImVec2 pivot, ImU32 col, const char* text, float angle) {
  // Lay the text out horizontally somewhere the current clip rectangle keeps it whole (ImGui culls
  // glyphs outside it), then rotate and move the vertices to `pivot`.
  const ImVec4 clip = dl->_CmdHeader.ClipRect;
  const ImVec2 origin(clip.x + 1, std::clamp(pivot.y, clip.y, std::max(clip.y, clip.w - size)));
  const int v0 = dl->VtxBuffer.Size;
  dl->AddText(font, size, origin, col, text);
  const float c = std::cos(angle), s = std::sin(angle);
  for (int i = v0; i < dl->VtxBuffer.Size; ++i) {
    ImDrawVert& v = dl->VtxBuffer[i];
    const ImVec2 d = v.pos - origin;
    v.pos = ImVec2(pivot.x + d.x * c - d.y * s, pivot.y + d.x * s + d.y * c);
  }
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void heading(const Fonts& f, const char* text) {
  ImGui::PushFont(f.bold);
  ImGui::TextUnformatted(text);
  ImGui::PopFont();
}

void text_coloured_wrapped(ImU32 col, const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, col);
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

DrawnLabels& drawn_labels() {
  static DrawnLabels d;
  return d;
}

DrawnBoxes& drawn_boxes() {
  static DrawnBoxes d;
  return d;
}

void DrawnBoxes::add(const std::string& name, ImVec2 a, ImVec2 b) {
  list.emplace_back(name, ImVec4(a.x, a.y, b.x, b.y));
  edges.push_back(ImGui::GetCurrentContext() && ImGui::GetCurrentWindowRead()
                      ? ImGui::GetCurrentWindowRead()->InnerClipRect.Max.x
                      : b.x);
}

void note_item(const std::string& name) { drawn_boxes().add(name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()); }

std::string text_wrapped_words(const std::string& text) {
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  std::string out, line;
  const auto flush = [&] {
    if (!out.empty()) out += '\n';
    out += line;
    line.clear();
  };
  size_t i = 0;
  while (i <= text.size()) {
    const size_t end = std::min(text.find_first_of(" \n", i), text.size());
    const std::string word = text.substr(i, end - i);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
      flush();
      line = word;
    } else {
      line = longer;
    }
    if (end == text.size() || text[end] == '\n') flush();
    i = end + 1;
  }
  ImGui::TextUnformatted(out.c_str());
  return out;
}

void same_line_if_fits(float width) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width <= right) ImGui::SameLine();
}

namespace {

float tab_width(const char* title) {
  return ImGui::CalcTextSize(title, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

bool tab_bar(const char* id, const char* const* titles, int n, int& current, bool select, const char* trailing,
             const char* tip) {
  bool pressed = false;
  if (!ImGui::BeginTabBar(id)) return false;
  for (int t = 0; t < n; ++t) {
    const ImGuiTabItemFlags f = select && t == current ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(titles[t], nullptr, f);
    note_item(std::string("tab ") + titles[t]);
    if (open) {
      current = t;
      ImGui::EndTabItem();
    }
  }
  if (trailing) {
    pressed = ImGui::TabItemButton(trailing, ImGuiTabItemFlags_Trailing);
    if (tip && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  }
  ImGui::EndTabBar();
  return pressed;
}

bool tab_buttons(const char* const* titles, int n, int& current, const char* trailing, const char* tip) {
  const ImGuiStyle& st = ImGui::GetStyle();
  for (int t = 0; t < n; ++t) {
    if (t > 0) same_line_if_fits(tab_width(titles[t]));
    const bool on = t == current;
    ImGui::PushStyleColor(ImGuiCol_Button, st.Colors[on ? ImGuiCol_TabActive : ImGuiCol_Tab]);
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, st.Colors[ImGuiCol_TabHovered]);
    if (ImGui::Button(titles[t])) current = t;
    note_item(std::string("tab ") + titles[t]);
    ImGui::PopStyleColor(2);
  }
  bool pressed = false;
  if (trailing) {
    same_line_if_fits(tab_width(trailing));
    pressed = ImGui::Button(trailing);
    if (tip && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  }
  ImGui::Separator();
  return pressed;
}

}  // namespace

bool titled_tabs(const char* id, const char* const* titles, int n, int& current, bool select, const char* trailing,
                 const char* tip) {
  const float gap = ImGui::GetStyle().ItemInnerSpacing.x;
  float need = trailing ? tab_width(trailing) + gap : 0.0f;
  for (int t = 0; t < n; ++t) need += tab_width(titles[t]) + gap;
  if (need <= ImGui::GetContentRegionAvail().x) return tab_bar(id, titles, n, current, select, trailing, tip);
  ImGui::PushID(id);
  const bool pressed = tab_buttons(titles, n, current, trailing, tip);
  ImGui::PopID();
  return pressed;
}

float labelled_width(float frame, const char* label) {
  return frame + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

bool begin_key_table(const char* id, const char* widest_key) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingFixedFit)) return false;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize(widest_key).x);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

void table_row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(value.c_str());
}

bool still_running(const void* result, const char* what) {
  if (result) return false;
  ImGui::TextDisabled("%s", what);
  return true;
}

// [SECTION] heatmap widget

namespace {

// Whether a value's cell is light (so its number is written in black).
bool light_cell(const Heatmap& hm, float v) {
  if (!std::isfinite(v)) return std::isinf(v);
  const float t = (v - hm.lo()) / (hm.hi() > hm.lo() ? hm.hi() - hm.lo() : 1.0f);
  if (hm.map() == Colormap::Viridis) return t > 0.55f;
  return std::fabs(t - 0.5f) < 0.32f;
}

// `text` cut to fit `max_w` at `size`, ending in "…" when cut (UTF-8 safe).
std::string fit_text(ImFont* font, float size, const std::string& text, float max_w) {
  if (font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x <= max_w) return text;
  std::string s = text;
  while (!s.empty()) {
    size_t cut = s.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a code point's start
    s.resize(cut);
    if (font->CalcTextSizeA(size, FLT_MAX, 0, (s + "…").c_str()).x <= max_w) return s + "…";
  }
  return "…";
}

}  // namespace

namespace {

HeatmapExport g_export;  // installed once by the app (set_heatmap_export)

// Where everything of one heatmap goes on screen: label gutters, the cell size, the image.
struct HeatmapLayout {
  ImFont* small = nullptr;
  float fs = 0;                // label font size
  float scale = 1;             // UI scale (font size / 16)
  float row_w = 0, col_w = 0;  // label gutters
  float cw = 0, ch = 0;        // cell width, height
  bool rotate = false;         // column labels written vertically
  ImVec2 p0, img0, img1;       // widget origin; image rectangle
};

// Gutters for labels: row labels on the left, column labels on top (rotated when narrow). A
// gutter takes at most a fifth of the room (longer labels are abbreviated with "…"), so that the
// cells, not the labels, get the space. Cell size: fit the region, bounded. Column labels are
// written horizontally when the cells can be made as wide as the widest label (cells may then be
// wider than tall, even when `square` is asked); otherwise they are rotated, which costs a taller
// gutter.
HeatmapLayout heatmap_layout(const Heatmap& hm, const HeatmapOpts& o) {
  HeatmapLayout L;
  L.scale = ImGui::GetFontSize() / 16.0f;
  L.small = o.fonts && o.fonts->small ? o.fonts->small : ImGui::GetFont();
  L.fs = L.small->FontSize;
  const float fs = L.fs;
  const int R = hm.rows(), C = hm.cols();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  if (o.max_size.x > 0) avail.x = std::min(avail.x, o.max_size.x);
  if (o.max_size.y > 0) avail.y = o.own_height ? o.max_size.y : std::min(avail.y, o.max_size.y);
  if (o.row_labels)
    for (auto& s : *o.row_labels) L.row_w = std::max(L.row_w, L.small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x);
  if (o.col_labels)
    for (auto& s : *o.col_labels) L.col_w = std::max(L.col_w, L.small->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x);
  L.row_w = std::min({L.row_w, 140.0f * L.scale, std::max(fs * 3, avail.x * 0.2f)});
  L.col_w = std::min({L.col_w, 140.0f * L.scale, std::max(fs * 3, avail.y * 0.2f)});
  const float title_h = (o.col_title || o.row_title) ? fs + 4 : 0;
  const float left = (o.row_labels ? L.row_w + 6 : 0) + (o.row_title ? fs + 4 : 0);

  const float cw_max = (avail.x - left - 2) / static_cast<float>(C);
  const float cell_cap = o.max_cell * L.scale;
  const float h_cap = o.max_cell_h > 0 ? o.max_cell_h : cell_cap;
  float top = o.col_labels ? fs + 6 : 0;
  L.ch = std::clamp((avail.y - top - title_h - 2) / static_cast<float>(R), o.min_cell, h_cap);
  L.cw = std::clamp(cw_max, o.min_cell, cell_cap);
  if (o.square) {
    const float sq = std::min(L.cw, L.ch);
    L.cw = o.col_labels ? std::min(L.cw, std::max(sq, L.col_w + 6)) : sq;
    L.ch = sq;
  }
  L.rotate = o.col_labels && L.cw < L.col_w + 4;
  if (L.rotate) {
    top = L.col_w + 6;
    L.ch = std::clamp((avail.y - top - title_h - 2) / static_cast<float>(R), o.min_cell, h_cap);
    if (o.square) L.cw = L.ch = std::min(std::clamp(cw_max, o.min_cell, cell_cap), L.ch);
  }
  L.p0 = ImGui::GetCursorScreenPos();
  L.img0 = ImVec2(L.p0.x + left, L.p0.y + title_h + top);
  L.img1 = ImVec2(L.img0.x + L.cw * C, L.img0.y + L.ch * R);
  return L;
}

// The labels' size along a row or column axis and how many cells apart they go: every cell in a
// size that fits it (down to half the label size); cells smaller than that get a label in the
// label size every label_stride cells, so that labels never run into one band.
struct AxisLabels {
  float size = 0;
  int stride = 1;
};
AxisLabels axis_labels(float cell, float fs) {
  if (cell * 0.92f >= fs * 0.5f) return {std::min(fs, cell * 0.92f), 1};
  return {fs, label_stride(cell, fs)};
}

// Axis titles and every label that fits (axis_labels): in a smaller size when the cells are
// smaller than the text, and abbreviated when longer than its gutter.
void draw_heatmap_labels(ImDrawList* dl, const HeatmapLayout& L, const Heatmap& hm, const HeatmapOpts& o) {
  const Palette& pal = palette();
  ImFont* small = L.small;
  const float fs = L.fs, cw = L.cw, ch = L.ch;
  const ImVec2 img0 = L.img0;
  if (o.col_title) dl->AddText(small, fs, ImVec2(img0.x, L.p0.y), pal.text_dim, o.col_title);
  if (o.row_title) text_rotated(dl, small, fs, ImVec2(L.p0.x, L.img1.y), pal.text_dim, o.row_title, -1.5707963f);
  if (o.row_labels) {
    const AxisLabels ax = axis_labels(ch, fs);
    const float lfs = ax.size;
    for (int r = 0; r < hm.rows() && r < static_cast<int>(o.row_labels->size()); r += ax.stride) {
      const std::string s = fit_text(small, lfs, (*o.row_labels)[static_cast<size_t>(r)], L.row_w);
      drawn_labels().note(s);
      const float w = small->CalcTextSizeA(lfs, FLT_MAX, 0, s.c_str()).x;
      const bool isnew = r >= o.new_row0 && r < o.new_row0 + o.new_rows;
      dl->AddText(small, lfs, ImVec2(img0.x - 6 - w, img0.y + ch * (r + 0.5f) - lfs * 0.5f),
                  isnew ? pal.highlight : pal.text, s.c_str());
    }
  }
  if (o.col_labels) {
    const AxisLabels ax = L.rotate ? axis_labels(cw, fs) : AxisLabels{fs, 1};
    const float lfs = ax.size;
    for (int c = 0; c < hm.cols() && c < static_cast<int>(o.col_labels->size()); c += ax.stride) {
      const std::string s = fit_text(small, lfs, (*o.col_labels)[static_cast<size_t>(c)], L.rotate ? L.col_w : cw);
      drawn_labels().note(s);
      const bool isnew = c >= o.new_col0 && c < o.new_col0 + o.new_cols;
      const ImU32 col = isnew ? pal.highlight : pal.text;
      if (L.rotate) {
        text_rotated(dl, small, lfs, ImVec2(img0.x + cw * (c + 0.5f) - lfs * 0.5f, img0.y - 4), col, s.c_str(),
                     -1.5707963f);
      } else {
        const float w = small->CalcTextSizeA(lfs, FLT_MAX, 0, s.c_str()).x;
        dl->AddText(small, lfs, ImVec2(img0.x + cw * (c + 0.5f) - w * 0.5f, img0.y - lfs - 3), col, s.c_str());
      }
    }
  }
}

// Numbers inside the cells when they fit: with the decimals asked for, else fewer, in the label
// size or down to three quarters of it.
void draw_heatmap_values(ImDrawList* dl, const HeatmapLayout& L, const Heatmap& hm, const HeatmapOpts& o) {
  const float fs = L.fs, cw = L.cw, ch = L.ch;
  if (!o.show_values || cw < fs * 1.2f || ch < fs * 0.7f) return;
  const int R = hm.rows(), C = hm.cols();
  ImFont* mono = L.small;
  const auto text_of = [&](float v, int decimals) {
    return (o.inf_text && std::isinf(v)) ? std::string(o.inf_text) : fmt_value(v, decimals);
  };
  int decimals = -1;
  float nfs = fs;
  for (float size : {fs, fs * 0.85f, fs * 0.75f}) {
    if (ch < size + 2) continue;
    for (int d = o.decimals; d >= std::min(o.decimals, 1) && decimals < 0; --d) {
      float widest = 0;
      for (int r = 0; r < R && widest + 4 <= cw; ++r)
        for (int c = 0; c < C; ++c)
          widest = std::max(widest, mono->CalcTextSizeA(size, FLT_MAX, 0, text_of(hm.at(r, c), d).c_str()).x);
      if (widest + 4 <= cw) decimals = d, nfs = size;
    }
    if (decimals >= 0) break;
  }
  if (decimals < 0) return;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const float v = hm.at(r, c);
      const std::string s = text_of(v, decimals);
      const ImVec2 ts = mono->CalcTextSizeA(nfs, FLT_MAX, 0, s.c_str());
      const ImVec2 tp(L.img0.x + cw * (c + 0.5f) - ts.x * 0.5f, L.img0.y + ch * (r + 0.5f) - ts.y * 0.5f);
      if (std::isinf(v)) {  // on the hatching: white text on a dark plate
        dl->AddRectFilled(ImVec2(tp.x - 3, tp.y), ImVec2(tp.x + ts.x + 3, tp.y + ts.y), IM_COL32(30, 30, 34, 235), 3);
        dl->AddText(mono, nfs, tp, IM_COL32(255, 255, 255, 255), s.c_str());
        continue;
      }
      const ImU32 tc = light_cell(hm, v) ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
      dl->AddText(mono, nfs, tp, tc, s.c_str());
    }
}

// Rows or columns new at this step, outlined.
void draw_heatmap_new_bands(ImDrawList* dl, const HeatmapLayout& L, const HeatmapOpts& o, float th) {
  const ImU32 hl = palette().highlight;
  if (o.new_rows > 0 && o.new_row0 >= 0)
    dl->AddRect(ImVec2(L.img0.x - 2, L.img0.y + L.ch * o.new_row0 - 1),
                ImVec2(L.img1.x + 2, L.img0.y + L.ch * (o.new_row0 + o.new_rows) + 1), hl, 0, 0, th);
  if (o.new_cols > 0 && o.new_col0 >= 0)
    dl->AddRect(ImVec2(L.img0.x + L.cw * o.new_col0 - 1, L.img0.y - 2),
                ImVec2(L.img0.x + L.cw * (o.new_col0 + o.new_cols) + 1, L.img1.y + 2), hl, 0, 0, th);
}

// The right-click menu of the last item: "Export heatmap as PNG", to the path the app gives for
// the widget's id, reported through the app's notifier.
void heatmap_export_menu(const char* id, const Heatmap& hm) {
  if (!g_export.path_for || !ImGui::BeginPopupContextItem()) return;
  if (ImGui::MenuItem("Export heatmap as PNG")) {
    std::string stem;
    for (const char* c = id; *c; ++c) stem += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '-';
    const std::string path = g_export.path_for("heatmap-" + stem);
    std::string err;
    const bool ok = hm.write_png(path, err);
    if (g_export.notify) g_export.notify(ok, ok ? "wrote " + path : err);
  }
  ImGui::EndPopup();
}

// The hovered cell (outlined in white) and the selected one (outlined in the highlight colour).
void heatmap_interaction(ImDrawList* dl, const HeatmapLayout& L, const Heatmap& hm, const HeatmapOpts& o, float th,
                         HeatmapHit& hit) {
  const int R = hm.rows(), C = hm.cols();
  const float cw = L.cw, ch = L.ch;
  const ImVec2 img0 = L.img0;
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    hit.col = std::clamp(static_cast<int>((m.x - img0.x) / cw), 0, C - 1);
    hit.row = std::clamp(static_cast<int>((m.y - img0.y) / ch), 0, R - 1);
    hit.hovered = true;
    hit.clicked = ImGui::IsItemClicked();
    dl->AddRect(ImVec2(img0.x + cw * hit.col, img0.y + ch * hit.row),
                ImVec2(img0.x + cw * (hit.col + 1), img0.y + ch * (hit.row + 1)), IM_COL32(255, 255, 255, 220), 0, 0,
                th);
  }
  if (o.sel_row >= 0 && o.sel_col >= 0 && o.sel_row < R && o.sel_col < C) {
    const ImVec2 a(img0.x + cw * o.sel_col, img0.y + ch * o.sel_row), b(a.x + cw, a.y + ch);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, th + 2);
    dl->AddRect(a, b, palette().highlight, 0, 0, th);
  }
}

}  // namespace

void set_heatmap_export(HeatmapExport e) { g_export = std::move(e); }

HeatmapHit heatmap_widget(const char* id, const Heatmap& hm, const HeatmapOpts& o) {
  HeatmapHit hit;
  if (hm.empty()) {
    ImGui::TextDisabled("(empty)");
    return hit;
  }
  const HeatmapLayout L = heatmap_layout(hm, o);
  hit.min = L.img0;
  hit.max = L.img1;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_heatmap_labels(dl, L, hm, o);
  dl->AddImage(hm.texture(), L.img0, L.img1);
  drawn_heatmaps().note(hm);
  dl->AddRect(ImVec2(L.img0.x - 1, L.img0.y - 1), ImVec2(L.img1.x + 1, L.img1.y + 1), palette().grid);
  draw_heatmap_values(dl, L, hm, o);
  const float th = std::max(2.0f, 2.0f * L.scale);
  draw_heatmap_new_bands(dl, L, o, th);

  ImGui::SetCursorScreenPos(L.img0);
  ImGui::InvisibleButton(id, ImVec2(std::max(1.0f, L.cw * hm.cols()), std::max(1.0f, L.ch * hm.rows())));
  heatmap_export_menu(id, hm);
  heatmap_interaction(dl, L, hm, o, th, hit);
  // Leave the cursor under the whole widget.
  ImGui::SetCursorScreenPos(ImVec2(L.p0.x, L.img1.y + 4));
  ImGui::Dummy(ImVec2(L.img1.x - L.p0.x, 0));
  return hit;
}

// [SECTION] colour bar

void colour_bar(Heatmap& bar, Colormap map, float lo, float hi, float width, const char* label) {
  float ramp[64];
  for (int i = 0; i < 64; ++i) ramp[i] = lo + (hi - lo) * static_cast<float>(i) / 63.0f;
  bar.update(ramp, 1, 64, mix_key(static_cast<uint64_t>(map), 7), map, lo, hi, 64);
  const float h = ImGui::GetFontSize() * 0.7f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (label) {
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
  }
  const ImVec2 q = ImGui::GetCursorScreenPos();
  const float y = label ? q.y + (ImGui::GetTextLineHeight() - h) * 0.5f : p.y;
  dl->AddImage(bar.texture(), ImVec2(q.x, y), ImVec2(q.x + width, y + h));
  dl->AddRect(ImVec2(q.x, y), ImVec2(q.x + width, y + h), palette().grid);
  ImGui::Dummy(ImVec2(width, ImGui::GetTextLineHeight()));
  ImGui::SameLine();
  ImGui::Text("%s … %s", fmt_value(lo, 2).c_str(), fmt_value(hi, 2).c_str());
}

// [SECTION] token chips

bool token_chip(const Fonts& f, const std::string& text, int id, ChipKind kind, bool highlighted) {
  const Palette& pal = palette();
  ImFont* small = f.small ? f.small : ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
  char idb[16];
  std::snprintf(idb, sizeof idb, "%d", id);
  const ImVec2 is = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0, idb);
  const float pad = fs * 0.35f;
  const ImVec2 size(std::max(ts.x, is.x) + 2 * pad, ts.y + is.y + pad * 1.2f);
  if (ImGui::GetContentRegionAvail().x < size.x && ImGui::GetCursorPosX() > ImGui::GetStyle().WindowPadding.x + 1)
    ImGui::NewLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::PushID(id * 7919 + static_cast<int>(ImGui::GetCursorPosX()));
  const bool clicked = ImGui::InvisibleButton("chip", size);
  ImGui::PopID();
  // A chip scrolled out of view keeps its place in the flow but draws nothing: a long prompt's
  // chips would otherwise all reach the rasteriser every frame, clipped only there.
  if (!ImGui::IsItemVisible()) {
    ImGui::SameLine(0, fs * 0.3f);
    return clicked;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 bg = kind == ChipKind::Unknown   ? pal.chip_unk
                   : kind == ChipKind::Special ? pal.chip_special
                   : kind == ChipKind::Chosen  ? pal.stage_done
                                               : pal.chip;
  dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), bg, fs * 0.3f);
  if (highlighted || kind == ChipKind::Unknown)
    dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), kind == ChipKind::Unknown ? pal.error : pal.highlight, fs * 0.3f,
                0, 2.0f);
  dl->AddText(ImVec2(p.x + (size.x - ts.x) * 0.5f, p.y + pad * 0.5f), pal.text, text.c_str());
  dl->AddText(small, small->FontSize, ImVec2(p.x + (size.x - is.x) * 0.5f, p.y + pad * 0.5f + ts.y), pal.text_dim, idb);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("token '%s'  id %d", text.c_str(), id);
    if (kind == ChipKind::Unknown) ImGui::TextUnformatted("not in the vocabulary: read as <unk>");
    ImGui::EndTooltip();
  }
  ImGui::SameLine(0, fs * 0.3f);
  return clicked;
}

// [SECTION] line plot

void line_plot(const char* id, const std::vector<Series>& series, const std::vector<std::string>* xlabels, ImVec2 size,
               const Fonts& f, const char* y_label, bool zero_line, const char* x_name) {
  const Palette& pal = palette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* small = f.small ? f.small : ImGui::GetFont();
  const float fs = small->FontSize;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  note_item(std::string("plot ") + id);
  const bool hovered = ImGui::IsItemHovered();
  size_t n = 0;
  float lo = INFINITY, hi = -INFINITY;
  for (auto& s : series) {
    n = std::max(n, s.y->size());
    for (float v : *s.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (n == 0 || lo > hi) {
    dl->AddText(p0, pal.text_dim, "(no data yet)");
    return;
  }
  if (zero_line) lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
  if (hi - lo < 1e-6f) hi = lo + 1;
  const float pad = (hi - lo) * 0.08f;
  lo -= pad, hi += pad;
  const float left = small->CalcTextSizeA(fs, FLT_MAX, 0, "−000.00").x + 4;
  const float bottom = xlabels ? fs + 4 : 2;
  // The legend sits above the axes (never over the curves): right of the y label when both fit on
  // one line, else on a line of its own.
  float legend_w = 0;
  for (auto& s : series) legend_w += small->CalcTextSizeA(fs, FLT_MAX, 0, s.name).x + fs * 2;
  const float label_w = y_label ? small->CalcTextSizeA(fs, FLT_MAX, 0, y_label).x + fs : 0;
  const bool legend_own_line = y_label && label_w + legend_w > size.x - left;
  const float head = (y_label || !series.empty() ? fs + 2 : 2) + (legend_own_line ? fs + 2 : 0);
  const ImVec2 a(p0.x + left, p0.y + head), b(p0.x + size.x - 4, p0.y + size.y - bottom);
  dl->AddRectFilled(a, b, IM_COL32(128, 128, 128, 24));
  dl->AddRect(a, b, pal.grid);
  if (y_label) dl->AddText(small, fs, ImVec2(a.x, p0.y), pal.text_dim, y_label);
  const auto X = [&](size_t i) {
    return n == 1 ? (a.x + b.x) * 0.5f : a.x + (b.x - a.x) * (static_cast<float>(i) + 0.5f) / static_cast<float>(n);
  };
  const auto Y = [&](float v) { return b.y - (b.y - a.y) * (v - lo) / (hi - lo); };
  for (float v : {lo + pad, hi - pad}) {
    const std::string s = fmt_value(v, 2);
    dl->AddText(small, fs, ImVec2(p0.x, Y(v) - fs * 0.5f), pal.text_dim, s.c_str());
  }
  if (zero_line && lo < 0 && hi > 0) dl->AddLine(ImVec2(a.x, Y(0)), ImVec2(b.x, Y(0)), pal.grid);
  const float thick = std::max(1.5f, ImGui::GetFontSize() / 9.0f);
  for (auto& s : series) {
    for (size_t i = 0; i < s.y->size(); ++i) {
      const float v = (*s.y)[i];
      if (!std::isfinite(v)) continue;
      if (i + 1 < s.y->size() && std::isfinite((*s.y)[i + 1]))
        dl->AddLine(ImVec2(X(i), Y(v)), ImVec2(X(i + 1), Y((*s.y)[i + 1])), s.colour, thick);
      dl->AddCircleFilled(ImVec2(X(i), Y(v)), thick * 1.6f, s.colour);
    }
  }
  if (xlabels) {
    const float slot = (b.x - a.x) / static_cast<float>(n);
    float widest = 0;
    for (auto& l : *xlabels) widest = std::max(widest, small->CalcTextSizeA(fs, FLT_MAX, 0, l.c_str()).x);
    const size_t every = slot_label_step(slot, widest + 4, n);
    for (size_t i = 0; i < xlabels->size() && i < n; i += every) {
      const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, (*xlabels)[i].c_str()).x;
      dl->AddText(small, fs, ImVec2(X(i) - w * 0.5f, b.y + 2), pal.text_dim, (*xlabels)[i].c_str());
    }
  }
  if (hovered) {
    const float mx = ImGui::GetIO().MousePos.x;
    const size_t i =
        std::min(n - 1, static_cast<size_t>(std::max(0.0f, (mx - a.x) / (b.x - a.x) * static_cast<float>(n))));
    dl->AddLine(ImVec2(X(i), a.y), ImVec2(X(i), b.y), pal.text_dim);
    ImGui::BeginTooltip();
    if (xlabels && i < xlabels->size()) {
      const std::string title = std::string(x_name) + " " + std::to_string(i) + "  '" + (*xlabels)[i] + "'";
      ImGui::TextUnformatted(title.c_str());
      note_item("tooltip " + title);
    }
    for (auto& s : series)
      if (i < s.y->size()) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(s.colour), "■");
        ImGui::SameLine();
        ImGui::Text("%s = %s", s.name, fmt_value((*s.y)[i], 4).c_str());
      }
    ImGui::EndTooltip();
  }
  // Legend.
  float x = legend_own_line ? a.x : std::max(a.x + label_w, b.x - legend_w + fs);
  const float ly = legend_own_line ? p0.y + fs + 2 : p0.y;
  for (auto& s : series) {
    const float w = small->CalcTextSizeA(fs, FLT_MAX, 0, s.name).x;
    dl->AddRectFilled(ImVec2(x, ly + 3), ImVec2(x + fs * 0.7f, ly + 3 + fs * 0.7f), s.colour);
    dl->AddText(small, fs, ImVec2(x + fs, ly), pal.text, s.name);
    x += w + fs * 2;
  }
}

}  // namespace sf::gui
