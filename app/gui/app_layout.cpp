// app_layout.cpp — where the panels go: the default and presentation layouts, drawing every open
// panel (with its title-bar menu), and the "No model loaded" window.
#include "app.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gfx/imgui_math.h"
#include "layout.h"
#include "widgets.h"

namespace sf::gui {

std::vector<ImVec4> App::panel_rects() const {
  std::vector<std::string> keys;
  for (auto& p : panels_)
    if (p->open) keys.push_back(p->key());
  if (bench_layout_ && keys == std::vector<std::string>{"attention"}) return {ImVec4(0, 0, 1, 1)};
  // A lesson's `layout` places its panels itself while only they are open.
  if (!lesson_layout_.empty() &&
      std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return lesson_layout_.count(k) > 0; })) {
    // The caption band fits its text (fit_caption); the rows below it are scaled to the rest.
    const float planned = lesson_layout_.at("caption").w;
    const float cap = caption_fit_ > 0 ? std::min(caption_fit_, planned) : planned;
    std::vector<ImVec4> out;
    for (const std::string& k : keys) {
      ImVec4 r = lesson_layout_.at(k);
      if (k == "caption") {
        r.w = cap;
      } else {
        const float f = (1.0f - cap) / (1.0f - planned);
        r.y = cap + (r.y - planned) * f;
        r.w *= f;
      }
      out.push_back(r);
    }
    return out;
  }
  // An arranged row (arrange_panels) holds while the same panels are open.
  if (!arranged_.empty()) {
    std::vector<std::string> sorted_keys = keys, sorted_row = arranged_;
    std::sort(sorted_keys.begin(), sorted_keys.end());
    std::sort(sorted_row.begin(), sorted_row.end());
    if (sorted_keys == sorted_row) {
      const std::vector<ImVec4> row = tile_panels(arranged_, ui_.presentation, true);
      std::vector<ImVec4> out;
      for (const std::string& k : keys)
        out.push_back(row[static_cast<size_t>(std::find(arranged_.begin(), arranged_.end(), k) - arranged_.begin())]);
      return out;
    }
  }
  return tile_panels(keys, ui_.presentation);
}

