// app.cpp — the explorer's frame: keyboard, menus, panels, status bar, screenshots, settings.
//
// [SECTION] construction (panels, first model, settings handler)
// [SECTION] per frame (fonts, keyboard, play)
// [SECTION] menu bar
// [SECTION] panels and default layout
// [SECTION] status bar and message log
// [SECTION] screenshots and exports
#include "app.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <sys/stat.h>

#include "actions.h"
#include "compare/prepost.h"
#include "backends/imgui_impl_opengl3.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "export.h"
#include "gfx/imgui_math.h"
#include "gfx/screenshot.h"
#include "paths.h"
#include "script.h"
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
  if (g_ini_path.empty()) return;
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
  if (std::sscanf(line, "scale=%f", &f) == 1 && f >= 0.5f && f <= 4.0f) g_app->ui().scale = f;
  else if (std::sscanf(line, "presentation=%d", &i) == 1) g_app->ui().presentation = i != 0;
  else if (std::sscanf(line, "speed=%f", &f) == 1 && f > 0 && f <= 30) g_app->ui().speed = f;
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

App::App(GLFWwindow* window, AppOptions opt) : window_(window), opt_(std::move(opt)) {
  g_app = this;
  worker_ = std::make_unique<Worker>([] { glfwPostEmptyEvent(); });
  panels_.push_back(make_model_panel());
  panels_.push_back(make_stepper_panel());
  panels_.push_back(make_attention_panel());
  panels_.push_back(make_qkv_panel());
  panels_.push_back(make_output_panel());
  panels_.push_back(make_positional_panel());
  panels_.push_back(make_masks_panel());
  panels_.push_back(make_kv_cache_panel());
  panels_.push_back(make_residual_panel());
  for (auto& p : make_prepost_panels()) panels_.push_back(std::move(p));  // compare, training, gradnorms
  for (auto& p : panels_) p->open = p->default_open();
  set_heatmap_export([](const std::string& stem) { return g_app->default_export_path(stem, ".png"); },
                     [](bool ok, const std::string& text) { g_app->notify(ok ? Message::Info : Message::Error, text); });

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
    notify(Message::Warning, (shaders.empty() ? std::string("shaders/ folder not found") : err) +
                                 " — heatmaps are drawn in grey levels");

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
      // task learned): every panel has something to show, and Home starts the walk-through.
      act::load_model(*worker_, path);
      act::run_to_end(*worker_);
      initial_view_ = true;
    }
  }
  if (!opt_.script.empty()) {
    script_ = std::make_unique<ScriptRunner>();
    std::string e;
    if (!script_->load(opt_.script, e)) {
      notify(Message::Error, e);
      exit_code_ = 1;
      if (opt_.headless()) quit(1);
    }
  }
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
  if (on) {
    open_before_presentation_.clear();
    for (auto& p : panels_) {
      open_before_presentation_ += p->open ? '1' : '0';
      const std::string k = p->key();
      p->open = k == "stepper" || k == "attention" || k == "output";
    }
  } else if (open_before_presentation_.size() == panels_.size()) {
    for (size_t i = 0; i < panels_.size(); ++i) panels_[i]->open = open_before_presentation_[i] == '1';
  }
  reset_layout();
}

ImVec4 App::panel_rect(const Panel& p) const {
  if (bench_layout_ && std::string(p.key()) == "attention") return ImVec4(0, 0, 1, 1);
  if (ui_.presentation) {
    const std::string k = p.key();
    if (k == "stepper") return ImVec4(0.0f, 0.0f, 1.0f, 0.47f);
    if (k == "attention") return ImVec4(0.0f, 0.47f, 0.63f, 0.53f);
    if (k == "output") return ImVec4(0.63f, 0.47f, 0.37f, 0.53f);
    return ImVec4(0.12f, 0.10f, 0.76f, 0.80f);  // any other panel opened during the lecture
  }
  return p.default_rect();
}

bool App::script_done() const { return !script_ || script_->done(); }
int App::script_failures() const { return script_ ? script_->failures() : 0; }

bool App::busy() const {
  return ui_.playing || !worker_->idle() || (script_ && !script_->done()) || !shot_path_.empty() || panel_shot_ ||
         fonts_dirty_ || frame_ < 5;
}

// [SECTION] per frame

