// app_lessons.cpp — lessons in the explorer (docs/lessons.md): opening one (menu, --lesson, a
// script or another lesson), moving between its steps, the `layout` command's placement, and the
// Lessons menu.
#include <algorithm>

#include "app.h"
#include "lesson.h"
#include "paths.h"
#include "safe_mode.h"
#include "widgets.h"

namespace sf::gui {

void App::set_lesson_layout(const LayoutPlan& plan) {
  lesson_layout_.clear();
  lesson_layout_["caption"] = ImVec4(0, 0, 1, plan.caption);
  for (const LayoutItem& it : plan.items) lesson_layout_[it.panel] = ImVec4(it.x, it.y, it.w, it.h);
  for (auto& p : panels_) p->open = lesson_layout_.count(p->key()) > 0;
  reset_layout();
}

void App::clear_lesson_layout() { lesson_layout_.clear(); }

bool App::lesson_busy() const { return !lesson_requests_.empty() || (lesson_ && !lesson_->done()); }

bool App::request_lesson(const LessonRequest& r, std::string& error) {
  if (r.kind != LessonRequest::Open && r.kind != LessonRequest::Close && !lesson_)
    return error = "lesson: no lesson is open", false;
  if (r.kind == LessonRequest::Open) {
    const std::string path = find_lesson(r.name, r.from_dir, find_resource_dir("assets/lessons"));
    if (path.empty())
      return error = "lesson '" + r.name + "': no such lesson file, nor a built-in lesson of that name (" +
                     std::to_string(list_lessons(find_resource_dir("assets/lessons")).size()) +
                     " in assets/lessons/; see the Lessons menu)",
             false;
    if (!lesson_opener_) return error = "lesson: lessons cannot be opened here", false;
    auto next = lesson_opener_(path, error);
    if (!next) return false;
    lesson_requests_.push_back({LessonRequest::Open, path, "", 0});
    pending_lesson_ = std::move(next);
    return true;
  }
  lesson_requests_.push_back(r);
  return true;
}

// Carries out the lesson moves asked since the last frame, then runs the current step's lines.
void App::lesson_tick() {
  std::vector<LessonRequest> requests;
  requests.swap(lesson_requests_);
  for (const LessonRequest& r : requests) {
    if (r.kind == LessonRequest::Open && pending_lesson_) {
      lesson_ = std::move(pending_lesson_);
      settings_frozen_ = true;
      notify(Message::Info, "lesson: " + lesson_->title() + " (" + lesson_->path() + "), " +
                                std::to_string(lesson_->steps()) + " steps; its exports go to " +
                                shown_path(lesson_->exports()));
      lesson_->go(*this, 0);
    } else if (r.kind == LessonRequest::Close) {
      lesson_.reset();
      caption_ = Caption{};
      clear_lesson_layout();
      for (auto& p : panels_) p->open = p->default_open();
      if (ui_.presentation) {
        ui_.presentation = false;  // set_presentation(true) opens the lecture layout again
        set_presentation(true);
      }
      reset_layout();
    } else if (lesson_) {
      const int step = r.kind == LessonRequest::Next   ? lesson_->step() + 1
                       : r.kind == LessonRequest::Back ? lesson_->step() - 1
                                                       : r.step;
      if (step >= 0 && step < lesson_->steps() && step != lesson_->step()) lesson_->go(*this, step);
    }
  }
  if (lesson_) lesson_->tick(*this);
}

void App::lessons_menu() {
  const bool open = ImGui::BeginMenu("Lessons");
  note_item("Lessons");
  if (!open) return;
  std::string e;
  const std::string dir = find_resource_dir("assets/lessons");
  const auto files = list_lessons(dir);
  if (files.empty()) ImGui::TextDisabled("no built-in lessons (assets/lessons/ not found)");
  for (const std::string& f : files) {
    SafeLimits limits;
    auto text = read_lesson_file(f, limits);
    const std::string title = text ? lesson_title(*text) : "";
    const std::string label = (title.empty() ? base_name(f) : title) + "##" + f;
    if (ImGui::MenuItem(label.c_str(), nullptr, lesson_ && lesson_->path() == f) &&
        !request_lesson({LessonRequest::Open, f, "", 0}, e))
      notify(Message::Error, e);
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Open lesson file…")) show_lesson_open_ = true;
  ImGui::Separator();
  if (ImGui::MenuItem("Next step", "PgDn", false, lesson_ && lesson_->step() + 1 < lesson_->steps()))
    request_lesson({LessonRequest::Next, "", "", 0}, e);
  if (ImGui::MenuItem("Previous step", "PgUp", false, lesson_ && lesson_->step() > 0))
    request_lesson({LessonRequest::Back, "", "", 0}, e);
  if (ImGui::MenuItem("Close lesson", nullptr, false, lesson_ != nullptr))
    request_lesson({LessonRequest::Close, "", "", 0}, e);
  ImGui::EndMenu();
}

void App::lesson_open_window() {
  if (!show_lesson_open_) return;
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Open lesson", &show_lesson_open_)) {
    ImGui::TextWrapped(
        "A lesson file (a script split into steps, docs/lessons.md). It runs in safe mode: it can show "
        "anything, and the files it exports go only to %s.",
        exports_dir().c_str());
    ImGui::SetNextItemWidth(-1);
    const bool enter =
        ImGui::InputText("##lesson", lesson_path_, sizeof lesson_path_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button("Open") || enter) {
      std::string e;
      if (request_lesson({LessonRequest::Open, lesson_path_, "", 0}, e))
        show_lesson_open_ = false;
      else
        notify(Message::Error, e);
    }
  }
  ImGui::End();
}

}  // namespace sf::gui
