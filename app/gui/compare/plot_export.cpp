// plot_export.cpp — exporting plots (compare/plot.h): scripts' and the context menu's requests, CSV
// written at once, PNG captured from the framebuffer by a draw callback after the frame renders.
#include <algorithm>
#include <functional>
#include <memory>

#include "app.h"
#include "compare/plot.h"
#include "compare/plot_parts.h"
#include "gfx/gl.h"
#include "gfx/screenshot.h"
#include "io/atomic_file.h"

namespace sf::gui {

namespace {

struct Request {
  std::string id, path;
};
std::vector<Request> g_requests;

// A capture scheduled inside this frame's draw data; the callback fills `error`/`done`.
struct Capture {
  std::string id, path;
  ImVec2 min, max;
  bool done = false, ok = false;
  std::string error;
};
std::vector<std::unique_ptr<Capture>> g_captures;

int g_frame = -1;
std::vector<std::string> g_drawn, g_drawn_last;

void capture_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* c = static_cast<Capture*>(cmd->UserCallbackData);
  GLint vp[4] = {0, 0, 0, 0};
  glGetIntegerv(GL_VIEWPORT, vp);
  const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
  const int x = std::max(0, static_cast<int>(c->min.x * s.x)), y = std::max(0, static_cast<int>(c->min.y * s.y));
  const int w = std::min(static_cast<int>((c->max.x - c->min.x) * s.x), vp[2] - x);
  const int h = std::min(static_cast<int>((c->max.y - c->min.y) * s.y), vp[3] - y);
  c->ok = save_framebuffer_png(c->path, x, y, w, h, vp[3], c->error);
  c->done = true;
}

std::string stem_of(const std::string& id) {
  std::string s = id;
  std::replace(s.begin(), s.end(), '.', '-');
  return s;
}

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

}  // namespace

namespace plot_parts {

// Once per frame: the list of plots drawn, and the results of last frame's captures.
void begin_widget(const std::string& id, App& app) {
  const int f = ImGui::GetFrameCount();
  if (f != g_frame) {
    g_frame = f;
    g_drawn_last.swap(g_drawn);
    g_drawn.clear();
    for (auto it = g_captures.begin(); it != g_captures.end();) {
      if (!(*it)->done) {
        ++it;
        continue;
      }
      if ((*it)->ok)
        app.notify(Message::Info, "wrote " + (*it)->path);
      else
        app.notify(Message::Error, "plot " + (*it)->id + ": " + (*it)->error);
      it = g_captures.erase(it);
    }
  }
  g_drawn.push_back(id);
}

// Serves this plot's pending requests: CSV now, PNG by a capture after this frame renders.
void serve_requests(const std::string& id, ImVec2 a, ImVec2 b, const std::function<std::string()>& csv, App& app) {
  for (auto it = g_requests.begin(); it != g_requests.end();) {
    if (it->id != id) {
      ++it;
      continue;
    }
    if (ends_with(it->path, ".csv")) {
      std::string e;
      if (auto r = write_file_atomic(it->path, csv()); r)
        app.notify(Message::Info, "wrote " + it->path);
      else
        app.notify(Message::Error, "plot " + id + ": " + r.error());
    } else {
      auto c = std::make_unique<Capture>();
      c->id = id;
      c->path = it->path;
      c->min = a;
      c->max = b;
      ImGui::GetForegroundDrawList()->AddCallback(capture_callback, c.get());
      ImGui::GetForegroundDrawList()->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
      g_captures.push_back(std::move(c));
    }
    it = g_requests.erase(it);
  }
}

void export_menu(const char* id, const std::function<std::string()>& csv, PlotView* view, App& app) {
  if (!ImGui::BeginPopupContextItem(id)) return;
  if (view) {
    bool lg = view->log_y;
    if (ImGui::MenuItem("Log scale", nullptr, &lg)) view->log_y = lg, view->log_set = true;
    ImGui::Separator();
  }
  if (ImGui::MenuItem("Export plot as PNG")) {
    std::string e;
    request_plot_export(id, app.default_export_path(stem_of(id), ".png"), e);
  }
  if (ImGui::MenuItem("Export data as CSV")) {
    const std::string path = app.default_export_path(stem_of(id), ".csv");
    if (auto r = write_file_atomic(path, csv()); r)
      app.notify(Message::Info, "wrote " + path);
    else
      app.notify(Message::Error, r.error());
  }
  ImGui::EndPopup();
}

}  // namespace plot_parts

bool request_plot_export(const std::string& id, const std::string& path, std::string& error) {
  if (!ends_with(path, ".png") && !ends_with(path, ".csv")) {
    error = "plot export: expected a .png or .csv file name, found '" + path + "'";
    return false;
  }
  g_requests.push_back({id, path});
  return true;
}

int pending_plot_exports() { return static_cast<int>(g_requests.size() + g_captures.size()); }

std::vector<std::string> drawn_plot_ids() { return g_drawn_last; }

}  // namespace sf::gui
