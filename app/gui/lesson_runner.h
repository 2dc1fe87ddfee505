// lesson_runner.h — the lesson open in the explorer (docs/lessons.md): its steps, which one is
// shown, and the safe-mode script runner that sets each step up. The App holds it as its
// LessonDriver and forwards Next / Back (the caption's buttons, PageDown / PageUp, `lesson next`).
#pragma once

#include <memory>
#include <string>

#include "app.h"
#include "lesson.h"
#include "script.h"

namespace sf::gui {

class LessonRunner final : public LessonDriver {
 public:
  // Reads (within the safe-mode limits) and parses a lesson file; false with `error` otherwise.
  bool open(const std::string& path, std::string& error);
  // Shows step `i` (clamped): runs the prelude the first time, then the step's lines.
  void go(App& app, int i) override;
  void tick(App& app) override;  // once per frame: runs the current step's lines
  // The step's lines have run and their effect has been drawn.
  bool done() const override { return !run_ || run_->settled(); }
  int failures() const override { return failures_ + (run_ ? run_->failures() : 0); }

  int step() const override { return step_; }
  int steps() const override { return static_cast<int>(lesson_.steps.size()); }
  const std::string& title() const override { return lesson_.title; }
  const std::string& path() const override { return path_; }
  const std::string& exports() const override { return safe_.exports; }

 private:
  Lesson lesson_;
  std::string path_, dir_;
  int step_ = -1;
  bool prelude_done_ = false;
  int failures_ = 0;  // of the steps already left
  SafeContext safe_;
  std::unique_ptr<ScriptRunner> run_;
};

}  // namespace sf::gui
