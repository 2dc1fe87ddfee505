// script.cpp — parsing and running explorer scripts (the language is documented in
// docs/explorer.md and in `help_text` below).
#include "script.h"

#include <sys/stat.h>
#include <unistd.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "actions.h"
#include "app.h"
#include "analysis/worked_attention.h"
#include "compare/prepost.h"
#include "lesson.h"
#include "inspect/inspect_panel.h"
#include "paths.h"
#include "script_parse.h"

namespace sf::gui {

namespace {

bool parse_kind(const std::string& s, AttnKind& k) {
  if (s == "enc-self" || s == "encoder" || s == "enc") return k = AttnKind::EncoderSelf, true;
  if (s == "dec-self" || s == "decoder" || s == "dec" || s == "self") return k = AttnKind::DecoderSelf, true;
  if (s == "cross") return k = AttnKind::Cross, true;
  return false;
}

// "F11", "Ctrl+=", "Space", "PageDown", … as a GLFW key code (what the keyboard handlers test).
bool parse_key(const std::string& text, int& code, bool& ctrl) {
  std::string k = text;
  ctrl = k.rfind("Ctrl+", 0) == 0;
  if (ctrl) k = k.substr(5);
  static const std::pair<const char*, int> named[] = {{"Space", GLFW_KEY_SPACE},
                                                      {"Left", GLFW_KEY_LEFT},
                                                      {"Right", GLFW_KEY_RIGHT},
                                                      {"Up", GLFW_KEY_UP},
                                                      {"Down", GLFW_KEY_DOWN},
                                                      {"PageUp", GLFW_KEY_PAGE_UP},
                                                      {"PageDown", GLFW_KEY_PAGE_DOWN},
                                                      {"Home", GLFW_KEY_HOME},
                                                      {"End", GLFW_KEY_END},
                                                      {"=", GLFW_KEY_EQUAL},
                                                      {"+", GLFW_KEY_EQUAL},
                                                      {"-", GLFW_KEY_MINUS}};
  for (const auto& [name, c] : named)
    if (k == name) return code = c, true;
  int n;
  if (k.size() >= 2 && k[0] == 'F' && parse_int(k.substr(1), n) && n >= 1 && n <= 12)
    return code = GLFW_KEY_F1 + n - 1, true;
  if (k.size() == 1 && std::isalnum(static_cast<unsigned char>(k[0])))
    return code = std::toupper(static_cast<unsigned char>(k[0])), true;  // GLFW: '0'..'9', 'A'..'Z'
  return false;
}

// Posts a change of the decoding settings.
uint64_t change_settings(Worker& w, std::function<void(DecodeSettings&)> f) {
  return w.post([f](Engine& e) {
    DecodeSettings s = e.settings;
    f(s);
    e.set_settings(s);
  });
}

// "expected USAGE" unless the line has at least n words (the command's included).
bool need(const std::vector<std::string>& a, size_t n, std::string& error, const char* usage) {
  if (a.size() >= n) return true;
  error = std::string("'") + a[0] + "': expected " + usage;
  return false;
}

// The optional count after the command (`def` without one); −1 with `error` when it is not one.
int count(const std::vector<std::string>& a, int def, std::string& error) {
  int n = def;
  if (a.size() > 1 && (!parse_int(a[1], n) || n < 0)) {
    error = "'" + a[0] + "': expected a count, found '" + a[1] + "'";
    return -1;
  }
  return n;
}

// attention layer=N head=N kind=… view=… heads=all|one follow=on|off: what the Attention panel
// shows, checked against the model.
bool select_attention(App& app, const std::vector<std::string>& a, std::string& error) {
  UiState& ui = app.ui();
  const auto snap = app.snapshot();
  app.show_panel(app.find_panel("attention"));
  for (size_t i = 1; i < a.size(); ++i) {
    const size_t eq = a[i].find('=');
    if (eq == std::string::npos) return error = "attention: expected key=value, found '" + a[i] + "'", false;
    const std::string k = a[i].substr(0, eq), v = a[i].substr(eq + 1);
    int n;
    bool b;
    if (k == "layer" && parse_int(v, n) && n >= 0)
      ui.layer = n, ui.follow_stage = false;
    else if (k == "head" && parse_int(v, n) && n >= 0)
      ui.head = n;
    else if (k == "kind" && parse_kind(v, ui.kind))
      ui.follow_stage = false;
    else if (k == "view" && v == "heatmap")
      ui.attn_mode = AttnMode::Heatmap;
    else if (k == "view" && v == "model")
      ui.attn_mode = AttnMode::Model;
    else if (k == "view" && v == "head")
      ui.attn_mode = AttnMode::Head;
    else if (k == "view" && v == "rollout")
      ui.attn_mode = AttnMode::Rollout;
    else if (k == "heads" && (v == "all" || v == "one"))
      ui.head_view_all = v == "all";
    else if (k == "follow" && parse_onoff(v, b))
      ui.follow_stage = b;
    else
      return error = "attention: bad '" + a[i] +
                     "' (layer=N head=N kind=enc-self|dec-self|cross view=heatmap|model|head|rollout heads=all|one "
                     "follow=on|off)",
             false;
  }
  if (snap->model) {
    const Config& c = snap->model->config;
    const int layers = kind_layers(c, ui.kind), heads = kind_heads(c, ui.kind);
    if (!has_kind(c, ui.kind))
      return error = std::string("attention: ") + (c.has_decoder() ? "a decoder-only" : "an encoder-only") +
                     " model has no " + to_string(ui.kind),
             false;
    if (ui.layer >= layers)
      return error = "attention: layer " + std::to_string(ui.layer) + " does not exist (the model has " +
                     std::to_string(layers) + ")",
             false;
    if (ui.head >= heads)
      return error = "attention: head " + std::to_string(ui.head) + " does not exist (the model has " +
                     std::to_string(heads) + ")",
             false;
  }
  return true;
}

// pe-view TAB [k=N phi=N t=N dim=N dim2=N layer=N head=N pair=N m=N n=N]: the Positions panel's
// tab and its settings.
bool select_pe_view(App& app, const std::vector<std::string>& a, std::string& error) {
  UiState& ui = app.ui();
  static const char* tabs[] = {"curves", "similarity", "rotation", "order", "rotary"};
  if (!need(a, 2, error, "curves | similarity | rotation | order | rotary")) return false;
  int t = -1;
  for (int i = 0; i < 5; ++i)
    if (a[1] == tabs[i]) t = i;
  if (t < 0)
    return error = "pe-view: expected curves, similarity, rotation, order or rotary, found '" + a[1] + "'", false;
  ui.pe_tab_request = t;
  for (size_t i = 2; i < a.size(); ++i) {
    int n;
    const size_t eq = a[i].find('=');
    const std::string k = eq == std::string::npos ? a[i] : a[i].substr(0, eq);
    if (eq == std::string::npos || !parse_int(a[i].substr(eq + 1), n) || n < 0)
      return error = "pe-view: expected k=N phi=N t=N dim=N dim2=N layer=N head=N pair=N m=N n=N, found '" + a[i] + "'",
             false;
    if (k == "k")
      ui.pe_k = n;
    else if (k == "phi")
      ui.pe_phi = n;
    else if (k == "t")
      ui.pe_t = n;
    else if (k == "dim")
      ui.pe_dims[0] = n;
    else if (k == "dim2")
      ui.pe_dims[1] = n;
    else if (k == "layer")
      ui.rope_layer = n;
    else if (k == "head")
      ui.rope_head = n;
    else if (k == "pair")
      ui.rope_pair = n;
    else if (k == "m")
      ui.rope_m = n;
    else if (k == "n")
      ui.rope_n = n;
    else
      return error = "pe-view: unknown setting '" + k + "' (k, phi, t, dim, dim2, layer, head, pair, m, n)", false;
  }
  app.show_panel(app.find_panel("pe"));
  return true;
}

}  // namespace

bool ScriptRunner::load(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "script '" + path + "': cannot open (missing file or no permission)";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const size_t slash = path.find_last_of('/');
  dir_ = slash == std::string::npos ? "." : path.substr(0, slash);
  load_text(ss.str(), path);
  return true;
}

void ScriptRunner::load_text(const std::string& text, const std::string& name) {
  name_ = name;
  for (ScriptLine& l : split_script(text)) lines_.push_back({l.number, std::move(l.text)});
}

void ScriptRunner::load_lines(const std::vector<ScriptLine>& lines, const std::string& name, const std::string& dir) {
  name_ = name;
  dir_ = dir;
  for (const ScriptLine& l : lines) lines_.push_back({l.number, l.text});
}

std::string ScriptRunner::resolve(const std::string& path, bool model) const {
  std::vector<std::string> c = {path};
  if (!path.empty() && path[0] != '/') c.push_back(dir_ + "/" + path);
  for (auto& p : c)
    if (file_exists(p) || (model && dir_exists(p))) return p;  // a model may be a Hugging Face folder
  return model ? find_model(path) : path;                      // a shipped model, or the loader's message
}

void ScriptRunner::fail(App& app, const Line& l, const std::string& what) {
  ++failures_;
  last_failed_ = true;
  last_failure_ = name_ + ":" + std::to_string(l.number) + ": " + what;
  app.notify(Message::Error, "script " + last_failure_);
}

void ScriptRunner::tick(App& app) {
  if (frames_ > 0) {
    --frames_;
    return;
  }
  // A script that opened a lesson or moved it on waits until the lesson's step is set up.
  if (!safe_ && app.lesson_busy()) return;
  if (until_) {
    std::string e;
    if (!until_(e)) return;
    until_ = nullptr;
    if (!e.empty() && current_) fail(app, *current_, e);
    frames_ = 2;
    return;
  }
  Worker& w = app.worker();
  if (waiting_) {
    if (!w.idle() || app.snapshot()->ticket < last_ticket_) return;
    waiting_ = false;
    const auto snap = app.snapshot();
    if (snap->last_error_ticket >= first_ticket_ && snap->last_error_ticket <= last_ticket_ && current_) {
      std::string msg = "failed";
      for (auto it = snap->log.rbegin(); it != snap->log.rend(); ++it)
        if (it->level == Message::Error && it->ticket == snap->last_error_ticket) {
          msg = it->text;
          break;
        }
      fail(app, *current_, msg);
    }
    frames_ = 2;
    return;
  }
  if (app.screenshot_pending() || next_ >= lines_.size()) return;
  // A screenshot or an export waits for what the worker still computes for the picture (the model
  // view's thumbnails, asked for by the frames since the last command).
  if (!w.idle()) {
    const std::vector<std::string> a = split_words(lines_[next_].text);
    if (!a.empty() && (a[0] == "screenshot" || a[0].rfind("export-", 0) == 0)) return;
  }
  const Line& l = lines_[next_++];
  current_ = &l;
  const uint64_t before = w.posted();
  const int failures_before = failures_;
  std::string error;
  if (!run(app, l, error)) fail(app, l, error);
  if (failures_ == failures_before) last_failed_ = false;
  if (w.posted() > before) {
    waiting_ = true;
    first_ticket_ = before + 1;
    last_ticket_ = w.posted();
  } else {
    frames_ = std::max(frames_, 2);  // `wait N` keeps its N
  }
}

bool ScriptRunner::make_safe(App& app, std::vector<std::string>& a, const Line& l, std::string& placed,
                             std::string& error) {
  if (!check_safe_command(a, safe_->limits, error)) return false;
  // Models and compared files are read only; a missing one is named (and a FIFO or device,
  // which could block the worker, is refused).
  const auto readable = [&](const std::string& path) {
    const std::string p = resolve(path, true);
    if (file_exists(p) || dir_exists(p)) return true;
    error = a[0] + ": no model file or folder '" + path + "' (looked in the working folder, the lesson's folder " +
            dir_ + " and assets/models/)";
    return false;
  };
  if (a[0] == "model" && a.size() > 1 && a[1] != "default" && !readable(a[1])) return false;
  if (a[0] == "compare" && a.size() > 3 && a[1] == "files" && (!readable(a[2]) || !readable(a[3]))) return false;
  const size_t k = static_cast<size_t>(output_word(a));
  if (k == 0 || a.size() <= k) return true;
  if (safe_->written >= safe_->limits.max_exports)
    return error = a[0] + ": a lesson writes at most " + std::to_string(safe_->limits.max_exports) + " files", false;
  const std::string asked = a[0] == "screenshot" ? rest_after(l.text, a[0]) : a[k];
  auto p = place_export(safe_->exports, asked, output_is_folder(a));
  if (!p) return error = a[0] + ": " + p.error(), false;
  ++safe_->written;
  placed = p->path;
  a[k] = placed;
  app.notify(Message::Info, "lesson export '" + asked + "' goes to " + placed +
                                (p->rewritten ? " (lessons write only new files in the exports folder)" : ""));
  return true;
}

bool ScriptRunner::run(App& app, const Line& l, std::string& error) {
  std::vector<std::string> a = split_words(l.text);
  if (a.empty()) return true;  // split_script keeps no blank line; defensive all the same
  std::string placed;          // safe mode: where this line's output goes
  if (safe_) {
    if (!make_safe(app, a, l, placed, error)) return false;
    if (!placed.empty() && !run(app, a, l, placed, error)) {
      // The command refused (no such panel, …): its empty reservation goes again.
      struct stat st;
      if (lstat(placed.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) unlink(placed.c_str());
      if (lstat(placed.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) rmdir(placed.c_str());
      return false;
    }
    if (!placed.empty()) return true;
  }
  return run(app, a, l, placed, error);
}

// Model, input, source, target: the model and what it reads.
int ScriptRunner::run_input_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string&,
                                    std::string& error) {
  const std::string& cmd = a[0];
  Worker& w = app.worker();
  const auto snap = app.snapshot();
  if (cmd == "model") {
    if (!need(a, 2, error, "a model file: model PATH | model default")) return false;
    std::string path = a[1];
    if (path == "default") {
      auto shipped = shipped_models();
      if (shipped.empty()) return error = "model default: no shipped model in assets/models/", false;
      path = shipped.front();
    }
    act::load_model(w, resolve(path, true));
    return true;
  }
  if (cmd == "input" || cmd == "source") {
    const std::string src = rest_after(l.text, cmd);
    const std::string tgt = snap->tgt_text;
    act::set_input(w, src, tgt);
    return true;
  }
  if (cmd == "target") {
    const std::string tgt = rest_after(l.text, cmd);
    act::set_input(w, snap->src_text, tgt);
    return true;
  }
  return -1;
}

// Decode, temperature, top-p, top-k, beam-width, seed, max-len, cache, pe, causal: how it decodes.
int ScriptRunner::run_decoding_command(App& app, const std::vector<std::string>& a, const Line&, const std::string&,
                                       std::string& error) {
  const std::string& cmd = a[0];
  Worker& w = app.worker();
  if (cmd == "decode") {
    if (!need(a, 2, error, "greedy | sample | beam | forced")) return false;
    Strategy s;
    if (a[1] == "greedy")
      s = Strategy::Greedy;
    else if (a[1] == "sample")
      s = Strategy::Sample;
    else if (a[1] == "beam")
      s = Strategy::Beam;
    else if (a[1] == "forced")
      s = Strategy::Forced;
    else
      return error = "decode: expected greedy, sample, beam or forced, found '" + a[1] + "'", false;
    change_settings(w, [s](DecodeSettings& d) { d.strategy = s; });
    return true;
  }
  if (cmd == "temperature" || cmd == "top-p") {
    float v;
    if (!need(a, 2, error, "a number") || !parse_float(a[1], v)) return error = cmd + ": expected a number", false;
    const bool t = cmd == "temperature";
    change_settings(w, [t, v](DecodeSettings& d) { (t ? d.temperature : d.top_p) = v; });
    return true;
  }
  if (cmd == "top-k" || cmd == "beam-width" || cmd == "seed" || cmd == "max-len") {
    int v;
    if (!need(a, 2, error, "an integer") || !parse_int(a[1], v) || v < 0)
      return error = cmd + ": expected an integer ≥ 0", false;
    const std::string c = cmd;
    change_settings(w, [c, v](DecodeSettings& d) {
      if (c == "top-k")
        d.top_k = v;
      else if (c == "beam-width")
        d.beam_width = v;
      else if (c == "seed")
        d.seed = static_cast<uint64_t>(v);
      else
        d.max_len = v;
    });
    return true;
  }
  if (cmd == "cache" || cmd == "pe" || cmd == "causal") {
    bool on;
    if (!need(a, 2, error, "on | off") || !parse_onoff(a[1], on)) return error = cmd + ": expected on or off", false;
    if (cmd == "cache")
      act::set_cache(w, on);
    else if (cmd == "pe")
      change_settings(w, [on](DecodeSettings& d) { d.run.positional_encoding = on; });
    else
      change_settings(w, [on](DecodeSettings& d) { d.run.causal_mask = on; });
    return true;
  }
  return -1;
}

// Step, back, next-token, prev-token, jump, home, end, run, reset, speed, play: moving the stepper.
int ScriptRunner::run_stepping_command(App& app, const std::vector<std::string>& a, const Line&, const std::string&,
                                       std::string& error) {
  const std::string& cmd = a[0];
  Worker& w = app.worker();
  UiState& ui = app.ui();
  if (cmd == "step" || cmd == "back" || cmd == "next-token" || cmd == "prev-token") {
    const int n = count(a, 1, error);
    if (n < 0) return false;
    for (int i = 0; i < n; ++i) {
      if (cmd == "step")
        act::forward(w);
      else if (cmd == "back")
        act::back(w);
      else if (cmd == "next-token")
        act::next_token(w);
      else
        act::prev_token(w);
    }
    return true;
  }
  if (cmd == "jump") {
    int s;
    if (!need(a, 2, error, "a stage index") || !parse_int(a[1], s) || s < 0)
      return error = "jump: expected a stage index ≥ 0", false;
    act::jump(w, s);
    return true;
  }
  if (cmd == "home") return act::home(w), true;
  if (cmd == "end" || cmd == "run") return act::run_to_end(w), true;
  if (cmd == "reset") return act::reset(w), true;
  if (cmd == "speed") {
    float s;
    if (!need(a, 2, error, "stages per second") || !parse_float(a[1], s) || s <= 0)
      return error = "speed: expected a positive number", false;
    ui.speed = s;
    return true;
  }
  if (cmd == "play") {
    bool on = true;
    if (a.size() > 1 && !parse_onoff(a[1], on)) return error = "play: expected on or off", false;
    ui.playing = on;
    return true;
  }
  return -1;
}

// Panel, panels, scale, presentation, layout, key, and the lesson commands: the window.
int ScriptRunner::run_window_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string&,
                                     std::string& error) {
  const std::string& cmd = a[0];
  if (cmd == "panel") {
    if (!need(a, 2, error, "a panel name")) return false;
    Panel* p = app.find_panel(a[1]);
    if (!p) {
      std::string names;
      for (auto& q : app.panels()) names += std::string(names.empty() ? "" : ", ") + q->key();
      return error = "panel: no panel '" + a[1] + "' (panels: " + names + ")", false;
    }
    bool on = true;
    if (a.size() > 2 && !parse_onoff(a[2], on)) return error = "panel: expected on or off after the name", false;
    if (on)
      app.show_panel(p);
    else
      p->open = false;
    return true;
  }
  if (cmd == "panels") {
    bool on;
    if (!need(a, 2, error, "on | off | default")) return false;
    if (a[1] == "default") {
      for (auto& p : app.panels()) p->open = p->default_open();
      return true;
    }
    if (!parse_onoff(a[1], on)) return error = "panels: expected on, off or default", false;
    for (auto& p : app.panels()) p->open = on;
    return true;
  }
  if (cmd == "scale") {
    float s;
    if (!need(a, 2, error, "a number") || !parse_float(a[1], s) || s < 0.5f || s > 4.0f)
      return error = "scale: expected a number in [0.5, 4]", false;
    app.set_scale(s);
    return true;
  }
  if (cmd == "presentation") {
    bool on;
    if (!need(a, 2, error, "on | off") || !parse_onoff(a[1], on))
      return error = "presentation: expected on or off", false;
    app.set_presentation(on);
    return true;
  }
  if (cmd == "layout") {
    if (a.size() == 2 && a[1] == "reset") return app.clear_lesson_layout(), app.reset_layout(), true;
    auto plan = parse_layout(a);
    if (!plan) return error = plan.error(), false;
    for (const LayoutItem& it : plan->items)
      if (!app.find_panel(it.panel) || it.panel == "caption")
        return error = "layout: no panel '" + it.panel + "' to place (the caption always spans the top)", false;
    app.set_lesson_layout(*plan);
    return true;
  }
  if (cmd == "caption" || cmd == "worked" || cmd == "lesson") return run_lesson_command(app, a, l, error);
  if (cmd == "key") {
    // A key press through the keyboard handlers: F1..F12, Ctrl+KEY, Space, PageUp/PageDown, arrows, Home, End.
    if (!need(a, 2, error, "a key: F11, Ctrl+=, Ctrl+-, Ctrl+0, Space, PageDown, …")) return false;
    int code = -1;
    bool ctrl = false;
    if (!parse_key(a[1], code, ctrl))
      return error = "key: unknown key '" + a[1] +
                     "' (F1..F12, Ctrl+X, Space, Left, Right, Up, Down, PageUp, PageDown, Home, End)",
             false;
    app.press_key(code, ctrl);
    return true;
  }
  if (cmd == "wait-box") {
    // Waits (any number of frames) until a panel draws a box of that name: state, not time.
    if (!need(a, 3, error, "PANEL BOX NAME")) return false;
    const std::string key = a[1], name = rest_after(rest_after(l.text, cmd), a[1]);
    until_ = [&app, key, name](std::string&) {
      ImVec2 at;
      return app.find_box(key, name, at);
    };
    return true;
  }
  if (cmd == "hover" || cmd == "click") {
    // The pointer as a mouse moves it: at X Y (pixels), or at the centre of a box a panel drew
    // in the last frame (its name as the screenshot's JSON lists it; "menu" for the menu bar).
    if (!need(a, 2, error, "X Y | PANEL BOX NAME | off")) return false;
    if (cmd == "hover" && a.size() == 2 && a[1] == "off") return app.release_pointer(), true;
    float x, y;
    ImVec2 at;
    if (a.size() == 3 && parse_float(a[1], x) && parse_float(a[2], y)) {
      at = ImVec2(x, y);
    } else {
      if (!need(a, 3, error, "X Y | PANEL BOX NAME")) return false;
      const std::string name = rest_after(rest_after(l.text, cmd), a[1]);
      if (!app.find_box(a[1], name, at))
        return error = cmd + ": panel '" + a[1] + "' drew no box named '" + name + "' in the last frame", false;
    }
    app.set_pointer(at, cmd == "click");
    return true;
  }
  return -1;
}

// Attention, cell, leak, masks-view, example, pad, pe-view, kv-layer: what a panel shows.
int ScriptRunner::run_panel_command(App& app, const std::vector<std::string>& a, const Line&, const std::string&,
                                    std::string& error) {
  const std::string& cmd = a[0];
  Worker& w = app.worker();
  UiState& ui = app.ui();
  const auto snap = app.snapshot();
  if (cmd == "attention") return select_attention(app, a, error);
  if (cmd == "cell") {
    int r, c;
    if (a.size() == 2 && a[1] == "none") return ui.cell_pinned = false, ui.cell_row = ui.cell_col = -1, true;
    if (!need(a, 3, error, "ROW COL") || !parse_int(a[1], r) || !parse_int(a[2], c) || r < 0 || c < 0)
      return error = "cell: expected two indices ROW COL (or 'none')", false;
    ui.cell_row = r, ui.cell_col = c, ui.cell_pinned = true;
    return true;
  }
  if (cmd == "leak") {
    bool on;
    if (!need(a, 2, error, "on | off") || !parse_onoff(a[1], on)) return error = "leak: expected on or off", false;
    if (on && snap && snap->model && !snap->model->config.has_decoder())
      return error = "leak: an encoder-only model has no causal mask to remove", false;
    ui.leak_demo = on;
    if (on) app.show_panel(app.find_panel("masks"));
    return true;
  }
  if (cmd == "masks-view") {
    if (!need(a, 2, error, "input | batch") || (a[1] != "input" && a[1] != "batch"))
      return error = "masks-view: expected input or batch", false;
    ui.masks_batch = a[1] == "batch";
    app.show_panel(app.find_panel("masks"));
    return true;
  }
  if (cmd == "example") {
    w.post([](Engine& e) { e.next_example(); });
    return true;
  }
  if (cmd == "pad") {
    w.post([](Engine& e) { e.append_padding(); });
    return true;
  }
  if (cmd == "pe-view") return select_pe_view(app, a, error);
  if (cmd == "kv-layer") {
    int n;
    if (!need(a, 2, error, "a layer index") || !parse_int(a[1], n) || n < 0)
      return error = "kv-layer: expected a layer index", false;
    ui.kv_layer = n;
    app.show_panel(app.find_panel("kv"));
    return true;
  }
  return -1;
}

// Wait, screenshot, export-panel, export-heatmap, export-recording: waiting and writing files.
int ScriptRunner::run_output_command(App& app, const std::vector<std::string>& a, const Line& l,
                                     const std::string& placed, std::string& error) {
  const std::string& cmd = a[0];
  if (cmd == "wait") {
    const int n = count(a, 10, error);
    if (n < 0) return false;
    frames_ = n;
    return true;
  }
  if (cmd == "screenshot") {
    if (!need(a, 2, error, "a file name")) return false;
    app.request_screenshot(placed.empty() ? rest_after(l.text, cmd) : placed, placed.empty());
    return true;
  }
  if (cmd == "export-panel" || cmd == "export-heatmap") {
    if (!need(a, 3, error, "PANEL FILE")) return false;
    Panel* p = app.find_panel(a[1]);
    if (!p) return error = cmd + ": no panel '" + a[1] + "'", false;
    if (cmd == "export-panel") {
      if (!p->open) return error = "export-panel: panel '" + a[1] + "' is hidden (use: panel " + a[1] + ")", false;
      app.request_panel_png(p, a[2]);
      return true;
    }
    return p->export_heatmap(a[2], error);
  }
  if (cmd == "export-recording") {
    if (!need(a, 2, error, "a file name (.safetensors, .npy, .csv)")) return false;
    return app.export_recording(a[1], error);
  }
  return -1;
}

// Expect-error, expect, quit: checks and the end of a run.
int ScriptRunner::run_check_command(App& app, const std::vector<std::string>& a, const Line& l, const std::string&,
                                    std::string& error) {
  const std::string& cmd = a[0];
  const auto snap = app.snapshot();
  if (cmd == "expect-error") {
    if (!last_failed_) return error = "expect-error: the previous line succeeded", false;
    --failures_;
    app.notify(Message::Info, "script line " + std::to_string(l.number) + ": the expected error happened");
    return true;
  }
  if (cmd == "expect") {
    if (!need(a, 2, error, "finished | stage TEXT | tokens N | model-loaded")) return false;
    if (a[1] == "finished") {
      if (!snap->ok() || !snap->session->finished()) return error = "expect finished: decoding has not finished", false;
      return true;
    }
    if (a[1] == "model-loaded") {
      if (!snap->model) return error = "expect model-loaded: no model is loaded", false;
      return true;
    }
    if (a[1] == "stage") {
      const std::string want = rest_after(l.text, "stage");
      if (snap->stage.title.find(want) == std::string::npos)
        return error = "expect stage: the current stage is '" + snap->stage.title + "', expected it to contain '" +
                       want + "'",
               false;
      return true;
    }
    return error = "expect: unknown condition '" + a[1] + "'", false;
  }
  if (cmd == "quit") {
    int code = failures_ > 0 ? 1 : 0;
    if (a.size() > 1 && !parse_int(a[1], code)) return error = "quit: expected an exit code", false;
    app.quit(failures_ > 0 ? std::max(code, 1) : code);
    return true;
  }
  return -1;
}

// One command: each group answers the commands it knows (−1: not one of its own).
bool ScriptRunner::run(App& app, const std::vector<std::string>& a, const Line& l, const std::string& placed,
                       std::string& error) {
  for (auto group :
       {&ScriptRunner::run_input_command, &ScriptRunner::run_decoding_command, &ScriptRunner::run_stepping_command,
        &ScriptRunner::run_window_command, &ScriptRunner::run_panel_command, &ScriptRunner::run_output_command,
        &ScriptRunner::run_check_command})
    if (const int r = (this->*group)(app, a, l, placed, error); r >= 0) return r == 1;
  if (const int r = run_inspect_command(app, a, error, until_); r >= 0) return r == 1;          // docs/inspect.md
  if (const int r = run_prepost_command(app, a, l.text, error, until_); r >= 0) return r == 1;  // docs/compare.md
  error = "unknown command '" + a[0] + "' (see docs/explorer.md for the script language)";
  return false;
}

// The lesson commands (docs/lessons.md): the caption, the worked example, moving between lessons
// and steps.
bool ScriptRunner::run_lesson_command(App& app, const std::vector<std::string>& a, const Line& l, std::string& error) {
  const std::string& cmd = a[0];
  if (cmd == "caption") {
    Caption& c = app.caption();
    const std::string what = a.size() > 1 ? a[1] : "";
    const std::string text = rest_after(l.text, what);
    if (what == "lesson")
      c.lesson = text;
    else if (what == "step")
      c.title = text, c.text.clear(), c.formula.clear();
    else if (what == "text")
      c.text += (c.text.empty() ? "" : "\n") + text;
    else if (what == "formula")
      c.formula += (c.formula.empty() ? "" : "\n") + text;
    else if (what == "clear")
      c = Caption{};
    else
      return error = "caption: expected lesson | step | text | formula TEXT (or clear), found '" + what + "'", false;
    if (Panel* p = app.find_panel("caption"); p && what != "clear") p->open = true;
    return true;
  }
  if (cmd == "worked") {
    // worked q=… k1=… k2=… [k3=…] v1=… v2=… [words=A,B,…]: one query over the keys, every step.
    auto w = std::make_shared<WorkedExample>();
    std::vector<std::vector<float>> k, v;
    for (size_t i = 1; i < a.size(); ++i) {
      const size_t eq = a[i].find('=');
      const std::string key = eq == std::string::npos ? a[i] : a[i].substr(0, eq);
      const std::string val = eq == std::string::npos ? "" : a[i].substr(eq + 1);
      if (key == "words") {
        std::stringstream ss(val);
        for (std::string x; std::getline(ss, x, ',');) w->words.push_back(x);
        continue;
      }
      int j = 0;
      std::vector<float> vec;
      const bool indexed =
          key.size() > 1 && (key[0] == 'k' || key[0] == 'v') && parse_int(key.substr(1), j) && j >= 1 && j <= 16;
      if ((key != "q" && !indexed) || !parse_vector(val, vec))
        return error = "worked: bad '" + a[i] +
                       "' (expected q=… k1=… k2=… v1=… v2=… words=A,B; a vector is numbers separated by commas, "
                       "x*n repeats x n times)",
               false;
      if (key == "q") {
        w->q = vec;
        continue;
      }
      auto& list = key[0] == 'k' ? k : v;
      if (list.size() < static_cast<size_t>(j)) list.resize(static_cast<size_t>(j));
      list[static_cast<size_t>(j - 1)] = vec;
    }
    w->k = k;
    w->v = v;
    auto r = worked_attention(w->q, k, v);
    if (!r) return error = r.error(), false;
    w->r = *r;
    app.ui().worked = w;
    app.show_panel(app.find_panel("worked"));
    return true;
  }
  // lesson open NAME|FILE | next | back | step N | close
  if (a.size() < 2) return error = "lesson: expected open NAME | next | back | step N | close", false;
  if (a[1] == "open") {
    if (a.size() < 3) return error = "lesson open: expected a lesson name or file", false;
    return app.request_lesson(LessonRequest{LessonRequest::Open, rest_after(l.text, "open"), dir_, 0}, error);
  }
  int n = 0;
  if (a[1] == "next") return app.request_lesson({LessonRequest::Next, "", "", 0}, error);
  if (a[1] == "back") return app.request_lesson({LessonRequest::Back, "", "", 0}, error);
  if (a[1] == "close") return app.request_lesson({LessonRequest::Close, "", "", 0}, error);
  if (a[1] == "step" && a.size() > 2 && parse_int(a[2], n) && n >= 1)
    return app.request_lesson({LessonRequest::Go, "", "", n - 1}, error);
  return error = "lesson: expected open NAME | next | back | step N | close, found '" + a[1] + "'", false;
}

}  // namespace sf::gui