void App::arrange_panels(const std::vector<std::string>& row) {
  for (auto& p : panels_) p->open = std::find(row.begin(), row.end(), p->key()) != row.end();
  arranged_.clear();
  for (const std::string& k : row)
    if (find_panel(k) && std::find(arranged_.begin(), arranged_.end(), k) == arranged_.end()) arranged_.push_back(k);
  reset_layout();
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

namespace {

// The windows drawn last frame, by name, apart from child windows, tooltips, the status and menu bars.
std::vector<std::pair<std::string, ImRect>> other_windows() {
  std::vector<std::pair<std::string, ImRect>> others;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (w->WasActive && !w->Hidden && !(w->Flags & (ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip)) &&
        std::string(w->Name) != "##status" && std::string(w->Name) != "##MainMenuBar")
      others.push_back({w->Name, w->Rect()});
  return others;
}

// A panel that overlapped no other window last frame (a panel that just appeared draws its
// background until it has been laid out).
bool drawn_alone(const Panel& p, const std::vector<std::pair<std::string, ImRect>>& others) {
  const ImRect r(p.pos, p.pos + p.size);
  bool seen = false;
  for (const auto& [name, o] : others) {
    if (name == p.title()) {
      seen = true;
      continue;
    }
    if (o.Overlaps(r)) return false;
  }
  return seen;
}

}  // namespace

// On a projector the row below the stepper holds two panels: a third one opened takes the place
// of the one opened longest ago (as a tab would), so no panel is squeezed unreadable.
void App::keep_two_on_a_projector() {
  for (;;) {
    std::vector<size_t> row;
    for (size_t i = 0; i < panels_.size(); ++i)
      if (panels_[i]->open && std::string(panels_[i]->key()) != "stepper") row.push_back(i);
    if (row.size() <= 2) break;
    size_t oldest = row.front();
    for (size_t i : row)
      if (opened_at_[i] < opened_at_[oldest] || (opened_at_[i] == opened_at_[oldest] && i > oldest)) oldest = i;
    panels_[oldest]->open = false;
  }
}

// Which panels are open is remembered with the layout. Opening or closing one lays the open
// panels out again, side by side (layout.h): a panel never opens on top of another. A lesson's
// caption band follows its text's height (measured last frame).
bool App::update_open_panels(float work_h) {
  std::string open_now;
  for (auto& p : panels_) open_now += p->open ? '1' : '0';
  if (open_now != open_before_ && !open_before_.empty()) {
    opened_at_.resize(panels_.size(), 0);
    std::vector<std::string> keys;
    for (auto& p : panels_)
      if (p->open) keys.push_back(p->key());
    std::vector<std::string> row = arranged_;
    std::sort(keys.begin(), keys.end());
    std::sort(row.begin(), row.end());
    if (keys != row) arranged_.clear();  // a panel opened or closed since: the usual layout
    for (size_t i = 0; i < panels_.size(); ++i)
      if (open_now[i] == '1' && open_before_[i] == '0') opened_at_[i] = ++open_count_;
    // An arranged row (arrange_panels) and a lesson's layout are left as they were asked for.
    if (ui_.presentation && arranged_.empty() && lesson_layout_.empty()) {
      keep_two_on_a_projector();
      open_now.clear();
      for (auto& p : panels_) open_now += p->open ? '1' : '0';
    }
  }
  bool retile = layout_reset_ > 0;
  if (!lesson_layout_.empty() && caption_px_ > 0 && work_h > 0) {
    const float fit = std::max(caption_px_ / work_h, 0.08f);
    if (std::abs(fit - caption_fit_) * work_h > 2.0f) caption_fit_ = fit, retile = true;
  }
  if (open_now != open_before_) {
    if (!open_before_.empty()) ImGui::MarkIniSettingsDirty(), retile = true;
    open_before_ = open_now;
  }
  return retile;
}

void App::panel_menu(Panel& p) {
  if (ImGui::BeginPopupContextItem("panel menu")) {
    if (ImGui::MenuItem("Export panel as PNG")) request_panel_png(&p, default_export_path(p.key(), ".png"));
    if (ImGui::MenuItem("Export heatmap as PNG")) {
      std::string e, path = default_export_path(std::string(p.key()) + "-heatmap", ".png");
      if (p.export_heatmap(path, e))
        notify(Message::Info, "wrote " + path);
      else
        notify(Message::Error, e);
    }
    if (ImGui::MenuItem("Hide")) p.open = false;
    ImGui::EndPopup();
  }
}

void App::draw_panels() {
  // The work area between the menu bar and the status bar (computed here: ImGui updates the
  // viewport's work area only a frame after the menu bar first appears).
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight() + 4, menu_h = ImGui::GetFrameHeight();
  const ImVec2 wp(vp->Pos.x, vp->Pos.y + menu_h), ws(vp->Size.x, vp->Size.y - menu_h - status_h);
  Ctx ctx{*snap_, ui_, *worker_, fonts_, *this};
  // A panel that overlaps no other window leaves its background to glClear (same colour): under
  // a software rasteriser (Mesa llvmpipe) blending every window's full background is a large part
  // of the frame. Overlapping panels (decided from the last frame) keep an opaque background.
  const std::vector<std::pair<std::string, ImRect>> others = other_windows();
  const auto alone = [&](const Panel& p) {
    return !(layout_reset_ > 0 || frame_ < 3 || p.size.x <= 0) && drawn_alone(p, others);
  };
  const bool retile = update_open_panels(ws.y);
  if (retile && layout_reset_ == 0) layout_reset_ = 1;  // this frame and the flag's usual countdown
  const std::vector<ImVec4> rects = panel_rects();
  size_t open_index = 0;
  for (auto& p : panels_) {
    if (!p->open) continue;
    const ImVec4 r = rects[open_index++];
    const ImGuiCond cond = retile ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(ImVec2(wp.x + r.x * ws.x, wp.y + r.y * ws.y), cond);
    ImGui::SetNextWindowSize(ImVec2(r.z * ws.x, r.w * ws.y), cond);
    if (alone(*p)) ImGui::SetNextWindowBgAlpha(0.0f);
    if (!ImGui::Begin(p->title(), &p->open)) {
      ImGui::End();
      continue;
    }
    panel_menu(*p);  // right-click on the title bar: export or hide this panel
    p->pos = ImGui::GetWindowPos();
    p->size = ImGui::GetWindowSize();
    p->heat_rect = p->mark_rect = ImVec4(0, 0, 0, 0);
    // A frame about to be captured records the labels each panel draws (the screenshot's JSON).
    drawn_labels() = DrawnLabels{!shot_path_.empty(), {}};
    drawn_boxes() = DrawnBoxes{};
    if (p->ready(ctx.snap)) p->Draw(ctx);
    p->labels = std::move(drawn_labels().text);
    p->boxes = std::move(drawn_boxes().list);
    p->box_edges = std::move(drawn_boxes().edges);
    drawn_labels() = DrawnLabels{};
    drawn_boxes() = DrawnBoxes{};
    ImGui::End();
  }
}

}  // namespace sf::gui
