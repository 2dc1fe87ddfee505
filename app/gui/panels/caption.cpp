// caption.cpp — "Lesson": the caption of a lesson's step (docs/lessons.md) across the top of the
// window: where the lesson is, the step's talking point and formula, and Back / Next (PageUp /
// PageDown, as presenter clickers send). Scripts fill it with `caption` lines.
#include <string>

#include "app.h"
#include "safe_mode.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class CaptionPanel : public Panel {
 public:
  CaptionPanel() : Panel({"Lesson", "caption", ImVec4(0.0f, 0.0f, 1.0f, 0.22f), false, Needs::Nothing}) {}

  void Draw(Ctx& c) override {
    App& app = c.app;
    const Caption& cap = app.caption();
    const LessonDriver* lesson = app.lesson();
    const Palette& pal = palette();
    // Where the lesson is, and its buttons on the right.
    if (lesson)
      ImGui::TextDisabled("%s  ·  step %d of %d", cap.lesson.c_str(), lesson->step() + 1, lesson->steps());
    else
      ImGui::TextDisabled("%s", cap.lesson.empty() ? "caption" : cap.lesson.c_str());
    note_item("where");
    if (lesson) {
      const float fs = ImGui::GetFontSize();
      ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - fs * 17.5f);
      std::string e;
      ImGui::BeginDisabled(lesson->step() == 0);
      if (ImGui::Button("◀ Back  (PgUp)")) app.request_lesson({LessonRequest::Back, "", "", 0}, e);
      note_item("Back");
      ImGui::EndDisabled();
      ImGui::SameLine();
      ImGui::BeginDisabled(lesson->step() + 1 >= lesson->steps());
      if (ImGui::Button("Next ▶  (PgDn)")) app.request_lesson({LessonRequest::Next, "", "", 0}, e);
      ImGui::EndDisabled();
      ImGui::SameLine();
      if (ImGui::Button("Close")) app.request_lesson({LessonRequest::Close, "", "", 0}, e);
    }
    ImGui::PushFont(c.fonts.big);
    ImGui::PushStyleColor(ImGuiCol_Text, pal.accent);
    note_item("title " + text_wrapped_words(cap.title));
    ImGui::PopStyleColor();
    ImGui::PopFont();
    if (!cap.text.empty()) note_item("text " + text_wrapped_words(cap.text));
    if (!cap.formula.empty()) {
      ImGui::Spacing();
      ImGui::PushFont(c.fonts.bold);
      ImGui::Indent(ImGui::GetFontSize());
      note_item("formula " + text_wrapped_words(cap.formula));
      ImGui::Unindent(ImGui::GetFontSize());
      ImGui::PopFont();
    }
    // Said once, on the lesson's first step: where its files go.
    if (lesson && lesson->step() == 0) {
      ImGui::Spacing();
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      note_item("safe mode " + text_wrapped_words("This lesson runs in safe mode: the files it exports go to " +
                                                  shown_path(lesson->exports()) + " (and nowhere else)."));
      ImGui::PopStyleColor();
    }
    // The height the text needs: the layout gives the caption band exactly that.
    const ImGuiStyle& st = ImGui::GetStyle();
    app.fit_caption(ImGui::GetCursorPosY() - st.ItemSpacing.y + st.WindowPadding.y + st.WindowBorderSize);
  }
};

}  // namespace

std::unique_ptr<Panel> make_caption_panel() { return std::make_unique<CaptionPanel>(); }

}  // namespace sf::gui
