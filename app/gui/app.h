// app.h — the explorer: window contents, keyboard, panels, scripts, screenshots.
//
// Phases (as in Dear ImGui's example_glfw_opengl3): explorer.cpp creates the window and the
// ImGui context, then per frame calls App::frame() between NewFrame and Render, and
// App::after_render() before swapping (screenshots read the back buffer there).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gfx/heatmap.h"
#include "gfx/style.h"
#include "ui.h"
#include "worker.h"

struct GLFWwindow;

namespace sf::gui {

class App;

// What drives the app each frame besides the user: a script (script.h). The App runs it before
// building the UI and asks whether it is done and how many of its lines failed.
class FrameDriver {
 public:
  virtual ~FrameDriver() = default;
  virtual void tick(App& app) = 0;  // once per frame, before the UI is built
  virtual bool done() const = 0;
  virtual int failures() const = 0;
};

struct LayoutPlan;

// The lesson open in the app (lesson_runner.h, docs/lessons.md): its steps run as a FrameDriver
// in safe mode.
class LessonDriver : public FrameDriver {
 public:
  virtual void go(App& app, int step) = 0;  // shows step `step` (0-based): runs its lines
  virtual int step() const = 0;
  virtual int steps() const = 0;
  virtual const std::string& title() const = 0;
  virtual const std::string& path() const = 0;
  virtual const std::string& exports() const = 0;  // where its files go
};
// Reads and parses a lesson file; null and `error` when it cannot (explorer.cpp supplies it).
using LessonOpener = std::function<std::unique_ptr<LessonDriver>(const std::string& path, std::string& error)>;

// What the caption panel shows (docs/lessons.md): set by a lesson's `caption` lines.
struct Caption {
  std::string lesson;   // the lesson's title
  std::string title;    // the step's title
  std::string text;     // the talking point (lines joined by newlines)
  std::string formula;  // the formula, drawn in bold
};

// Lesson moves asked by the menu, the keys or a script line; carried out at the start of the next
// frame (a lesson line may open another lesson, which replaces the runner running that line).
struct LessonRequest {
  enum Kind { Open, Next, Back, Go, Close } kind;
  std::string name;      // Open: a lesson name or file
  std::string from_dir;  // Open: the folder of the lesson or script that asked
  int step = 0;          // Go: the step (0-based)
};

struct AppOptions {
  std::string script;         // --script FILE
  std::string lesson;         // --lesson NAME|FILE (safe mode)
  std::string screenshot;     // --screenshot FILE
  int bench_frames = 0;       // --bench-frames N
  std::string model;          // --model FILE (instead of the default shipped model)
  float scale = 0;            // --scale S (0: remembered / 1)
  bool presentation = false;  // --presentation
  bool headless() const { return !screenshot.empty() || bench_frames > 0; }
};

class App {
 public:
  // `panels` are every panel the View menu lists, in its order.
  App(GLFWwindow* window, AppOptions opt, std::vector<std::unique_ptr<Panel>> panels);
  ~App();
  // From the next frame on, `driver` runs before the UI is built (--script).
  void attach_driver(std::unique_ptr<FrameDriver> driver) { script_ = std::move(driver); }
  // How lessons are opened (the Lessons menu, --lesson, `lesson open`).
  void set_lesson_opener(LessonOpener opener) { lesson_opener_ = std::move(opener); }
  // A start-up failure (a script that cannot be read): shows `message`, makes the exit code 1 and
  // ends a headless run.
  void fail(const std::string& message);

  // Before NewFrame: applies a pending font/scale change (rebuilds the atlas).
  void before_frame();
  void frame();
  // After rendering, before swapping: screenshots and panel exports.
  void after_render();
  bool should_quit() const { return quit_; }
  int exit_code() const { return exit_code_; }
  // True while something animates or waits (play, scripts, worker busy): keep polling.
  bool busy() const;
  // The worker is computing (a step, thumbnails): the frames only wait for it, and it wakes the
  // loop when it publishes.
  bool waiting_on_worker() const;

