// script.h — a small line-based language that drives the explorer (docs/explorer.md): load a
// model, set the input, step, decode, open panels, pick a layer/head, take screenshots.
//
// Scripts drive the app's state directly (they never synthesise mouse events): each line runs once
// the worker is idle and the previous line's effect has been drawn for two frames.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app.h"

namespace sf::gui {

class ScriptRunner final : public FrameDriver {
 public:
  // Reads a script file; false (and `error` naming the file) when it cannot be opened.
  bool load(const std::string& path, std::string& error);
  // Takes the lines of `text`; `name` heads the messages about them.
  void load_text(const std::string& text, const std::string& name);
  void tick(App& app) override;  // once per frame, before the UI is built
  bool done() const override { return next_ >= lines_.size() && !waiting_ && !until_; }
  int failures() const override { return failures_; }
  const std::string& last_failure() const { return last_failure_; }

 private:
  struct Line {
    int number;
    std::string text;
  };
  bool run(App& app, const Line& l, std::string& error);
  void fail(App& app, const Line& l, const std::string& what);
  std::string resolve(const std::string& path, bool model) const;

  std::vector<Line> lines_;
  std::string name_, dir_;
  size_t next_ = 0;
  bool waiting_ = false;  // a worker operation of the current line is in flight
  uint64_t first_ticket_ = 0, last_ticket_ = 0;
  const Line* current_ = nullptr;
  int frames_ = 0;                           // frames to draw before the next line
  std::function<bool(std::string&)> until_;  // background work of the current line (compare/prepost.h):
                                             // true when done; a message set means it failed
  int failures_ = 0;
  bool expect_error_armed_ = false;
  bool last_failed_ = false;
  int failures_before_line_ = 0;
  std::string last_failure_;
};

}  // namespace sf::gui
