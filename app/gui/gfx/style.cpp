#include "gfx/style.h"

#include "paths.h"

namespace sf::gui {

namespace {

Palette g_palette;

// Glyphs the panels use: Latin, Greek (ω, φ, σ, μ, ε), super/subscripts (ᵀ, ², ₖ), arrows, math
// operators (√, ·, −, ∞, ≤, ×, ÷, ∑), box and geometric shapes (▶, ■, ●), dingbats (✖, ✓),
// combining marks (x̂).
const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0100, 0x024F, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000,
                           0x206F, 0x2070, 0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2300, 0x23FF, 0x2400, 0x243F,
                           0x2500, 0x25FF, 0x2600, 0x26FF, 0x2700, 0x27BF, 0x2C60, 0x2C7F, 0};

}  // namespace

void build_fonts(Fonts& f, float px) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* bold = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  f.size = px;
  // ImGui asserts (aborts) on a missing font file: check first, fall back to the built-in font.
  f.from_files = file_exists(sans) && file_exists(bold) && file_exists(mono);
  if (f.from_files) {
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    f.ui = io.Fonts->AddFontFromFileTTF(sans, px, &cfg, kRanges);
    f.bold = io.Fonts->AddFontFromFileTTF(bold, px, &cfg, kRanges);
    f.mono = io.Fonts->AddFontFromFileTTF(mono, px, &cfg, kRanges);
    f.small = io.Fonts->AddFontFromFileTTF(sans, px * 0.8f, &cfg, kRanges);
    f.big = io.Fonts->AddFontFromFileTTF(bold, px * 1.5f, &cfg, kRanges);
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = px;
    f.ui = f.bold = f.mono = f.big = io.Fonts->AddFontDefault(&cfg);
    ImFontConfig small;
    small.SizePixels = px * 0.8f;
    f.small = io.Fonts->AddFontDefault(&small);
  }
  io.Fonts->Build();
}

void apply_style(Theme theme, float scale) {
  ImGuiStyle st;
  Palette& p = g_palette;
  if (theme == Theme::Dark) {
    ImGui::StyleColorsDark(&st);
    st.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
    st.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.16f, 0.29f, 0.48f, 1.0f);
    p.text = IM_COL32(235, 235, 235, 255);
    p.text_dim = IM_COL32(150, 155, 165, 255);
    p.accent = IM_COL32(255, 196, 61, 255);
    p.accent2 = IM_COL32(90, 170, 255, 255);
    p.stage_done = IM_COL32(52, 92, 140, 255);
    p.stage_now = IM_COL32(255, 196, 61, 255);
    p.stage_todo = IM_COL32(48, 52, 60, 255);
    p.box_border = IM_COL32(170, 175, 185, 255);
    p.warn = IM_COL32(255, 190, 70, 255);
    p.error = IM_COL32(255, 95, 95, 255);
    p.ok = IM_COL32(110, 210, 120, 255);
    p.chip = IM_COL32(50, 70, 100, 255);
    p.chip_unk = IM_COL32(150, 40, 40, 255);
    p.chip_special = IM_COL32(70, 70, 80, 255);
    p.highlight = IM_COL32(255, 196, 61, 255);
    p.grid = IM_COL32(80, 85, 95, 255);
  } else {
    ImGui::StyleColorsLight(&st);
    st.Colors[ImGuiCol_WindowBg] = ImVec4(1, 1, 1, 1);
    st.Colors[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
    st.Colors[ImGuiCol_Border] = ImVec4(0, 0, 0, 0.6f);
    st.Colors[ImGuiCol_TitleBg] = ImVec4(0.80f, 0.84f, 0.90f, 1);
    st.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.55f, 0.70f, 0.92f, 1);
    st.Colors[ImGuiCol_FrameBg] = ImVec4(0.90f, 0.90f, 0.92f, 1);
    st.WindowBorderSize = 2;
    st.FrameBorderSize = 1;
    p.text = IM_COL32(0, 0, 0, 255);
    p.text_dim = IM_COL32(70, 70, 80, 255);
    p.accent = IM_COL32(200, 80, 0, 255);
    p.accent2 = IM_COL32(0, 80, 200, 255);
    p.stage_done = IM_COL32(150, 185, 235, 255);
    p.stage_now = IM_COL32(255, 170, 0, 255);
    p.stage_todo = IM_COL32(235, 235, 238, 255);
    p.box_border = IM_COL32(0, 0, 0, 255);
    p.warn = IM_COL32(170, 90, 0, 255);
    p.error = IM_COL32(200, 0, 0, 255);
    p.ok = IM_COL32(0, 130, 40, 255);
    p.chip = IM_COL32(200, 220, 250, 255);
    p.chip_unk = IM_COL32(255, 170, 170, 255);
    p.chip_special = IM_COL32(220, 220, 220, 255);
    p.highlight = IM_COL32(230, 100, 0, 255);
    p.grid = IM_COL32(160, 160, 170, 255);
  }
  st.WindowRounding = 4;
  st.FrameRounding = 3;
  st.GrabRounding = 3;
  st.WindowPadding = ImVec2(10, 8);
  st.ItemSpacing = ImVec2(8, 6);
  st.ScaleAllSizes(scale);
  ImGui::GetStyle() = st;
}

const Palette& palette() { return g_palette; }

ImU32 head_colour(int head, float alpha) {
  // Tableau-like qualitative palette, readable on dark and light backgrounds.
  static const unsigned char c[16][3] = {{31, 119, 180},  {255, 127, 14},  {44, 160, 44},   {214, 39, 40},
                                         {148, 103, 189}, {140, 86, 75},   {227, 119, 194}, {127, 127, 127},
                                         {188, 189, 34},  {23, 190, 207},  {174, 199, 232}, {255, 187, 120},
                                         {152, 223, 138}, {255, 152, 150}, {197, 176, 213}, {196, 156, 148}};
  const auto& k = c[static_cast<unsigned>(head) % 16];
  return IM_COL32(k[0], k[1], k[2], static_cast<int>(alpha * 255));
}

}  // namespace sf::gui
