// app_layout.cpp — where the panels go: the default and presentation layouts, drawing every open
// panel (with its title-bar menu), and the "No model loaded" window.
#include "app.h"

#include <string>
#include <utility>
#include <vector>

#include "gfx/imgui_math.h"
#include "widgets.h"

namespace sf::gui {

ImVec4 App::panel_rect(const Panel& p) const {
  if (bench_layout_ && std::string(p.key()) == "attention") return ImVec4(0, 0, 1, 1);
  if (const auto it = lesson_layout_.find(p.key()); it != lesson_layout_.end()) return it->second;
  if (ui_.presentation) {
    const std::string k = p.key();
    if (k == "stepper") return ImVec4(0.0f, 0.0f, 1.0f, 0.47f);
    if (k == "attention") return ImVec4(0.0f, 0.47f, 0.63f, 0.53f);
    if (k == "output") return ImVec4(0.63f, 0.47f, 0.37f, 0.53f);
    return ImVec4(0.12f, 0.10f, 0.76f, 0.80f);  // any other panel opened during the lecture
  }
  return p.default_rect();
}

void App::draw_no_model() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.45f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0));
  if (!no_model_focused_) ImGui::SetNextWindowFocus();  // in front of the panels when it appears
  no_model_focused_ = true;
  ImGui::Begin("No model loaded", nullptr,
               ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_AlwaysAutoResize);
  ImGui::PushFont(fonts_.big);
  ImGui::TextUnformatted("No model loaded");
  ImGui::PopFont();
  ImGui::TextWrapped(
      "No shipped model was found in assets/models/ (copy-preln.safetensors, reverse-preln.safetensors, …). "
      "Open a .safetensors model in the \"Model & input\" panel, or create one with\n"
      "  stepformer init --config C.json --seed 1 --out M.safetensors");
  for (auto it = snap_->log.rbegin(); it != snap_->log.rend(); ++it)
    if (it->level == Message::Error) {
      text_coloured_wrapped(palette().error, it->text.c_str());
      break;
    }
  if (ImGui::Button("Open the Model & input panel")) show_panel(find_panel("model"));
  ImGui::End();
}

void App::draw_panels() {
  // The work area between the menu bar and the status bar (computed here: ImGui updates the
  // viewport's work area only a frame after the menu bar first appears).
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight() + 4, menu_h = ImGui::GetFrameHeight();
  const ImVec2 wp(vp->Pos.x, vp->Pos.y + menu_h), ws(vp->Size.x, vp->Size.y - menu_h - status_h);
  Ctx ctx{*snap_, ui_, *worker_, fonts_, *this};
  // A panel that overlaps no other window leaves its background to glClear (same colour): under
  // a software rasteriser (Mesa llvmpipe) blending every window's full background costs ~40% of
  // the frame. Overlapping panels (decided from the last frame) keep an opaque background.
  std::vector<std::pair<std::string, ImRect>> others;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (w->WasActive && !w->Hidden && !(w->Flags & (ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip)) &&
        std::string(w->Name) != "##status" && std::string(w->Name) != "##MainMenuBar")
      others.push_back({w->Name, w->Rect()});
  const auto alone = [&](const Panel& p) {
    if (layout_reset_ > 0 || frame_ < 3 || p.size.x <= 0) return false;
    const ImRect r(p.pos, p.pos + p.size);
    bool seen = false;
    for (const auto& [name, o] : others) {
      if (name == p.title()) {
        seen = true;
        continue;
      }
      if (o.Overlaps(r)) return false;
    }
    return seen;  // a panel that just appeared draws its background until it has been laid out
  };
  // Which panels are open is remembered with the layout.
  std::string open_now;
  for (auto& p : panels_) open_now += p->open ? '1' : '0';
  if (open_now != open_before_) {
    if (!open_before_.empty()) ImGui::MarkIniSettingsDirty();
    open_before_ = open_now;
  }
  for (auto& p : panels_) {
    if (!p->open) continue;
    const ImVec4 r = panel_rect(*p);
    const ImGuiCond cond = layout_reset_ > 0 ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(ImVec2(wp.x + r.x * ws.x, wp.y + r.y * ws.y), cond);
    ImGui::SetNextWindowSize(ImVec2(r.z * ws.x, r.w * ws.y), cond);
    if (alone(*p)) ImGui::SetNextWindowBgAlpha(0.0f);
    if (!ImGui::Begin(p->title(), &p->open)) {
      ImGui::End();
      continue;
    }
    // Right-click on the title bar: export this panel.
    if (ImGui::BeginPopupContextItem("panel menu")) {
      if (ImGui::MenuItem("Export panel as PNG")) request_panel_png(p.get(), default_export_path(p->key(), ".png"));
      if (ImGui::MenuItem("Export heatmap as PNG")) {
        std::string e, path = default_export_path(std::string(p->key()) + "-heatmap", ".png");
        if (p->export_heatmap(path, e))
          notify(Message::Info, "wrote " + path);
        else
          notify(Message::Error, e);
      }
      if (ImGui::MenuItem("Hide")) p->open = false;
      ImGui::EndPopup();
    }
    p->pos = ImGui::GetWindowPos();
    p->size = ImGui::GetWindowSize();
    p->heat_rect = p->mark_rect = ImVec4(0, 0, 0, 0);
    if (p->ready(ctx.snap)) p->Draw(ctx);
    ImGui::End();
  }
}

}  // namespace sf::gui
