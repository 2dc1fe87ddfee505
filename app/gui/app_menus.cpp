// app_menus.cpp — the menu bar (File, View, Help, the stepper's position) and the two windows it
// opens: "Keyboard and about" and "Export recording".
#include "app.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "widgets.h"

namespace sf::gui {

// The menu bar records its boxes (DrawnBoxes) like a panel: each menu's title, and each item of an
// open menu as "MENU > ITEM", so that the GUI tests can open a menu (`click menu View`) and read
// what it lists.
void App::menu_bar() {
  drawn_boxes() = DrawnBoxes{};
  if (ImGui::BeginMainMenuBar()) {
    file_menu();
    view_menu();
    lessons_menu();
    const bool help = ImGui::BeginMenu("Help");
    note_item("Help");
    if (help) {
      ImGui::MenuItem("Keyboard and about", nullptr, &show_about_);
      note_item("Help > Keyboard and about");
      ImGui::EndMenu();
    }
    stepper_position();
    ImGui::EndMainMenuBar();
  }
  menu_boxes_ = std::move(drawn_boxes().list);
  drawn_boxes() = DrawnBoxes{};

  if (show_about_) about_window();
  lesson_open_window();
  if (show_export_) export_window();
}

void App::file_menu() {
  const bool open = ImGui::BeginMenu("File");
  note_item("File");
  if (open) {
    if (ImGui::MenuItem("Open model…")) show_panel(find_panel("model"));
    if (ImGui::MenuItem("Export recording…")) {
      show_export_ = true;
      std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".safetensors").c_str());
    }
    if (ImGui::MenuItem("Screenshot (whole window)")) {
      const std::string p = default_export_path("window", ".png");
      request_screenshot(p);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit(0);
    ImGui::EndMenu();
  }
}

void App::view_menu() {
  const bool open = ImGui::BeginMenu("View");
  note_item("View");
  if (open) {
    const auto item = [](const char* label, const char* shortcut, bool* selected) {
      const bool r = ImGui::MenuItem(label, shortcut, selected);
      note_item(std::string("View > ") + label);
      return r;
    };
    for (auto& p : panels_) {
      bool o = p->open;
      if (item(p->title(), nullptr, &o)) {
        if (o)
          show_panel(p.get());
        else
          p->open = false;
      }
    }
    ImGui::Separator();
    if (item("Show all panels", nullptr, nullptr))
      for (auto& p : panels_) p->open = true;
    if (item("Reset layout", nullptr, nullptr)) {
      for (auto& p : panels_) p->open = p->default_open();
      reset_layout();
    }
    ImGui::Separator();
    bool pres = ui_.presentation;
    if (item("Presentation mode", "F11", &pres)) set_presentation(pres);
    float s = ui_.scale;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::SliderFloat("UI scale", &s, 0.75f, 3.0f, "%.2f×")) set_scale(std::round(s * 4) / 4);
    note_item("View > UI scale");
    item("Message log", nullptr, &show_log_);
    ImGui::EndMenu();
  }
}

void App::stepper_position() {
  if (snap_->ok()) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 2);
    ImGui::TextDisabled("%s", snap_->model_name.c_str());
    ImGui::SameLine(0, ImGui::GetFontSize());
    ImGui::PushStyleColor(ImGuiCol_Text, palette().accent);
    ImGui::Text("stage %d/%d%s  ·  %s", snap_->cursor + 1, static_cast<int>(snap_->stages.size()),
                snap_->session->finished() ? "" : "+", snap_->stage.title.c_str());
    ImGui::PopStyleColor();
  }
  if (ui_.playing) {
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::GetFontSize() * 6);
    ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "▶ playing");
  }
}

void App::about_window() {
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Keyboard and about", &show_about_)) {
    heading(fonts_, "Keyboard");
    ImGui::TextUnformatted(
        "Space        play / pause\n"
        "→ / ←        one stage forward / back\n"
        "↓ / ↑        next / previous token (also Ctrl+→ / Ctrl+←, PgDn / PgUp)\n"
        "Home / End   first stage / decode to the end\n"
        "F11          presentation mode (large text, high contrast)\n"
        "Ctrl + / −   UI scale;  Ctrl 0 resets it");
    ImGui::Separator();
    ImGui::TextWrapped(
        "stepformer steps through a Transformer one stage at a time. Every number shown is read from the "
        "recording of the run: hover any heatmap cell for its value and the formula that produced it. "
        "Right-click a panel's title bar to export it as PNG.");
  }
  ImGui::End();
}

void App::export_window() {
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Export recording", &show_export_)) {
    ImGui::TextWrapped(
        "The whole recording (encoder and every decoder step) as named tensors. The extension "
        "chooses the format: .safetensors (one file), .npy (a folder of .npy files), .csv (a folder "
        "of CSV files, one per head for attention maps).");
    ImGui::SetNextItemWidth(-1);
    ImGui::InputText("##path", export_path_, sizeof export_path_);
    if (ImGui::Button("Export")) {
      std::string e;
      if (export_recording(export_path_, e)) {
        notify(Message::Info, std::string("exported the recording to ") + export_path_);
        show_export_ = false;
      } else {
        notify(Message::Error, e);
      }
    }
    ImGui::SameLine();
    if (ImGui::Button(".safetensors"))
      std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".safetensors").c_str());
    ImGui::SameLine();
    if (ImGui::Button(".npy"))
      std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".npy").c_str());
    ImGui::SameLine();
    if (ImGui::Button(".csv"))
      std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".csv").c_str());
  }
  ImGui::End();
}

}  // namespace sf::gui
