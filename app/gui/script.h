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
#include "safe_mode.h"
#include "script_parse.h"

namespace sf::gui {

// A lesson's trust level (docs/lessons.md, "Safe mode"): the limits, the exports folder its
// outputs go to, and how many files it has written. A script without one (`--script`) is the
// user's own and runs with full power.
struct SafeContext {
  SafeLimits limits;
  std::string exports;  // exports_dir(), created on the first export
  int written = 0;
};

class ScriptRunner final : public FrameDriver {
 public:
  // Reads a script file; false (and `error` naming the file) when it cannot be opened.
  bool load(const std::string& path, std::string& error);
  // Takes the lines of `text`; `name` heads the messages about them.
  void load_text(const std::string& text, const std::string& name);
  // Lines already split (a lesson step); `dir` is where relative model paths are looked up first.
  void load_lines(const std::vector<ScriptLine>& lines, const std::string& name, const std::string& dir);
  // Runs in safe mode under `safe` (which outlives the runner).
  void set_safe(SafeContext* safe) { safe_ = safe; }
  void tick(App& app) override;  // once per frame, before the UI is built
  bool done() const override { return next_ >= lines_.size() && !waiting_ && !until_; }
  bool settled() const { return done() && frames_ == 0; }  // done, and the last line's effect drawn
  int failures() const override { return failures_; }
  const std::string& last_failure() const { return last_failure_; }

 private:
  struct Line {
    int number;
    std::string text;
  };
  bool run(App& app, const Line& l, std::string& error);
  bool run(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed, std::string& error);
  // The command groups run() tries in turn: 1 done, 0 failed (`error` says why), −1 not theirs.
  int run_input_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                        std::string& error);
  int run_decoding_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                           std::string& error);
  int run_stepping_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                           std::string& error);
  int run_window_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                         std::string& error);
  int run_panel_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                        std::string& error);
  int run_output_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                         std::string& error);
  int run_check_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                        std::string& error);
  void fail(App& app, const Line& l, const std::string& what);
  std::string resolve(const std::string& path, bool model) const;
  // Safe mode: refuses what a lesson may not do and moves the line's output into the exports
  // folder (rewriting `a`); false with `error` when the line may not run.
  bool make_safe(App& app, std::vector<std::string>& a, const Line& l, std::string& placed, std::string& error);
  bool run_lesson_command(App& app, const std::vector<std::string>& a, const Line& l, std::string& error);

  SafeContext* safe_ = nullptr;

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
  bool last_failed_ = false;
  std::string last_failure_;
};

}  // namespace sf::gui
