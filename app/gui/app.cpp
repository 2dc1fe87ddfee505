// app.cpp — the explorer's window and frame loop: construction (panels, first model, settings
// handler) and what runs every frame. The rest of App is split by what a reader looks for:
//   app_keyboard.cpp  keys, play/pause, the selection following the stepper
//   app_menus.cpp     menu bar, "Keyboard and about", "Export recording"
//   app_layout.cpp    where panels go (default and presentation layouts), "No model loaded"
//   app_status.cpp    status bar and message log
//   app_capture.cpp   screenshots, panel PNGs, recording export, the layout JSON for the GUI tests
//
// [SECTION] construction (panels, first model, settings handler)
// [SECTION] per frame (fonts, messages, demos)
#include "app.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>

#include "actions.h"
#include "backends/imgui_impl_opengl3.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "gfx/imgui_math.h"
#include "paths.h"
#include "widgets.h"

namespace sf::gui {

// [SECTION] construction

namespace {

App* g_app = nullptr;  // for the settings handler callbacks (plain function pointers)

// imgui.ini, or empty for scripted/headless runs. ImGui's own IniFilename stays null, so ImGui
// never writes the file in place: it raises WantSaveIniSettings and we write it atomically.
std::string g_ini_path;

void save_settings() {
  ImGui::GetIO().WantSaveIniSettings = false;
  if (g_ini_path.empty() || (g_app && g_app->settings_frozen())) return;
  size_t n = 0;
  const char* text = ImGui::SaveIniSettingsToMemory(&n);
  write_file_atomic(g_ini_path, std::string(text, n));  // a failure keeps the previous settings
}

void* settings_open(ImGuiContext*, ImGuiSettingsHandler*, const char* name) {
  return std::string(name) == "Settings" ? reinterpret_cast<void*>(1) : nullptr;
}

void settings_line(ImGuiContext*, ImGuiSettingsHandler*, void*, const char* line) {
  if (!g_app) return;
  float f;
  int i;
  char key[64];
  if (std::sscanf(line, "scale=%f", &f) == 1 && f >= 0.5f && f <= 4.0f)
    g_app->ui().scale = f;
  else if (std::sscanf(line, "presentation=%d", &i) == 1)
    g_app->ui().presentation = i != 0;
  else if (std::sscanf(line, "speed=%f", &f) == 1 && f > 0 && f <= 30)
    g_app->ui().speed = f;
  else if (std::sscanf(line, "open.%63[^=]=%d", key, &i) == 2) {
    if (Panel* p = g_app->find_panel(key)) p->open = i != 0;
  }
}

void settings_write(ImGuiContext*, ImGuiSettingsHandler* h, ImGuiTextBuffer* buf) {
  if (!g_app) return;
  buf->appendf("[%s][Settings]\n", h->TypeName);
  buf->appendf("scale=%.2f\npresentation=%d\nspeed=%.2f\n", g_app->ui().scale, g_app->ui().presentation ? 1 : 0,
               g_app->ui().speed);
  for (auto& p : g_app->panels()) buf->appendf("open.%s=%d\n", p->key(), p->open ? 1 : 0);
  buf->append("\n");
}

// A random 6-layer, 8-head encoder-decoder over a 64-token input: the --bench-frames workload.
std::shared_ptr<const Model> bench_model(std::string& src) {
  Config c;
  c.arch = Arch::EncoderDecoder;
  c.d_model = 128;
  c.n_heads = 8;
  c.n_encoder_layers = 6;
  c.n_decoder_layers = 6;
  c.d_ff = 256;
  c.max_len = 80;
  c.norm = NormPlacement::Pre;
  std::vector<std::string> words = {"<pad>", "<s>", "</s>", "<unk>"};
  for (int i = 0; i < 60; ++i) words.push_back("w" + std::to_string(i));
  c.src_vocab = *Vocab::make(words, Tokenizer::Word, "bench");
  c.tgt_vocab = c.src_vocab;
  Weights w;
  init_xavier(w, c, 7);
  for (int i = 0; i < 64; ++i) src += (i ? " w" : "w") + std::to_string((i * 17) % 60);
  return std::make_shared<const Model>(Model::make(std::move(c), std::move(w)));
}

}  // namespace

App::App(GLFWwindow* window, AppOptions opt, std::vector<std::unique_ptr<Panel>> panels)
    : window_(window), opt_(std::move(opt)), panels_(std::move(panels)) {
  g_app = this;
  worker_ = std::make_unique<Worker>([] { glfwPostEmptyEvent(); });
  for (auto& p : panels_) p->open = p->default_open();
  set_heatmap_export({[this](const std::string& stem) { return default_export_path(stem, ".png"); },
                      [this](bool ok, const std::string& text) { notify(ok ? Message::Info : Message::Error, text); }});

  // Settings (scale, presentation, open panels) live in imgui.ini next to the window layout.
  // Scripted and headless runs neither read nor write it, so they are reproducible.
  register_settings();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  g_ini_path.clear();
  if (!opt_.headless() && opt_.script.empty()) {
    g_ini_path = settings_path();
    if (file_exists(g_ini_path)) ImGui::LoadIniSettingsFromDisk(g_ini_path.c_str());
  }
  if (opt_.scale > 0) ui_.scale = opt_.scale;
  if (opt_.presentation && !ui_.presentation) set_presentation(true);

  // Heatmap shaders.
  const std::string shaders = find_resource_dir("shaders");
  std::string err;
  if (shaders.empty() || !heatmap_renderer().init(shaders, err))
    notify(Message::Warning,
           (shaders.empty() ? std::string("shaders/ folder not found") : err) + " — heatmaps are drawn in grey levels");

  // The first model: --model, a shipped one, or (benchmark) a random 6 × 8-head model.
  if (opt_.bench_frames > 0) {
    std::string src;
    auto m = bench_model(src);
    worker_->post([m, src](Engine& e) {
      e.model_path.clear();
      e.use_model(m, "random 6-layer 8-head (benchmark)");
      e.set_input(src, "");
    });
    ui_.attn_mode = AttnMode::Model;
    ui_.follow_stage = false;
    act::next_token(*worker_);
    // The measured view: the model view over the whole window (a --script lays out another).
    if (opt_.script.empty()) {
      for (auto& p : panels_) p->open = std::string(p->key()) == "attention";
      bench_layout_ = true;
    }
  } else {
    std::string path = opt_.model;
    if (path.empty()) {
      auto shipped = shipped_models();
      if (!shipped.empty()) path = shipped.front();
    }
    if (!path.empty()) {
      // Open on the whole decode with the last decoder layer's cross-attention (the alignment the
      // task learned): every panel has something to show, and Home starts the walk-through. A
      // decode that takes more than a second (a hub model's 1,000 tokens) opens on its first steps.
      act::load_model(*worker_, path);
      act::run_for(*worker_, 1.0);
      initial_view_ = true;
    }
  }
}

void App::fail(const std::string& message) {
  notify(Message::Error, message);
  exit_code_ = 1;
  if (opt_.headless()) quit(1);
}

App::~App() {
  // Save while the settings handler can still reach the app (ImGui's own save at DestroyContext
  // comes after this destructor).
  save_settings();
  g_ini_path.clear();
  worker_.reset();  // joins the thread
  g_app = nullptr;
}

void App::register_settings() {
  ImGuiSettingsHandler h;
  h.TypeName = "Stepformer";
  h.TypeHash = ImHashStr("Stepformer");
  h.ReadOpenFn = settings_open;
  h.ReadLineFn = settings_line;
  h.WriteAllFn = settings_write;
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

Panel* App::find_panel(const std::string& key) {
  for (auto& p : panels_)
    if (key == p->key()) return p.get();
  return nullptr;
}

void App::show_panel(Panel* p, bool focus) {
  p->open = true;
  if (focus) ImGui::SetWindowFocus(p->title());
}

void App::set_scale(float s) {
  s = std::clamp(s, 0.5f, 4.0f);
  if (s != ui_.scale) fonts_dirty_ = true, ImGui::MarkIniSettingsDirty();
  ui_.scale = s;
}

// Presentation mode also switches to the lecture layout: the stepper across the top, attention
// and the output large below it; the other panels stay a View-menu click away. Leaving it
// restores the panels that were open before.
void App::set_presentation(bool on) {
  if (on == ui_.presentation) return;
  fonts_dirty_ = true;
  ImGui::MarkIniSettingsDirty();
  ui_.presentation = on;
  if (on && lesson_layout_.empty()) {  // a lesson's layout keeps its panels
    open_before_presentation_.clear();
    for (auto& p : panels_) {
      open_before_presentation_ += p->open ? '1' : '0';
      const std::string k = p->key();
      p->open = k == "stepper" || k == "attention" || k == "output";
    }
  } else if (!on && lesson_layout_.empty() && open_before_presentation_.size() == panels_.size()) {
    for (size_t i = 0; i < panels_.size(); ++i) panels_[i]->open = open_before_presentation_[i] == '1';
  }
  reset_layout();
}

bool App::script_done() const { return (!script_ || script_->done()) && !lesson_busy(); }
int App::script_failures() const { return (script_ ? script_->failures() : 0) + (lesson_ ? lesson_->failures() : 0); }

bool App::waiting_on_worker() const { return !worker_->idle(); }

bool App::busy() const {
  return ui_.playing || !worker_->idle() || !script_done() || !shot_path_.empty() || panel_shot_ || fonts_dirty_ ||
         frame_ < 5;
}

// [SECTION] per frame

void App::press_key(int key, bool ctrl) {
  script_key_ = key;
  script_key_ctrl_ = ctrl;
  script_key_phase_ = 1;
}

void App::set_pointer(ImVec2 at, bool click) {
  pointer_ = at;
  pointer_on_ = true;
  pointer_click_ = click ? 1 : 0;
}

void App::apply_pointer() {
  if (!pointer_on_) return;
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = pointer_;
  io.MouseDown[0] = pointer_click_ == 1;
  if (pointer_click_ > 0) pointer_click_ = pointer_click_ == 1 ? 2 : 0;
}

bool App::find_box(const std::string& key, const std::string& name, ImVec2& centre) const {
  const std::vector<std::pair<std::string, ImVec4>>* boxes = nullptr;
  if (key == "menu") {
    boxes = &menu_boxes_;
  } else {
    for (const auto& p : panels_)
      if (p->open && key == p->key()) boxes = &p->boxes;
  }
  if (!boxes) return false;
  const std::pair<std::string, ImVec4>* found = nullptr;
  for (const auto& b : *boxes)
    if (b.first == name) found = &b;
  for (const auto& b : *boxes)
    if (!found && b.first.rfind(name, 0) == 0) found = &b;
  if (!found) return false;
  centre = ImVec2((found->second.x + found->second.z) * 0.5f, (found->second.y + found->second.w) * 0.5f);
  return true;
}

void App::before_frame() {
  if (ImGui::GetIO().WantSaveIniSettings) save_settings();
  if (script_key_phase_ > 0 && script_key_ >= 0 && script_key_ < IM_ARRAYSIZE(ImGui::GetIO().KeysDown)) {
    ImGuiIO& io = ImGui::GetIO();
    const bool down = script_key_phase_ == 1;
    io.KeysDown[script_key_] = down;
    io.KeyCtrl = down && script_key_ctrl_;
    script_key_phase_ = down ? 2 : 0;
  }
  static float built_scale = -1;
  static bool built_presentation = false;
  if (!fonts_dirty_ && built_scale == ui_.scale && built_presentation == ui_.presentation) return;
  const float scale = ui_.scale * (ui_.presentation ? 1.45f : 1.0f);
  build_fonts(fonts_, std::round(16.0f * scale));
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  apply_style(ui_.presentation ? Theme::Projector : Theme::Dark, scale);
  if (!fonts_.from_files && built_scale < 0)
    notify(Message::Warning, "DejaVu fonts not found (install fonts-dejavu-core): using ImGui's built-in font");
  built_scale = ui_.scale;
  built_presentation = ui_.presentation;
  fonts_dirty_ = false;
}

void App::frame() {
  ++frame_;
  snap_ = worker_->snapshot();
  // New worker messages go to the status bar (the newest one shows).
  if (!snap_->log.empty() && snap_->log.back().seq > seen_log_) {
    // The most severe new message wins; an error stays up for a while even if news follows.
    const Message* m = &snap_->log.back();
    for (const Message& x : snap_->log)
      if (x.seq > seen_log_ && x.level > m->level) m = &x;
    const bool keep_error = status_level_ == Message::Error && m->level != Message::Error &&
                            ImGui::GetTime() - status_time_ < 8.0 && !status_text_.empty();
    seen_log_ = snap_->log.back().seq;
    if (!keep_error) {
      status_text_ = m->text;
      status_level_ = m->level;
      status_time_ = ImGui::GetTime();
    }
    if (opt_.headless() || script_ || !opt_.lesson.empty())
      for (const Message& x : snap_->log)
        if (x.seq > printed_log_) {
          std::fprintf(stderr, "%s%s\n",
                       x.level == Message::Error     ? "error: "
                       : x.level == Message::Warning ? "warning: "
                                                     : "",
                       x.text.c_str());
          printed_log_ = x.seq;
        }
  }

  if (initial_view_ && snap_->ok() && worker_->idle()) {
    const Config& c = snap_->model->config;
    ui_.kind = attention_kinds(c).back();  // cross-attention when there is one
    ui_.layer = kind_layers(c, ui_.kind) - 1;
    initial_view_ = false;
  }
  if (snap_->model_name != titled_) {  // the window title names the model
    titled_ = snap_->model_name;
    glfwSetWindowTitle(window_, ("stepformer — " + (titled_.empty() ? std::string("no model") : titled_)).c_str());
  }
  follow_stage();
  // The demos run the model: ask the worker for them only while a panel shows them.
  {
    Panel* pe = find_panel("pe");
    Panel* masks = find_panel("masks");
    const bool order = pe && pe->open, leak = masks && masks->open && ui_.leak_demo;
    if (order != want_order_ || leak != want_leak_) {
      want_order_ = order;
      want_leak_ = leak;
      act::want_demos(*worker_, order, leak);
    }
  }
  lesson_tick();
  if (script_) script_->tick(*this);
  keyboard();
  play_tick();
  menu_bar();
  draw_panels();
  if (!snap_->model && worker_->idle())
    draw_no_model();
  else
    no_model_focused_ = false;
  status_bar();
  if (layout_reset_ > 0) --layout_reset_;
}

}  // namespace sf::gui
