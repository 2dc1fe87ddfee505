// lesson_runner.cpp — opening a lesson and running its steps in safe mode.
#include "lesson_runner.h"

#include <algorithm>

namespace sf::gui {

bool LessonRunner::open(const std::string& path, std::string& error) {
  auto text = read_lesson_file(path, safe_.limits);
  if (!text) return error = text.error(), false;
  auto l = parse_lesson(*text, path);
  if (!l) return error = l.error(), false;
  lesson_ = std::move(*l);
  path_ = path;
  const size_t slash = path.find_last_of('/');
  dir_ = slash == std::string::npos ? "." : path.substr(0, slash);
  safe_.exports = exports_dir();
  return true;
}

void LessonRunner::go(App& app, int i) {
  i = std::clamp(i, 0, steps() - 1);
  if (run_) failures_ += run_->failures();
  step_ = i;
  run_ = std::make_unique<ScriptRunner>();
  run_->set_safe(&safe_);
  std::vector<ScriptLine> lines;
  if (!prelude_done_) lines = lesson_.prelude, prelude_done_ = true;
  const auto& s = lesson_.steps[static_cast<size_t>(i)].lines;
  lines.insert(lines.end(), s.begin(), s.end());
  run_->load_lines(lines, path_, dir_);
  Caption& c = app.caption();
  c = Caption{};
  c.lesson = lesson_.title;
  c.title = lesson_.steps[static_cast<size_t>(i)].title;
}

void LessonRunner::tick(App& app) {
  if (run_) run_->tick(app);
}

}  // namespace sf::gui
