// lesson.h — lessons (docs/lessons.md): a script split into steps by its `caption step` lines,
// and the `layout` command's arrangement of panels in rows, side by side under the caption. UI-free
// (tests/lesson_test.cpp); the explorer runs the steps (lesson_runner) and draws the caption.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "script_parse.h"

namespace sf::gui {

struct LessonStep {
  std::string title;              // from `caption step TITLE`
  std::vector<ScriptLine> lines;  // the step's commands, its `caption` lines included
};

struct Lesson {
  std::string title;                // `caption lesson TITLE` (else the file's name)
  std::string source;               // the file it came from, or the built-in lesson's name
  std::vector<ScriptLine> prelude;  // lines before the first step: run once, when the lesson opens
  std::vector<LessonStep> steps;
};

// Splits a lesson's text into its steps. Error when it has no `caption step` line.
Result<Lesson> parse_lesson(const std::string& text, const std::string& source);

// The title of a lesson file without running it: its `caption lesson` line, else "".
std::string lesson_title(const std::string& text);

// `layout ROW [/ ROW]…` (ROW = `[H%] panel[:W] panel[:W]…`) and an optional `caption=F` (the
// most of the height the caption band may take, 0.1–0.6, default 0.45; the explorer shrinks the
// band to its text and scales the rows below to fill the rest): the panels of each row side by
// side, widths in proportion to W (default 1), rows below the caption band, heights in proportion
// to H (default: equal shares).
struct LayoutItem {
  std::string panel;
  float x, y, w, h;  // fractions of the work area
};
struct LayoutPlan {
  float caption = 0.45f;          // the caption band across the top: (0, 0, 1, caption), at most
  std::vector<LayoutItem> items;  // below it, never overlapping
};
Result<LayoutPlan> parse_layout(const std::vector<std::string>& words);

// The lesson folder's built-in lessons, sorted by file name (their names start with a number).
std::vector<std::string> list_lessons(const std::string& dir);
// A lesson named on the command line or by another lesson: an existing file (as given, then
// relative to `from_dir`), else a built-in lesson `dir/NAME.txt` or `dir/*-NAME.txt`. Empty when
// none exists.
std::string find_lesson(const std::string& name, const std::string& from_dir, const std::string& dir);

}  // namespace sf::gui