void App::before_frame() {
  if (ImGui::GetIO().WantSaveIniSettings) save_settings();
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
    if (opt_.headless() || script_)
      for (const Message& x : snap_->log)
        if (x.seq > printed_log_) {
          std::fprintf(stderr, "%s%s\n", x.level == Message::Error ? "error: " : x.level == Message::Warning ? "warning: " : "", x.text.c_str());
          printed_log_ = x.seq;
        }
  }

  if (initial_view_ && snap_->ok() && worker_->idle()) {
    const Config& c = snap_->model->config;
    ui_.kind = c.has_encoder() ? AttnKind::Cross : AttnKind::DecoderSelf;
    ui_.layer = c.n_decoder_layers - 1;
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
  if (script_) script_->tick(*this);
  keyboard();
  play_tick();
  menu_bar();
  draw_panels();
  if (!snap_->model && worker_->idle()) draw_no_model();
  else no_model_focused_ = false;
  status_bar();
  if (demo_window_) ImGui::ShowDemoWindow(&demo_window_);
  if (layout_reset_ > 0) --layout_reset_;
}

// When the stepper enters an attention sublayer, the shared selection shows it (unless the user
// switched "follow stepper" off). A pinned cell is forgotten when the map changes.
void App::follow_stage() {
  if (!snap_->ok()) return;
  const Config& c = snap_->model->config;
  if (ui_.kind == AttnKind::EncoderSelf && !c.has_encoder()) ui_.kind = AttnKind::DecoderSelf;
  if (ui_.kind == AttnKind::Cross && !c.has_encoder()) ui_.kind = AttnKind::DecoderSelf;
  if (snap_->generation == followed_gen_) return;
  followed_gen_ = snap_->generation;
  if (!ui_.follow_stage || snap_->cursor == followed_cursor_) return;
  followed_cursor_ = snap_->cursor;
  const Stage& st = snap_->stage;
  const bool attn = st.kind == StageKind::SelfAttention || st.kind == StageKind::CrossAttention ||
                    ((st.kind == StageKind::Norm || st.kind == StageKind::AddNorm) && st.block != Block::FeedForward);
  if (!attn || st.layer < 0) return;
  AttnKind k = st.side == Side::Encoder ? AttnKind::EncoderSelf
               : (st.kind == StageKind::CrossAttention || st.block == Block::CrossAttention) ? AttnKind::Cross
                                                                                             : AttnKind::DecoderSelf;
  if (k != ui_.kind || st.layer != ui_.layer) ui_.cell_pinned = false;
  ui_.kind = k;
  ui_.layer = st.layer;
}

void App::keyboard() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || prepost_owns_keyboard()) return;  // the compare view steps its own runs
  const auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), true); };
  const bool ctrl = io.KeyCtrl;
  // Window-level keys work with or without a model.
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) set_presentation(!ui_.presentation);
  if (ctrl && ImGui::IsKeyPressed(GLFW_KEY_Q, false)) quit(0);
  if (ctrl && (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false)))
    set_scale(ui_.scale + 0.25f);
  if (ctrl && (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false)))
    set_scale(ui_.scale - 0.25f);
  if (ctrl && ImGui::IsKeyPressed(GLFW_KEY_0, false)) set_scale(1.0f);
  if (!snap_->ok()) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) {
    ui_.playing = !ui_.playing;
    ui_.last_play = ImGui::GetTime();
    if (ui_.playing && snap_->session->at_end()) act::home(*worker_);  // play again from the start
  }
  if (pressed(ImGuiKey_RightArrow)) ctrl ? act::next_token(*worker_) : act::forward(*worker_);
  if (pressed(ImGuiKey_LeftArrow)) ctrl ? act::prev_token(*worker_) : act::back(*worker_);
  if (pressed(ImGuiKey_DownArrow) || pressed(ImGuiKey_PageDown)) act::next_token(*worker_);
  if (pressed(ImGuiKey_UpArrow) || pressed(ImGuiKey_PageUp)) act::prev_token(*worker_);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) act::home(*worker_);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) act::run_to_end(*worker_);
}

void App::play_tick() {
  if (!ui_.playing) return;
  if (!snap_->ok() || (snap_->session->at_end() && worker_->idle() && ImGui::GetTime() - ui_.last_play > 0.5)) {
    ui_.playing = false;
    return;
  }
  const double now = ImGui::GetTime();
  if (now - ui_.last_play >= 1.0 / ui_.speed && worker_->idle()) {
    ui_.last_play = now;
    act::forward(*worker_);
  }
}

