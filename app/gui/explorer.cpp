// explorer.cpp — the explorer's main(), in the phases of Dear ImGui's example_glfw_opengl3:
// window and GL context → ImGui context and backends → app state → loop (poll, new frame, UI,
// render, screenshots, swap) → cleanup in reverse order.
//
// This file is the top of app/gui: it builds the panel list (panels/, compare/) and the script
// runner and hands them to the App, which knows them only through ui.h's Panel and app.h's
// FrameDriver.
#include "explorer.h"

#include <GLFW/glfw3.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app.h"
#include "bench_report.h"
#include "backends/imgui_impl_glfw.h"
#include "backends/imgui_impl_opengl3.h"
#include "compare/prepost.h"
#include "gfx/gl.h"
#include "imgui.h"
#include "lesson_runner.h"
#include "inspect/inspect_panel.h"
#include "script.h"

namespace sf::gui {

namespace {

// Ctrl+C / SIGTERM end the loop normally, so the layout (imgui.ini) is saved on the way out.
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void glfw_error(int code, const char* what) { std::fprintf(stderr, "stepformer: GLFW error %d: %s\n", code, what); }

const char* kUsage =
    "usage: stepformer [--model M.safetensors] [--script S.txt] [--lesson NAME|FILE] [--screenshot OUT.png]\n"
    "                  [--bench-frames N]\n"
    "                  [--scale S] [--presentation] [--size WxH] [--threads N]\n";

// [SECTION] command line

struct ExplorerArgs {
  AppOptions opt;
  int width = 1600, height = 900;
};

// Reads the explorer's flags into `args`. Returns -1 to go on, else the exit code (0 for
// --has-gui, 2 for a bad option, after printing what was expected and what was found).
int parse_args(int argc, char** argv, ExplorerArgs& args) {
  AppOptions& opt = args.opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "stepformer: %s needs %s\n%s", a.c_str(), what, kUsage);
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "--lesson") {
      if (!(v = value("a lesson name or file"))) return 2;
      opt.lesson = v;
    } else if (a == "--script") {
      if (!(v = value("a script file"))) return 2;
      opt.script = v;
    } else if (a == "--screenshot") {
      if (!(v = value("an output .png"))) return 2;
      opt.screenshot = v;
    } else if (a == "--model") {
      if (!(v = value("a .safetensors file"))) return 2;
      opt.model = v;
    } else if (a == "--bench-frames") {
      if (!(v = value("a frame count"))) return 2;
      opt.bench_frames = std::atoi(v);
      if (opt.bench_frames <= 0) {
        std::fprintf(stderr, "stepformer: --bench-frames: expected a positive count, found '%s'\n", v);
        return 2;
      }
    } else if (a == "--scale") {
      if (!(v = value("a number"))) return 2;
      opt.scale = static_cast<float>(std::atof(v));
      if (opt.scale < 0.5f || opt.scale > 4.0f) {
        std::fprintf(stderr, "stepformer: --scale: expected a number in [0.5, 4], found '%s'\n", v);
        return 2;
      }
    } else if (a == "--size") {
      if (!(v = value("WxH"))) return 2;
      if (std::sscanf(v, "%dx%d", &args.width, &args.height) != 2 || args.width < 320 || args.height < 240) {
        std::fprintf(stderr, "stepformer: --size: expected WxH (at least 320x240), found '%s'\n", v);
        return 2;
      }
    } else if (a == "--has-gui") {
      return 0;  // scripts/run.sh asks whether this build has the explorer
    } else if (a == "--presentation") {
      opt.presentation = true;
    } else {
      std::fprintf(stderr, "stepformer: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  return -1;
}

// [SECTION] window, ImGui context, app state

// Opens the window with an OpenGL 3.3 core context and makes it current; null (after saying why)
// when there is no display or no such context.
GLFWwindow* open_window(int width, int height, bool headless) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "stepformer: cannot open a window (no display? run under xvfb-run for headless use)\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  // The X11 window class the desktop matches to stepformer.desktop (StartupWMClass): its icon in the
  // task bar and dock.
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "stepformer");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "stepformer");
  GLFWwindow* window = glfwCreateWindow(width, height, "stepformer — step through a Transformer", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "stepformer: cannot create an OpenGL 3.3 core window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);
  return window;
}

