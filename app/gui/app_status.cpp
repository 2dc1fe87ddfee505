// app_status.cpp — the status bar (the newest or most severe message, "working…") and the message
// log window.
#include "app.h"

#include <cstdio>
#include <vector>

#include "widgets.h"

namespace sf::gui {

void App::notify(Message::Level level, const std::string& text) {
  ui_log_.push_back({level, text, 0});
  status_text_ = text;
  status_level_ = level;
  status_time_ = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.001;
  if (opt_.headless() || !opt_.script.empty() || !opt_.lesson.empty())
    std::fprintf(stderr, "%s%s\n",
                 level == Message::Error     ? "error: "
                 : level == Message::Warning ? "warning: "
                                             : "",
                 text.c_str());
}

void App::status_bar() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float h = ImGui::GetFrameHeight() + 4;
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x, vp->WorkPos.y + vp->WorkSize.y - h));
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x, h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8, 2));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("##status", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoBringToFrontOnFocus);
  const Palette& pal = palette();
  if (ImGui::SmallButton("Log")) show_log_ = !show_log_;
  ImGui::SameLine();
  if (!worker_->idle()) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "working…");
    ImGui::SameLine();
  }
  if (!status_text_.empty()) {
    const ImU32 c = status_level_ == Message::Error     ? pal.error
                    : status_level_ == Message::Warning ? pal.warn
                                                        : pal.text_dim;
    const char* icon = status_level_ == Message::Error ? "✖ " : status_level_ == Message::Warning ? "⚠ " : "";
    ImGui::PushStyleColor(ImGuiCol_Text, c);
    ImGui::Text("%s%s", icon, status_text_.c_str());
    ImGui::PopStyleColor();
  } else {
    ImGui::TextDisabled("Space play/pause · → ← stage · ↓ ↑ token · Home/End · F11 presentation");
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
  if (status_time_ > 0 && ImGui::GetTime() - status_time_ > 12.0 && status_level_ == Message::Info) {
    status_text_.clear();
    status_time_ = 0;
  }

  if (show_log_) {
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 44, ImGui::GetFontSize() * 18), ImGuiCond_FirstUseEver);
    if (ImGui::Begin("Message log", &show_log_)) {
      std::vector<const Message*> all;
      for (auto& m : snap_->log) all.push_back(&m);
      for (auto& m : ui_log_) all.push_back(&m);
      for (const Message* m : all) {
        const ImU32 c = m->level == Message::Error ? pal.error : m->level == Message::Warning ? pal.warn : pal.text;
        text_coloured_wrapped(c, m->text.c_str());
      }
      if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY()) ImGui::SetScrollHereY(1.0f);
    }
    ImGui::End();
  }
}

}  // namespace sf::gui