// [SECTION] menu bar

void App::menu_bar() {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open model…")) show_panel(find_panel("model"));
    if (ImGui::MenuItem("Export recording…")) {
      show_export_ = true;
      std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".safetensors").c_str());
    }
    if (ImGui::MenuItem("Screenshot (whole window)")) {
      const std::string p = default_export_path("window", ".png");
      request_screenshot(p);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit(0);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (auto& p : panels_) {
      bool o = p->open;
      if (ImGui::MenuItem(p->title(), nullptr, &o)) {
        if (o) show_panel(p.get());
        else p->open = false;
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Show all panels"))
      for (auto& p : panels_) p->open = true;
    if (ImGui::MenuItem("Reset layout")) {
      for (auto& p : panels_) p->open = p->default_open();
      reset_layout();
    }
    ImGui::Separator();
    bool pres = ui_.presentation;
    if (ImGui::MenuItem("Presentation mode", "F11", &pres)) set_presentation(pres);
    float s = ui_.scale;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::SliderFloat("UI scale", &s, 0.75f, 3.0f, "%.2f×")) set_scale(std::round(s * 4) / 4);
    ImGui::MenuItem("Message log", nullptr, &show_log_);
    ImGui::MenuItem("ImGui demo (debug)", nullptr, &demo_window_);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Keyboard and about", nullptr, &show_about_);
    ImGui::EndMenu();
  }
  // The stepper's position, always visible.
  if (snap_->ok()) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 2);
    ImGui::TextDisabled("%s", snap_->model_name.c_str());
    ImGui::SameLine(0, ImGui::GetFontSize());
    ImGui::PushStyleColor(ImGuiCol_Text, palette().accent);
    ImGui::Text("stage %d/%d%s  ·  %s", snap_->cursor + 1, static_cast<int>(snap_->stages.size()),
                snap_->session->finished() ? "" : "+", snap_->stage.title.c_str());
    ImGui::PopStyleColor();
  }
  if (ui_.playing) {
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::GetFontSize() * 6);
    ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "▶ playing");
  }
  ImGui::EndMainMenuBar();

  if (show_about_) {
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("Keyboard and about", &show_about_)) {
      heading(fonts_, "Keyboard");
      ImGui::TextUnformatted(
          "Space        play / pause\n"
          "→ / ←        one stage forward / back\n"
          "↓ / ↑        next / previous token (also Ctrl+→ / Ctrl+←, PgDn / PgUp)\n"
          "Home / End   first stage / decode to the end\n"
          "F11          presentation mode (large text, high contrast)\n"
          "Ctrl + / −   UI scale;  Ctrl 0 resets it");
      ImGui::Separator();
      ImGui::TextWrapped(
          "stepformer steps through a Transformer one stage at a time. Every number shown is read from the "
          "recording of the run: hover any heatmap cell for its value and the formula that produced it. "
          "Right-click a panel's title bar to export it as PNG.");
    }
    ImGui::End();
  }
  if (show_export_) {
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("Export recording", &show_export_)) {
      ImGui::TextWrapped("The whole recording (encoder and every decoder step) as named tensors. The extension "
                         "chooses the format: .safetensors (one file), .npy (a folder of .npy files), .csv (a folder "
                         "of CSV files, one per head for attention maps).");
      ImGui::SetNextItemWidth(-1);
      ImGui::InputText("##path", export_path_, sizeof export_path_);
      if (ImGui::Button("Export")) {
        std::string e;
        if (export_recording(export_path_, e)) {
          notify(Message::Info, std::string("exported the recording to ") + export_path_);
          show_export_ = false;
        } else {
          notify(Message::Error, e);
        }
      }
      ImGui::SameLine();
      if (ImGui::Button(".safetensors")) std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".safetensors").c_str());
      ImGui::SameLine();
      if (ImGui::Button(".npy")) std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".npy").c_str());
      ImGui::SameLine();
      if (ImGui::Button(".csv")) std::snprintf(export_path_, sizeof export_path_, "%s", default_export_path("recording", ".csv").c_str());
    }
    ImGui::End();
  }
}

// [SECTION] panels and default layout

