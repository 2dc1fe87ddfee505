// app_capture.cpp — screenshots (whole window, one panel), the recording export, and the JSON
// written next to each screenshot that tells the GUI tests what it shows.
#include "app.h"

#include <GLFW/glfw3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "export.h"
#include "gfx/screenshot.h"
#include "io/atomic_file.h"

namespace sf::gui {

void App::request_screenshot(const std::string& path, bool json) {
  shot_path_ = path;
  shot_json_ = json;
  shot_wait_ = 2;  // let windows that just appeared lay themselves out
}

void App::request_panel_png(Panel* p, const std::string& path) {
  panel_shot_ = p;
  panel_shot_path_ = path;
}

std::string App::default_export_path(const std::string& stem, const std::string& ext) {
  std::string dir = "stepformer-export";
  mkdir(dir.c_str(), 0755);
  char ts[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", std::localtime(&t));
  return dir + "/" + stem + "-" + ts + ext;
}

bool App::export_recording(const std::string& path, std::string& error) {
  if (!snap_ || !snap_->ok()) {
    error = "nothing to export: no model or input";
    return false;
  }
  return export_session(*snap_->session, path, error);
}

// A description of what the screenshot shows, for the GUI tests: the stage, and where each panel,
// its main heatmap and its marked element are (pixels, top-left origin).
void App::write_layout_json(const std::string& path, int fw, int fh) {
  std::string j = "{\n  \"width\": " + std::to_string(fw) + ", \"height\": " + std::to_string(fh);
  const auto esc = [](const std::string& s) {
    std::string o;
    for (char ch : s) {
      if (ch == '"' || ch == '\\') o += '\\';
      if (ch == '\n') o += "\\n";  // a wrapped text's line breaks
      if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
    }
    return o;
  };
  const auto rect = [](ImVec4 r) {
    char b[96];
    std::snprintf(b, sizeof b, "[%d, %d, %d, %d]", static_cast<int>(r.x), static_cast<int>(r.y), static_cast<int>(r.z),
                  static_cast<int>(r.w));
    return std::string(b);
  };
  // Named rectangles (DrawnBoxes) as [["name", x0, y0, x1, y1], …], with a sixth number when the
  // right edge of the region the box is drawn in is known: [["name", x0, y0, x1, y1, edge], …].
  const auto boxes = [&](const std::vector<std::pair<std::string, ImVec4>>& list, const std::vector<float>* edges) {
    std::string o = "[";
    for (size_t i = 0; i < list.size(); ++i) {
      std::string r = rect(list[i].second);
      if (edges && i < edges->size())
        r = r.substr(0, r.size() - 1) + ", " + std::to_string(static_cast<int>((*edges)[i])) + "]";
      o += (i ? ", [\"" : "[\"") + esc(list[i].first) + "\", " + r.substr(1);
    }
    return o + "]";
  };
  if (snap_ && snap_->ok()) {
    j += ",\n  \"cursor\": " + std::to_string(snap_->cursor) + ", \"stages\": " + std::to_string(snap_->stages.size());
    j += ",\n  \"stage\": \"" + esc(snap_->stage.title) + "\"";
    j += ",\n  \"finished\": " + std::string(snap_->session->finished() ? "true" : "false");
    j += ",\n  \"output\": \"" + esc(snap_->session->text()) + "\"";
    // Encoder-only with an MLM head: the top-1 at each [MASK] ("position:token:probability").
    std::string masked;
    for (const MaskedPrediction& p : snap_->masked) {
      char prob[32];
      std::snprintf(prob, sizeof prob, "%.3f", static_cast<double>(p.top.empty() ? 0.0f : p.top[0].prob));
      masked += (masked.empty() ? "\"" : ", \"") + std::to_string(p.position) + ":" +
                esc(p.top.empty() ? "" : display_token(snap_->model->config.src_vocab, p.top[0].id)) + ":" + prob +
                "\"";
    }
    j += ",\n  \"masked\": [" + masked + "]";
  }
  j += ",\n  \"model\": \"" + esc(snap_ ? snap_->model_name : "") + "\"";
  j += ",\n  \"input\": \"" + esc(snap_ ? snap_->src_text : "") + "\"";
  char view[96];
  std::snprintf(view, sizeof view, ",\n  \"presentation\": %s, \"scale\": %.2f", ui_.presentation ? "true" : "false",
                static_cast<double>(ui_.scale));
  j += view;
  j += ",\n  \"status\": \"" + esc(status_text_) + "\"";  // what the status bar shows
  j += ",\n  \"menu\": " + boxes(menu_boxes_, nullptr);   // the menu bar and its open menu's items
  j += ",\n  \"panels\": {";
  bool first = true;
  for (auto& p : panels_) {
    if (!p->open) continue;
    j += std::string(first ? "" : ",") + "\n    \"" + p->key() +
         "\": {\"rect\": " + rect(ImVec4(p->pos.x, p->pos.y, p->pos.x + p->size.x, p->pos.y + p->size.y)) +
         ", \"heatmap\": " + rect(p->heat_rect) + ", \"mark\": " + rect(p->mark_rect) + ", \"labels\": [";
    for (size_t i = 0; i < p->labels.size(); ++i) j += (i ? ", \"" : "\"") + esc(p->labels[i]) + "\"";
    j += "], \"boxes\": " + boxes(p->boxes, &p->box_edges) + "}";
    first = false;
  }
  j += "\n  }\n}\n";
  if (auto ok = write_file_atomic(path, j); !ok) notify(Message::Error, ok.error());
}

void App::after_render() {
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(window_, &fw, &fh);
  if (panel_shot_) {
    std::string e;
    const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    const int x = static_cast<int>(panel_shot_->pos.x * fb.x), y = static_cast<int>(panel_shot_->pos.y * fb.y);
    int w = static_cast<int>(panel_shot_->size.x * fb.x), h = static_cast<int>(panel_shot_->size.y * fb.y);
    w = std::min(w, fw - x);
    h = std::min(h, fh - y);
    if (save_framebuffer_png(panel_shot_path_, std::max(0, x), std::max(0, y), w, h, fh, e))
      notify(Message::Info, "wrote " + panel_shot_path_);
    else
      notify(Message::Error, e);
    panel_shot_ = nullptr;
  }
  if (!shot_path_.empty()) {
    if (shot_wait_ > 0) {
      --shot_wait_;
      return;
    }
    std::string e;
    if (save_framebuffer_png(shot_path_, 0, 0, fw, fh, fh, e)) {
      if (shot_json_) write_layout_json(shot_path_ + ".json", fw, fh);  // first: its status is the one in the picture
      notify(Message::Info, "wrote " + shot_path_);
    } else {
      notify(Message::Error, e);
      exit_code_ = 1;
    }
    shot_path_.clear();
  }
}

}  // namespace sf::gui
