// ui.h — the UI thread's own state (selection, settings) and the interface every panel implements.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/worked_attention.h"
#include "gfx/heatmap.h"
#include "gfx/style.h"
#include "imgui.h"
#include "snapshot.h"
#include "worker.h"

namespace sf::gui {

class App;

enum class AttnMode { Heatmap = 0, Model = 1, Head = 2, Rollout = 3 };

// The worked-example panel's vectors (typed in by the `worked` command) and the arithmetic on
// them (core/analysis/worked_attention.h).
struct WorkedExample {
  std::vector<std::string> words;  // names of the keys' tokens ("Thinking", "Machines"); may be empty
  std::vector<float> q;
  std::vector<std::vector<float>> k, v;
  WorkedAttention r;
};

// What the user has chosen; shared by the panels (one attention selection drives the heatmap,
// Q/K/V, masks and KV cache panels so that they always talk about the same head).
struct UiState {
  AttnKind kind = AttnKind::EncoderSelf;
  int layer = 0;
  int head = 0;
  bool follow_stage = true;  // the selection jumps to the attention sublayer the stepper is on
  AttnMode attn_mode = AttnMode::Heatmap;
  bool head_view_all = true;  // head view: every head overlaid in its colour
  // The attention cell being explained (hovered, or pinned by a click / script).
  int cell_row = -1, cell_col = -1;
  bool cell_pinned = false;
  bool show_values = true;   // numbers inside large heatmap cells
  bool leak_demo = false;    // masks panel: teacher-forced run without the causal mask
  bool masks_batch = false;  // masks panel: the padded batch of examples instead of this input

  float scale = 1.0f;         // UI scale (1 = 16 px text)
  bool presentation = false;  // projector mode: larger text, high-contrast light theme
  bool playing = false;
  float speed = 2.0f;  // stages per second while playing
  double last_play = 0;

  int pe_dims[2] = {0, 1};   // PE panel: dimensions whose curves are drawn
  int pe_k = 0, pe_phi = 1;  // rotation demo M(k, φ)
  int pe_t = 1;
  int pe_tab_request = -1;  // scripts: select a PE tab (0 curves, 1 similarity, 2 rotation, 3 order, 4 rotary)
  // The rotary tab: layer, query head, frequency i, and the query and key rows of the score shown.
  int rope_layer = 0, rope_head = 0, rope_pair = 0, rope_m = -1, rope_n = 0;
  int kv_layer = 0;                             // KV cache panel
  int resid_layer = -1;                         // residual panel: -1 = all layers
  std::shared_ptr<const WorkedExample> worked;  // null: the panel explains how to type one in
};

struct Ctx {
  const Snapshot& snap;
  UiState& ui;
  Worker& worker;
  const Fonts& fonts;
  App& app;
};

// What a panel needs before it can draw anything: the App checks it and says what is missing
// (Panel::ready), so the panels never start with their own guard.
enum class Needs { Nothing, Session, Decoder };

// What a panel is called, where it opens and what it needs.
struct PanelInfo {
  const char* title;  // window title, also its imgui.ini id
  const char* key;    // the name scripts and the View menu use
  ImVec4 rect;        // default placement as fractions of the work area (x, y, w, h)
  bool open_by_default = false;
  Needs needs = Needs::Session;
};

class Panel {
 public:
  explicit Panel(PanelInfo info) : info_(info) {}
  virtual ~Panel() = default;
  const char* title() const { return info_.title; }
  const char* key() const { return info_.key; }
  ImVec4 default_rect() const { return info_.rect; }
  bool default_open() const { return info_.open_by_default; }
  // True when the snapshot has what the panel needs; otherwise draws why not (no model or input;
  // an encoder-only model has no decoder) and returns false.
  bool ready(const Snapshot& s) const;
  // Draws the contents (the App has already called ImGui::Begin).
  virtual void Draw(Ctx& ctx) = 0;
  // The panel's main heatmap, for "Export heatmap as PNG" (null: the panel has none).
  virtual const Heatmap* main_heatmap() const { return nullptr; }
  // Writes main_heatmap() as a PNG; false and a message naming the panel when it has none or
  // nothing is computed in it yet.
  bool export_heatmap(const std::string& path, std::string& error) const;
  // True while the panel takes every key itself (the compare view steps its own runs): the
  // explorer's keyboard handler then stands aside.
  virtual bool owns_keyboard() const { return false; }

  bool open = false;
  ImVec2 pos, size;  // the window's last rectangle (for panel screenshots)
  // Rectangles (x0, y0, x1, y1) of this frame, written next to screenshots for the GUI tests:
  // the panel's main heatmap, and a marked element (the stepper's current stage box).
  ImVec4 heat_rect{0, 0, 0, 0}, mark_rect{0, 0, 0, 0};
  std::vector<std::string> labels;                    // the labels it drew in the last frame while they were recorded
  std::vector<std::pair<std::string, ImVec4>> boxes;  // its named rectangles of the last frame (DrawnBoxes)
  std::vector<float> box_edges;                       // the right edge of the region each box is drawn in

 private:
  PanelInfo info_;
};

// Writes "<kind> · layer L · head H" for the shared attention selection and returns its view
// (null: that sublayer is not computed yet at this stage).
const AttnView* selected_attention(const Ctx& c);

std::unique_ptr<Panel> make_model_panel();
std::unique_ptr<Panel> make_stepper_panel();
std::unique_ptr<Panel> make_attention_panel();
std::unique_ptr<Panel> make_qkv_panel();
std::unique_ptr<Panel> make_positional_panel();
std::unique_ptr<Panel> make_masks_panel();
std::unique_ptr<Panel> make_kv_cache_panel();
std::unique_ptr<Panel> make_output_panel();
std::unique_ptr<Panel> make_residual_panel();
std::unique_ptr<Panel> make_caption_panel();
std::unique_ptr<Panel> make_worked_panel();

}  // namespace sf::gui