void App::draw_no_model() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.45f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 36, 0));
  if (!no_model_focused_) ImGui::SetNextWindowFocus();  // in front of the panels when it appears
  no_model_focused_ = true;
  ImGui::Begin("No model loaded", nullptr,
               ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_AlwaysAutoResize);
  ImGui::PushFont(fonts_.big);
  ImGui::TextUnformatted("No model loaded");
  ImGui::PopFont();
  ImGui::TextWrapped(
      "No shipped model was found in assets/models/ (copy-preln.safetensors, reverse-preln.safetensors, …). "
      "Open a .safetensors model in the \"Model & input\" panel, or create one with\n"
      "  stepformer init --config C.json --seed 1 --out M.safetensors");
  for (auto it = snap_->log.rbegin(); it != snap_->log.rend(); ++it)
    if (it->level == Message::Error) {
      text_coloured_wrapped(palette().error, it->text.c_str());
      break;
    }
  if (ImGui::Button("Open the Model & input panel")) show_panel(find_panel("model"));
  ImGui::End();
}

void App::draw_panels() {
  // The work area between the menu bar and the status bar (computed here: ImGui updates the
  // viewport's work area only a frame after the menu bar first appears).
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight() + 4, menu_h = ImGui::GetFrameHeight();
  const ImVec2 wp(vp->Pos.x, vp->Pos.y + menu_h), ws(vp->Size.x, vp->Size.y - menu_h - status_h);
  const Palette& pal = palette();
  Ctx ctx{*snap_, ui_, *worker_, fonts_, *this};
  // A panel that overlaps no other window leaves its background to glClear (same colour): under
  // a software rasteriser (Mesa llvmpipe) blending every window's full background costs ~40% of
  // the frame. Overlapping panels (decided from the last frame) keep an opaque background.
  std::vector<std::pair<std::string, ImRect>> others;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (w->WasActive && !w->Hidden && !(w->Flags & (ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip)) &&
        std::string(w->Name) != "##status" && std::string(w->Name) != "##MainMenuBar")
      others.push_back({w->Name, w->Rect()});
  const auto alone = [&](const Panel& p) {
    if (layout_reset_ > 0 || frame_ < 3 || p.size.x <= 0) return false;
    const ImRect r(p.pos, p.pos + p.size);
    bool seen = false;
    for (const auto& [name, o] : others) {
      if (name == p.title()) {
        seen = true;
        continue;
      }
      if (o.Overlaps(r)) return false;
    }
    return seen;  // a panel that just appeared draws its background until it has been laid out
  };
  // Which panels are open is remembered with the layout.
  std::string open_now;
  for (auto& p : panels_) open_now += p->open ? '1' : '0';
  if (open_now != open_before_) {
    if (!open_before_.empty()) ImGui::MarkIniSettingsDirty();
    open_before_ = open_now;
  }
  for (auto& p : panels_) {
    if (!p->open) continue;
    const ImVec4 r = panel_rect(*p);
    const ImGuiCond cond = layout_reset_ > 0 ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(ImVec2(wp.x + r.x * ws.x, wp.y + r.y * ws.y), cond);
    ImGui::SetNextWindowSize(ImVec2(r.z * ws.x, r.w * ws.y), cond);
    if (alone(*p)) ImGui::SetNextWindowBgAlpha(0.0f);
    if (!ImGui::Begin(p->title(), &p->open)) {
      ImGui::End();
      continue;
    }
    // Right-click on the title bar: export this panel.
    if (ImGui::BeginPopupContextItem("panel menu")) {
      if (ImGui::MenuItem("Export panel as PNG")) request_panel_png(p.get(), default_export_path(p->key(), ".png"));
      if (ImGui::MenuItem("Export heatmap as PNG")) {
        std::string e, path = default_export_path(std::string(p->key()) + "-heatmap", ".png");
        if (p->export_heatmap(path, e)) notify(Message::Info, "wrote " + path);
        else notify(Message::Error, e);
      }
      if (ImGui::MenuItem("Hide")) p->open = false;
      ImGui::EndPopup();
    }
    p->pos = ImGui::GetWindowPos();
    p->size = ImGui::GetWindowSize();
    p->heat_rect = p->mark_rect = ImVec4(0, 0, 0, 0);
    p->Draw(ctx);
    ImGui::End();
  }
  (void)pal;
}