void init_imgui(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

void shutdown_imgui_and_window(GLFWwindow* window) {
  heatmap_renderer().shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

// Every panel of the explorer, in View-menu order.
std::vector<std::unique_ptr<Panel>> explorer_panels() {
  std::vector<std::unique_ptr<Panel>> panels;
  panels.push_back(make_model_panel());
  panels.push_back(make_stepper_panel());
  panels.push_back(make_attention_panel());
  panels.push_back(make_qkv_panel());
  panels.push_back(make_output_panel());
  panels.push_back(make_positional_panel());
  panels.push_back(make_masks_panel());
  panels.push_back(make_kv_cache_panel());
  panels.push_back(make_residual_panel());
  panels.push_back(make_inspect_panel());
  for (auto& p : make_prepost_panels()) panels.push_back(std::move(p));  // compare, training, gradnorms
  panels.push_back(make_caption_panel());
  panels.push_back(make_worked_panel());
  return panels;
}

// --script FILE: the runner drives the app from the first frame. A script that cannot be read is
// an error (and ends a headless run).
void attach_script(App& app, const std::string& path) {
  auto script = std::make_unique<ScriptRunner>();
  std::string error;
  const bool loaded = script->load(path, error);
  app.attach_driver(std::move(script));
  if (!loaded) app.fail(error);
}

// A lesson file, read and parsed within the safe-mode limits (lesson_runner.h).
std::unique_ptr<LessonDriver> open_lesson(const std::string& path, std::string& error) {
  auto lesson = std::make_unique<LessonRunner>();
  if (!lesson->open(path, error)) return nullptr;
  return lesson;
}

// [SECTION] loop

// One frame: poll (or wait while idle), build the UI, render it, screenshots, swap.
void run_frame(App& app, GLFWwindow* window, bool headless) {
  // While the worker computes, the screen holds still ("working…") until it publishes, and it wakes
  // us when it does: sleep as when idle, until input or that wake. A software rasteriser drawing
  // even 20 frames a second took a fifth of a 2-core machine from a long input's prefill.
  if ((headless || app.busy()) && !app.waiting_on_worker())
    glfwPollEvents();
  else
    glfwWaitEventsTimeout(0.25);  // idle or waiting: sleep until input or the worker wakes us

  app.before_frame();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // Headless runs: no pointer over the window (Xvfb leaves it in the middle, where it would
  // hover a cell and open tooltips in screenshots and benchmarks).
  if (headless) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  app.apply_pointer();
  ImGui::NewFrame();
  app.frame();
  ImGui::Render();
  int fw, fh;
  glfwGetFramebufferSize(window, &fw, &fh);
  glViewport(0, 0, fw, fh);
  // The clear colour is the panels' background: panels that overlap nothing skip drawing it.
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  app.after_render();
  glfwSwapBuffers(window);
}

// User + system CPU time of the whole process (every thread, llvmpipe's rasterisers included).
double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// --bench-frames N: times N frames once the model is loaded, stepped and drawn, then takes the
// --screenshot (if any) of what was measured.
class FrameBenchmark {
 public:
  FrameBenchmark(int frames, std::string screenshot) : frames_(frames), screenshot_(std::move(screenshot)) {}

  // After each frame; true when the run is over.
  bool after_frame(App& app) {
    const auto now = std::chrono::steady_clock::now();
    if (started_ < 0 && app.worker().idle() && app.snapshot()->ok() && app.frame_index() > 10 && app.script_done()) {
      started_ = app.frame_index();
      cpu_start_ = cpu_seconds();
      drawn_heatmaps() = {};
    }
    if (started_ >= 0 && app.frame_index() > started_) {
      glFinish();
      if (measured() < frames_ || cpu_ms_ == 0)
        frame_ms_.push_back(std::chrono::duration<double, std::milli>(now - last_).count());
      else
        frame_ms_.push_back(-1);  // frames after the measurement (the screenshot) are not counted
    }
    last_ = std::chrono::steady_clock::now();
    if (measured() == frames_) {
      cpu_ms_ = (cpu_seconds() - cpu_start_) * 1000.0 / static_cast<double>(frame_ms_.size());
      maps_ = drawn_heatmaps();
      if (screenshot_.empty()) return true;
      app.request_screenshot(screenshot_);  // what was measured, for the docs
    }
    return measured() > frames_ && !app.screenshot_pending();
  }

  // Prints the mean and 95th percentile frame time and what the frames showed; 1 when the
  // measurement never started.
  int report(const App& app, const std::string& view, int width, int height) const {
    if (frame_ms_.empty()) {
      std::fprintf(stderr, "stepformer: the benchmark did not start (model not ready)\n");
      return 1;
    }
    std::vector<double> s(frame_ms_.begin(), frame_ms_.begin() + std::min(measured(), frames_));
    std::sort(s.begin(), s.end());
    double mean = 0;
    for (double v : s) mean += v;
    mean /= static_cast<double>(s.size());
    const double p95 = s[std::min(s.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(s.size())))];
    std::printf("mean %.2f ms, p95 %.2f ms\n", mean, p95);
    const std::string what = describe_bench(*app.snapshot(), maps_, static_cast<int>(s.size()));
    std::printf("(%zu frames of %s: %s; %dx%d window; %.0f fps; CPU time of all threads %.2f ms per frame)\n", s.size(),
                view.c_str(), what.c_str(), width, height, 1000.0 / mean, cpu_ms_);
    return 0;
  }

 private:
  int measured() const { return static_cast<int>(frame_ms_.size()); }

  int frames_;
  std::string screenshot_;
  std::vector<double> frame_ms_;
  int started_ = -1;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double cpu_start_ = 0, cpu_ms_ = 0;
  DrawnHeatmaps maps_;  // what the measured frames drew
};

// --screenshot FILE without a benchmark: once the script is done and the worker idle, take the
// screenshot and end.
class ScreenshotEnding {
 public:
  explicit ScreenshotEnding(std::string path) : path_(std::move(path)) {}
  bool after_frame(App& app) {
    if (!requested_) {
      if (app.script_done() && !app.screenshot_pending() && app.worker().idle() && app.frame_index() > 6) {
        app.request_screenshot(path_);
        requested_ = true;
      }
      return false;
    }
    return !app.screenshot_pending();
  }

 private:
  std::string path_;
  bool requested_ = false;
};

// Runs frames until the window closes, the app quits, a signal arrives or a headless ending
// (benchmark, screenshot) is reached. Returns the exit code.
int run_loop(App& app, GLFWwindow* window, const ExplorerArgs& args) {
  const AppOptions& opt = args.opt;
  const bool headless = opt.headless();
  FrameBenchmark bench(opt.bench_frames, opt.screenshot);
  ScreenshotEnding shot(opt.screenshot);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  while (!glfwWindowShouldClose(window) && !app.should_quit() && !g_stop) {
    run_frame(app, window, headless);
    if (opt.bench_frames > 0) {
      if (bench.after_frame(app)) break;
    } else if (!opt.screenshot.empty()) {
      if (shot.after_frame(app)) break;
    }
    if (app.frame_index() > 20000 && headless) {
      std::fprintf(stderr, "stepformer: gave up after 20000 frames (is the script stuck?)\n");
      app.quit(1);
    }
  }
  int code = app.exit_code();
  if ((!opt.script.empty() || !opt.lesson.empty()) && app.script_failures() > 0) code = std::max(code, 1);
  if (opt.bench_frames > 0) {
    const char* view = opt.script.empty() ? "the model view alone" : "the layout the script set up";
    code = std::max(code, bench.report(app, view, args.width, args.height));
  }
  return code;
}

}  // namespace

bool is_explorer_invocation(int argc, char** argv) {
  return argc < 2 || (argv[1][0] == '-' && argv[1][1] == '-' && std::strcmp(argv[1], "--help") != 0 &&
                      std::strcmp(argv[1], "--version") != 0);
}

int run_explorer(int argc, char** argv) {
  ExplorerArgs args;
  if (const int code = parse_args(argc, argv, args); code >= 0) return code;
  GLFWwindow* window = open_window(args.width, args.height, args.opt.headless());
  if (!window) return 1;
  init_imgui(window);
  int code = 0;
  {
    App app(window, args.opt, explorer_panels());
    app.set_lesson_opener(open_lesson);
    if (!args.opt.lesson.empty()) {
      std::string e;
      if (!app.request_lesson({LessonRequest::Open, args.opt.lesson, ".", 0}, e)) app.fail(e);
    }
    if (!args.opt.script.empty()) attach_script(app, args.opt.script);
    code = run_loop(app, window, args);
  }
  shutdown_imgui_and_window(window);
  return code;
}

}  // namespace sf::gui
