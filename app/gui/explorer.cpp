// explorer.cpp — the explorer's main(), in the phases of Dear ImGui's example_glfw_opengl3:
// window and GL context → ImGui context and backends → app state → loop (poll, new frame, UI,
// render, screenshots, swap) → cleanup in reverse order.
#include "explorer.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cfloat>
#include <chrono>
#include <sys/resource.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app.h"
#include "backends/imgui_impl_glfw.h"
#include "backends/imgui_impl_opengl3.h"
#include "gfx/gl.h"
#include "imgui.h"
#include "script.h"

namespace sf::gui {

namespace {

// Ctrl+C / SIGTERM end the loop normally, so the layout (imgui.ini) is saved on the way out.
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void glfw_error(int code, const char* what) { std::fprintf(stderr, "stepformer: GLFW error %d: %s\n", code, what); }

const char* kUsage =
    "usage: stepformer [--model M.safetensors] [--script S.txt] [--screenshot OUT.png] [--bench-frames N]\n"
    "                  [--scale S] [--presentation] [--size WxH] [--threads N]\n";

}  // namespace

namespace {

// User + system CPU time of the whole process (every thread, llvmpipe's rasterisers included).
double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

bool is_explorer_invocation(int argc, char** argv) {
  return argc < 2 || (argv[1][0] == '-' && argv[1][1] == '-' && std::strcmp(argv[1], "--help") != 0 &&
                      std::strcmp(argv[1], "--version") != 0);
}

int run_explorer(int argc, char** argv) {
  // ---- command line
  AppOptions opt;
  int width = 1600, height = 900;
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
    if (a == "--script") {
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
      if (std::sscanf(v, "%dx%d", &width, &height) != 2 || width < 320 || height < 240) {
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

  // ---- window and GL context
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "stepformer: cannot open a window (no display? run under xvfb-run for headless use)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(width, height, "stepformer — step through a Transformer", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "stepformer: cannot create an OpenGL 3.3 core window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  const bool headless = opt.headless();
  glfwSwapInterval(headless ? 0 : 1);

  // ---- ImGui context and backends
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  // ---- app state
  int code = 0;
  {
    App app(window, opt);
    const int bench = opt.bench_frames;
    std::vector<double> frame_ms;
    int bench_started = -1;
    auto last = std::chrono::steady_clock::now();
    bool screenshot_requested = false;
    double cpu_start = 0, cpu_ms = 0;

    // ---- loop
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    while (!glfwWindowShouldClose(window) && !app.should_quit() && !g_stop) {
      if (headless || app.busy())
        glfwPollEvents();
      else
        glfwWaitEventsTimeout(0.25);  // idle: sleep until input or the worker wakes us

      app.before_frame();
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      // Headless runs: no pointer over the window (Xvfb leaves it in the middle, where it would
      // hover a cell and open tooltips in screenshots and benchmarks).
      if (headless) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
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

      // Headless endings: --bench-frames, --screenshot (after the script, if any).
      const auto now = std::chrono::steady_clock::now();
      if (bench > 0) {
        // Start timing once the model is loaded, stepped and drawn for a few frames.
        if (bench_started < 0 && app.worker().idle() && app.snapshot()->ok() && app.frame_index() > 10 &&
            app.script_done()) {
          bench_started = app.frame_index();
          cpu_start = cpu_seconds();
        }
        if (bench_started >= 0 && app.frame_index() > bench_started) {
          glFinish();
          if (static_cast<int>(frame_ms.size()) < bench || cpu_ms == 0)
            frame_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
          else
            frame_ms.push_back(-1);  // frames after the measurement (the screenshot) are not counted
        }
        if (static_cast<int>(frame_ms.size()) == bench) {
          cpu_ms = (cpu_seconds() - cpu_start) * 1000.0 / static_cast<double>(frame_ms.size());
          if (opt.screenshot.empty()) break;
          app.request_screenshot(opt.screenshot);  // what was measured, for the docs
        }
        if (static_cast<int>(frame_ms.size()) > bench && !app.screenshot_pending()) break;
      } else if (!opt.screenshot.empty()) {
        ScriptRunner* s = nullptr;
        (void)s;
        const bool script_done = app.script_done();
        if (script_done && app.worker().idle() && !screenshot_requested && app.frame_index() > 6) {
          app.request_screenshot(opt.screenshot);
          screenshot_requested = true;
        } else if (screenshot_requested && !app.screenshot_pending()) {
          break;
        }
      } else if (!opt.script.empty() && app.script_done() && app.script_failures() > 0) {
        // An interactive replay keeps running; the failure is shown in the window.
      }
      last = std::chrono::steady_clock::now();
      if (app.frame_index() > 20000 && headless) {
        std::fprintf(stderr, "stepformer: gave up after 20000 frames (is the script stuck?)\n");
        app.quit(1);
      }
    }
    code = app.exit_code();
    if (!opt.script.empty() && app.script_failures() > 0) code = std::max(code, 1);
    if (bench > 0) {
      if (frame_ms.empty()) {
        std::fprintf(stderr, "stepformer: the benchmark did not start (model not ready)\n");
        code = 1;
      } else {
        std::vector<double> s(frame_ms.begin(),
                              frame_ms.begin() + std::min<size_t>(frame_ms.size(), static_cast<size_t>(bench)));
        std::sort(s.begin(), s.end());
        double mean = 0;
        for (double v : s) mean += v;
        mean /= static_cast<double>(s.size());
        const double p95 = s[std::min(s.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(s.size())))];
        std::printf("mean %.2f ms, p95 %.2f ms\n", mean, p95);
        std::printf(
            "(%zu frames of %s: the attention model view of a 6-layer, 8-head model at 64 tokens (48 maps of "
            "64x64), %dx%d window; %.0f fps; CPU time of all threads %.2f ms per frame)\n",
            s.size(), opt.script.empty() ? "the model view alone" : "the layout the script set up", width, height,
            1000.0 / mean, cpu_ms);
      }
    }
  }

  // ---- cleanup
  heatmap_renderer().shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return code;
}

}  // namespace sf::gui