// [SECTION] status bar and message log

void App::notify(Message::Level level, const std::string& text) {
  ui_log_.push_back({level, text, 0});
  status_text_ = text;
  status_level_ = level;
  status_time_ = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.001;
  if (opt_.headless() || !opt_.script.empty())
    std::fprintf(stderr, "%s%s\n", level == Message::Error ? "error: " : level == Message::Warning ? "warning: " : "", text.c_str());
}

void App::status_bar() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float h = ImGui::GetFrameHeight() + 4;
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x, vp->WorkPos.y + vp->WorkSize.y - h));
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x, h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8, 2));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("##status", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoBringToFrontOnFocus);
  const Palette& pal = palette();
  if (ImGui::SmallButton("Log")) show_log_ = !show_log_;
  ImGui::SameLine();
  if (!worker_->idle()) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "working…");
    ImGui::SameLine();
  }
  if (!status_text_.empty()) {
    const ImU32 c = status_level_ == Message::Error ? pal.error : status_level_ == Message::Warning ? pal.warn : pal.text_dim;
    const char* icon = status_level_ == Message::Error ? "✖ " : status_level_ == Message::Warning ? "⚠ " : "";
    ImGui::PushStyleColor(ImGuiCol_Text, c);
    ImGui::Text("%s%s", icon, status_text_.c_str());
    ImGui::PopStyleColor();
  } else {
    ImGui::TextDisabled("Space play/pause · → ← stage · ↓ ↑ token · Home/End · F11 presentation");
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
  if (status_time_ > 0 && ImGui::GetTime() - status_time_ > 12.0 && status_level_ == Message::Info) {
    status_text_.clear();
    status_time_ = 0;
  }

  if (show_log_) {
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 44, ImGui::GetFontSize() * 18), ImGuiCond_FirstUseEver);
    if (ImGui::Begin("Message log", &show_log_)) {
      std::vector<const Message*> all;
      for (auto& m : snap_->log) all.push_back(&m);
      for (auto& m : ui_log_) all.push_back(&m);
      for (const Message* m : all) {
        const ImU32 c = m->level == Message::Error ? pal.error : m->level == Message::Warning ? pal.warn : pal.text;
        text_coloured_wrapped(c, m->text.c_str());
      }
      if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY()) ImGui::SetScrollHereY(1.0f);
    }
    ImGui::End();
  }
}

// [SECTION] screenshots and exports

void App::request_screenshot(const std::string& path) {
  shot_path_ = path;
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
      if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
    }
    return o;
  };
  const auto rect = [](ImVec4 r) {
    char b[96];
    std::snprintf(b, sizeof b, "[%d, %d, %d, %d]", static_cast<int>(r.x), static_cast<int>(r.y), static_cast<int>(r.z), static_cast<int>(r.w));
    return std::string(b);
  };
  if (snap_ && snap_->ok()) {
    j += ",\n  \"cursor\": " + std::to_string(snap_->cursor) + ", \"stages\": " + std::to_string(snap_->stages.size());
    j += ",\n  \"stage\": \"" + esc(snap_->stage.title) + "\"";
    j += ",\n  \"finished\": " + std::string(snap_->session->finished() ? "true" : "false");
    j += ",\n  \"output\": \"" + esc(snap_->session->text()) + "\"";
  }
  j += ",\n  \"model\": \"" + esc(snap_ ? snap_->model_name : "") + "\"";
  j += ",\n  \"status\": \"" + esc(status_text_) + "\"";  // what the status bar shows
  j += ",\n  \"panels\": {";
  bool first = true;
  for (auto& p : panels_) {
    if (!p->open) continue;
    j += std::string(first ? "" : ",") + "\n    \"" + p->key() + "\": {\"rect\": " +
         rect(ImVec4(p->pos.x, p->pos.y, p->pos.x + p->size.x, p->pos.y + p->size.y)) + ", \"heatmap\": " + rect(p->heat_rect) +
         ", \"mark\": " + rect(p->mark_rect) + "}";
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
      write_layout_json(shot_path_ + ".json", fw, fh);  // first: its status is the one in the picture
      notify(Message::Info, "wrote " + shot_path_);
    } else {
      notify(Message::Error, e);
      exit_code_ = 1;
    }
    shot_path_.clear();
  }
}

}  // namespace sf::gui