  // ---- used by panels and scripts
  Worker& worker() { return *worker_; }
  UiState& ui() { return ui_; }
  const Fonts& fonts() const { return fonts_; }
  std::shared_ptr<const Snapshot> snapshot() const { return snap_; }
  Panel* find_panel(const std::string& key);
  const std::vector<std::unique_ptr<Panel>>& panels() const { return panels_; }
  void show_panel(Panel* p, bool focus = true);
  // `json`: also write PATH.json describing the layout (the GUI tests read it; lessons do not write it).
  void request_screenshot(const std::string& path, bool json = true);
  void request_panel_png(Panel* p, const std::string& path);
  bool screenshot_pending() const { return !shot_path_.empty(); }
  void set_scale(float s);
  void set_presentation(bool on);
  // Presses a key as a keyboard would (scripts: `key F11`): down for one frame, then up, so it
  // goes through the same handlers as a real key press. `key` is a GLFW key code.
  void press_key(int key, bool ctrl);
  void notify(Message::Level level, const std::string& text);  // UI-side message (status bar)
  // Moves the pointer as a mouse would (scripts: `hover`, `click`): from the next frame on ImGui
  // sees it at `at`; `click` presses the left button for one frame and releases it the next.
  void set_pointer(ImVec2 at, bool click);
  void release_pointer() { pointer_on_ = false; }
  // After the platform backend's NewFrame: the scripted pointer replaces the real one.
  void apply_pointer();
  // The centre of the box `name` (exact, else the first that starts with it) that panel `key`
  // drew in the last frame; "menu" is the menu bar and its open menu. False if there is none.
  bool find_box(const std::string& key, const std::string& name, ImVec2& centre) const;
  void quit(int code) {
    quit_ = true;
    exit_code_ = code;
  }
  void reset_layout() { layout_reset_ = 2; }
  // Lessons: the `layout` command's plan (panels not in it close), the caption, the steps.
  void set_lesson_layout(const LayoutPlan& plan);
  void clear_lesson_layout();
  Caption& caption() { return caption_; }
  // The caption panel's content height in pixels, measured as it is drawn: under a lesson's
  // layout the caption band takes that height (at most the layout's caption=F share) and the rows
  // below it share the rest, so a long caption is not cut and a short one leaves no gap.
  void fit_caption(float px) { caption_px_ = px; }
  bool request_lesson(const LessonRequest& r, std::string& error);
  const LessonDriver* lesson() const { return lesson_.get(); }
  bool lesson_busy() const;  // a lesson move is pending or the step's lines are still running
  // Once a lesson has been opened the settings file is left as it was (a lesson never changes the
  // saved layout).
  bool settings_frozen() const { return settings_frozen_; }
  // Opens exactly the panels `row` (keys) and lays them out side by side in that order: the
  // stepper, if listed, across the top, the others left to right below it (layout.h). The
  // arrangement holds until a panel is opened or closed.
  void arrange_panels(const std::vector<std::string>& row);
  int frame_index() const { return frame_; }
  bool script_done() const;
  int script_failures() const;
  // Exports the recording (safetensors / .npy folder / .csv folder) of the current snapshot.
  bool export_recording(const std::string& path, std::string& error);
  std::string default_export_path(const std::string& stem, const std::string& ext);

 private:
  void keyboard();
  void lesson_tick();
  void lessons_menu();
  void lesson_open_window();
  void follow_stage();
  void menu_bar();
  void file_menu();
  void view_menu();
  void stepper_position();  // the model and the stage, always visible in the menu bar
  void about_window();
  void export_window();
  void status_bar();
  void draw_panels();
  bool update_open_panels(float work_h);  // true: lay the open panels out again this frame
  void keep_two_on_a_projector();         // presentation: at most two panels below the stepper
  void panel_menu(Panel& p);              // the title bar's right-click menu
  void draw_no_model();
  void register_settings();
  void play_tick();
  void write_layout_json(const std::string& path, int fw, int fh);
  // Where each open panel goes (fractions of the work area), in the order of panels_.
  std::vector<ImVec4> panel_rects() const;

  GLFWwindow* window_;
  AppOptions opt_;
  std::unique_ptr<Worker> worker_;
  std::shared_ptr<const Snapshot> snap_;
  UiState ui_;
  Fonts fonts_;
  std::vector<std::unique_ptr<Panel>> panels_;
  std::unique_ptr<FrameDriver> script_;
  LessonOpener lesson_opener_;
  std::unique_ptr<LessonDriver> lesson_;
  std::unique_ptr<LessonDriver> pending_lesson_;  // read and parsed, opened at the next frame
  std::vector<LessonRequest> lesson_requests_;
  std::map<std::string, ImVec4> lesson_layout_;  // panel key → rectangle (fractions of the work area)
  Caption caption_;
  float caption_px_ = 0;   // the caption's content height (px), 0: not drawn yet
  float caption_fit_ = 0;  // the caption band in use (fraction of the work area), 0: the layout's
  bool settings_frozen_ = false;
  bool shot_json_ = true;
  bool show_lesson_open_ = false;
  char lesson_path_[512] = {0};

  bool fonts_dirty_ = true;
  bool quit_ = false;
  int exit_code_ = 0;
  int frame_ = 0;
  int layout_reset_ = 0;
  std::string shot_path_;
  ImVec2 pointer_{0, 0};
  bool pointer_on_ = false;
  int pointer_click_ = 0;                                   // set_pointer: 1 = press in the next frame, 2 = release
  std::vector<std::pair<std::string, ImVec4>> menu_boxes_;  // the menu bar's boxes of the last frame
  int script_key_ = -1, script_key_phase_ = 0;              // press_key: 1 = press before the next frame, 2 = release
  bool script_key_ctrl_ = false;
  int shot_wait_ = 0;
  Panel* panel_shot_ = nullptr;
  std::string panel_shot_path_;
  std::vector<Message> ui_log_;
  uint64_t seen_log_ = 0, printed_log_ = 0;
  double status_time_ = 0;
  std::string status_text_;
  Message::Level status_level_ = Message::Info;
  bool show_log_ = false;
  bool show_about_ = false;
  bool show_export_ = false;
  char export_path_[512] = {0};
  std::string heatmap_export_error_;
  uint64_t followed_gen_ = 0;
  int followed_cursor_ = -1;
  bool want_order_ = false, want_leak_ = false;
  std::string open_before_;
  std::vector<std::string> arranged_;  // arrange_panels' row
  std::vector<int> opened_at_;         // per panel: when it was last opened (open_count_ then)
  int open_count_ = 0;
  std::string open_before_presentation_;
  std::string titled_ = "?";
  bool initial_view_ = false;
  bool bench_layout_ = false;
  bool no_model_focused_ = false;  // --bench-frames: the attention model view fills the window  // select the default
                                   // attention once the first model is in
};

}  // namespace sf::gui
