// stepper.cpp — "Stepper": forward/back one stage, next/previous token, play/pause with a speed,
// a timeline scrubber over every known stage, a block diagram of the architecture (ImDrawList)
// that lights the current stage, and the stage's formula with its actual shapes.
//
// [SECTION] controls
// [SECTION] timeline scrubber
// [SECTION] block diagram
// [SECTION] formula
#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "actions.h"
#include "app.h"
#include "gfx/imgui_math.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

// One box of the diagram: the stage kinds it stands for on one side and layer.
struct Box {
  std::string label;
  Side side;
  StageKind kind;
  Block block = Block::None;
  int layer = -1;
  float units = 1.0f;                   // width in boxes
  bool norm = false;                    // a LayerNorm strip (Norm / AddNorm of `block`)
  float x0 = 0, x1 = 0;                 // laid out
  std::string short_label, tiny_label;  // for narrow boxes

  // What a diagram states; the layout and the short labels are filled in later.
  Box(std::string label_, Side side_, StageKind kind_, Block block_ = Block::None, int layer_ = -1, float units_ = 1.0f,
      bool norm_ = false)
      : label(std::move(label_)), side(side_), kind(kind_), block(block_), layer(layer_), units(units_), norm(norm_) {}
};

class StepperPanel : public Panel {
 public:
  StepperPanel() : Panel({"Stepper", "stepper", ImVec4(0.24f, 0.0f, 0.76f, 0.40f), true}) {}

  void Draw(Ctx& c) override {
    // The stage's title and formula come before the diagram, which takes the height that is left:
    // at a large UI scale the formula stays on screen and the diagram's rows get thinner.
    draw_controls(c);
    draw_timeline(c);
    ImGui::Spacing();
    draw_formula(c);
    ImGui::Spacing();
    draw_diagram(c);
  }

 private:
  // [SECTION] controls
  void draw_controls(Ctx& c) {
    const Session& se = *c.snap.session;
    const float fs = ImGui::GetFontSize();
    // The row flows: an item that would pass the panel's right edge starts a new line, so that a
    // narrow panel (three side by side in presentation mode) cuts none of them.
    bool first = true;
    const auto place = [&](float w) {
      if (!first) same_line_if_fits(w);
      first = false;
    };
    const auto button = [&](const char* label, const char* tip, bool enabled) {
      const float w = std::max(fs * 2.6f, ImGui::CalcTextSize(label).x + fs);
      place(w);
      if (!enabled) ImGui::BeginDisabled();
      const bool r = ImGui::Button(label, ImVec2(w, 0));
      if (!enabled) ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", tip);
      return r;
    };
    const bool at_start = se.cursor() == 0, at_end = se.at_end();
    if (button("|◀", "first stage (Home)", !at_start)) act::home(c.worker);
    if (button("◀◀", "previous token (↑, Ctrl+←)", !at_start)) act::prev_token(c.worker);
    if (button("◀", "one stage back (←)", !at_start)) act::back(c.worker);
    if (button(c.ui.playing ? "▮▮ pause" : "▶ play",
               c.ui.playing ? "pause (Space)" : "play (Space; from the start when at the end)", true)) {
      c.ui.playing = !c.ui.playing;
      c.ui.last_play = ImGui::GetTime();
      if (c.ui.playing && at_end) act::home(c.worker);
    }
    if (button("▶", "one stage forward (→)", !at_end)) act::forward(c.worker);
    if (button("▶▶", "next token (↓, Ctrl+→)", !at_end)) act::next_token(c.worker);
    if (button("▶|", "decode to the end (End)", !at_end)) act::run_to_end(c.worker);
    place(fs * 7);
    ImGui::SetNextItemWidth(fs * 7);
    ImGui::SliderFloat("##speed", &c.ui.speed, 0.5f, 20.0f, "%.1f stages/s", ImGuiSliderFlags_Logarithmic);
    place(ImGui::CalcTextSize("Reset").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button("Reset")) act::reset(c.worker);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("forget every decoded step (same input and settings)");
    char where[64];
    std::snprintf(where, sizeof where, "stage %d of %d%s", se.cursor() + 1, se.stage_count(),
                  se.finished() ? "" : " so far");
    place(ImGui::CalcTextSize(where).x);
    ImGui::TextDisabled("%s", where);
    note_item(where);
  }

  // [SECTION] timeline scrubber
  void draw_timeline(Ctx& c) {
    const Snapshot& s = c.snap;
    const Session& se = *s.session;
    const Palette& pal = palette();
    const int n = static_cast<int>(s.stages.size());
    if (n == 0) return;
    const float fs = ImGui::GetFontSize();
    ImFont* small = c.fonts.small;
    const float sfs = small->FontSize;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x;
    const float bar_h = fs * 0.9f;
    // Unfinished decoding: keep some room at the end for the steps still to come.
    const float known_w = se.finished() ? w : w * 0.88f;
    const float slot = known_w / static_cast<float>(n);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImGui::InvisibleButton("timeline", ImVec2(w, bar_h + sfs + 4));
    const bool active = ImGui::IsItemActive();
    const bool hovered = ImGui::IsItemHovered();
    // Segments: encoder, then one per decoder step (alternating shades), labelled by the token chosen.
    int seg_start = 0;
    for (int i = 0; i <= n; ++i) {
      const bool boundary =
          i == n || (i > 0 && (s.stages[static_cast<size_t>(i)].side != s.stages[static_cast<size_t>(i - 1)].side ||
                               s.stages[static_cast<size_t>(i)].step != s.stages[static_cast<size_t>(i - 1)].step));
      if (!boundary) continue;
      const Stage& st = s.stages[static_cast<size_t>(seg_start)];
      const float x0 = p.x + slot * seg_start, x1 = p.x + slot * i;
      ImU32 col = st.side == Side::Encoder ? IM_COL32(70, 110, 170, 255)
                                           : (st.step % 2 ? IM_COL32(150, 110, 60, 255) : IM_COL32(175, 130, 70, 255));
      dl->AddRectFilled(ImVec2(x0, p.y), ImVec2(x1 - 1, p.y + bar_h), col);
      std::string label = st.side == Side::Encoder ? "encoder" : "t" + std::to_string(st.step);
      if (st.side == Side::Decoder && st.step < static_cast<int>(se.steps().size()))
        label += " " + display_token(s.model->config.tgt_vocab, se.steps()[static_cast<size_t>(st.step)]->chosen);
      const ImVec2 ts = small->CalcTextSizeA(sfs, FLT_MAX, 0, label.c_str());
      if (ts.x < x1 - x0 - 2) dl->AddText(small, sfs, ImVec2(x0 + 2, p.y + bar_h + 2), pal.text_dim, label.c_str());
      seg_start = i;
    }
    if (!se.finished()) {
      for (float x = p.x + known_w + 3; x < p.x + w; x += 8)
        dl->AddLine(ImVec2(x, p.y + bar_h * 0.5f), ImVec2(x + 4, p.y + bar_h * 0.5f), pal.text_dim, 2);
    }
    // Cursor.
    const float cx = p.x + slot * (s.cursor + 0.5f);
    dl->AddRectFilled(ImVec2(cx - std::max(2.0f, slot * 0.5f), p.y - 2),
                      ImVec2(cx + std::max(2.0f, slot * 0.5f), p.y + bar_h + 2), pal.stage_now);
    if (hovered || active) {
      const int at = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p.x) / slot), 0, n - 1);
      if (hovered && !active) ImGui::SetTooltip("%d: %s", at + 1, s.stages[static_cast<size_t>(at)].title.c_str());
      if (active && at != s.cursor && at != last_scrub_ && c.worker.idle()) {
        act::jump(c.worker, at);
        last_scrub_ = at;
      }
    }
    if (!active) last_scrub_ = -1;
  }

  // [SECTION] block diagram
  std::vector<Box> encoder_boxes(const Config& m) const {
    std::vector<Box> b;
    b.push_back({"Embed", Side::Encoder, StageKind::Embed});
    b.push_back({"+ PE", Side::Encoder, StageKind::Positional});
    for (int l = 0; l < m.n_encoder_layers; ++l) {
      add_sublayer(b, m, Side::Encoder, Block::SelfAttention, StageKind::SelfAttention, "Self-attn", l);
      add_sublayer(b, m, Side::Encoder, Block::FeedForward, StageKind::FeedForward, "FFN", l);
    }
    if (m.norm == NormPlacement::Pre)
      b.push_back({"LN", Side::Encoder, StageKind::FinalNorm, Block::None, -1, 0.5f, true});
    // Encoder-only: the masked-LM head (or the hidden states) ends the encoder; nothing reads a memory.
    if (m.has_decoder())
      b.push_back({"Memory", Side::Encoder, StageKind::Memory});
    else if (m.mlm_head)
      b.push_back({"MLM head", Side::Encoder, StageKind::Logits, Block::None, -1, 1.3f});
    else
      b.push_back({"Output", Side::Encoder, StageKind::Memory});
    return b;
  }
  // Rotary models add no position at the embedding (q and k turn in each self-attention),
  // RMSNorm strips say RMS, a gated MLP is SwiGLU.
  std::vector<Box> decoder_boxes(const Config& m) const {
    std::vector<Box> b;
    const bool rotary = m.positional == Positional::Rotary;
    b.push_back(
        {rotary ? "Embed" : "Embed+PE", Side::Decoder, StageKind::Embed, Block::None, -1, rotary ? 1.0f : 1.3f});
    const char* ffn = m.mlp != Mlp::Gated ? "FFN" : m.activation == Activation::Swish ? "SwiGLU" : "Gated FFN";
    for (int l = 0; l < m.n_decoder_layers; ++l) {
      add_sublayer(b, m, Side::Decoder, Block::SelfAttention, StageKind::SelfAttention,
                   rotary ? "Self+RoPE" : "Masked self", l);
      if (m.has_encoder())
        add_sublayer(b, m, Side::Decoder, Block::CrossAttention, StageKind::CrossAttention, "Cross", l);
      if (m.has_ffn())  // an attention-only layer is its self-attention alone
        add_sublayer(b, m, Side::Decoder, Block::FeedForward, StageKind::FeedForward, ffn, l);
    }
    if (m.norm == NormPlacement::Pre)
      b.push_back({norm_label(m), Side::Decoder, StageKind::FinalNorm, Block::None, -1, 0.5f, true});
    b.push_back({"Logits", Side::Decoder, StageKind::Logits});
    b.push_back({"Choose", Side::Decoder, StageKind::Choose});
    return b;
  }
  static const char* norm_label(const Config& m) { return m.norm_kind == NormKind::RMSNorm ? "RMS" : "LN"; }
  static void add_sublayer(std::vector<Box>& b, const Config& m, Side side, Block block, StageKind kind,
                           const char* label, int layer) {
    const bool pre = m.norm == NormPlacement::Pre;
    if (pre) b.push_back({norm_label(m), side, StageKind::Norm, block, layer, 0.5f, true});
    b.push_back({label, side, kind, block, layer, 1.0f});
    if (!pre) b.push_back({norm_label(m), side, StageKind::AddNorm, block, layer, 0.5f, true});
  }

  static void shorten(std::vector<Box>& boxes) {
    for (Box& b : boxes) {
      if (b.norm) continue;
      static const std::pair<const char*, std::pair<const char*, const char*>> names[] = {
          {"Embed", {"Emb", "E"}},           {"+ PE", {"PE", "P"}},
          {"Self-attn", {"Attn", "A"}},      {"FFN", {"FF", "F"}},
          {"Memory", {"Mem", "M"}},          {"Embed+PE", {"Emb", "E"}},
          {"Masked self", {"Masked", "MS"}}, {"Cross", {"X", "X"}},
          {"Logits", {"Logit", "L"}},        {"Choose", {"Pick", "C"}},
          {"MLM head", {"MLM", "M"}},        {"Output", {"Out", "O"}},
          {"Self+RoPE", {"RoPE", "A"}},      {"SwiGLU", {"GLU", "F"}},
          {"Gated FFN", {"Gated", "F"}}};
      for (auto& [full, s] : names)
        if (b.label == full) b.short_label = s.first, b.tiny_label = s.second;
    }
  }

  // Index of the stage a box stands for in the current pass (-1 if not known).
  static int stage_of(const Snapshot& s, const Box& b, int step) {
    for (const Stage& st : s.stages) {
      if (st.side != b.side || st.kind != b.kind || st.layer != b.layer) continue;
      if (b.norm && b.block != Block::None && st.block != b.block) continue;
      if (b.side == Side::Decoder && st.step != step) continue;
      return st.index;
    }
    return -1;
  }

  void draw_row(Ctx& c, std::vector<Box>& boxes, ImVec2 origin, float unit, float h, int step, const char* row_label,
                float label_w, std::vector<ImVec2>* cross_tops, ImVec2* memory_pos) {
    const Snapshot& s = c.snap;
    const Palette& pal = palette();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = c.fonts.small;
    const float fs = small->FontSize;
    const float gap = unit * 0.08f;
    dl->AddText(c.fonts.bold, c.fonts.bold->FontSize,
                ImVec2(origin.x, origin.y + h * 0.5f - c.fonts.bold->FontSize * 0.5f), pal.text, row_label);
    float x = origin.x + label_w;
    // Layer frames first (behind the boxes).
    int cur_layer = -2;
    float layer_x0 = 0;
    const auto close_layer = [&](float x_end) {
      if (cur_layer < 0) return;
      dl->AddRect(ImVec2(layer_x0 - gap, origin.y - fs - 2), ImVec2(x_end - gap * 0.5f, origin.y + h + 3), pal.grid, 4);
      const std::string l = "layer " + std::to_string(cur_layer);
      dl->AddText(small, fs, ImVec2(layer_x0, origin.y - fs - 1), pal.text_dim, l.c_str());
    };
    for (Box& b : boxes) {
      const bool in_layer = b.layer >= 0;
      if (b.layer != cur_layer) {
        close_layer(x);
        cur_layer = in_layer ? b.layer : -2;
        layer_x0 = x + gap;
        if (in_layer) x += gap * 2;
      }
      b.x0 = x + gap;
      b.x1 = x + unit * b.units - gap;
      x += unit * b.units;
    }
    close_layer(x);
    // Every box of one kind gets the same label: the one that fits the narrowest of them (box
    // widths differ by rounding, and "Masked self" beside "Self" would read as two kinds).
    std::map<std::string, float> room_of;
    for (const Box& b : boxes) {
      const float r = b.x1 - b.x0 - 4;
      auto it = room_of.find(b.label);
      if (it == room_of.end() || r < it->second) room_of[b.label] = r;
    }
    for (Box& b : boxes) {
      const int idx = stage_of(s, b, step);
      const bool now = idx >= 0 && idx == s.cursor;
      const bool done = idx >= 0 && idx < s.cursor;
      const ImU32 fill = now ? pal.stage_now : done ? pal.stage_done : pal.stage_todo;
      const ImVec2 a(b.x0, origin.y + (b.norm ? h * 0.15f : 0)), z(b.x1, origin.y + h - (b.norm ? h * 0.15f : 0));
      dl->AddRectFilled(a, z, fill, 4);
      if (now) mark_rect = ImVec4(a.x, a.y, z.x, z.y);
      dl->AddRect(a, z, now ? IM_COL32(255, 255, 255, 255) : pal.box_border, 4, 0, now ? 3.0f : 1.0f);
      // The longest label that fits: full, short, then one letter (narrow boxes of deep models).
      ImFont* f = b.norm ? small : c.fonts.ui;
      const float room = room_of[b.label];
      const std::string* text = nullptr;
      for (const std::string* cand : {&b.label, &b.short_label, &b.tiny_label}) {
        if (cand->empty()) continue;
        for (ImFont* ff : {f, small}) {
          if (ff->FontSize > z.y - a.y + 2 && ff != small) continue;  // a box made thin to fit the panel
          if (ff->CalcTextSizeA(ff->FontSize, FLT_MAX, 0, cand->c_str()).x <= room) {
            text = cand;
            f = ff;
            break;
          }
        }
        if (text) break;
      }
      const ImU32 tc = now ? IM_COL32(0, 0, 0, 255) : pal.text;
      if (text) {
        drawn_labels().note(*text);
        const ImVec2 ts = f->CalcTextSizeA(f->FontSize, FLT_MAX, 0, text->c_str());
        dl->AddText(f, f->FontSize, ImVec2((a.x + z.x - ts.x) * 0.5f, (a.y + z.y - ts.y) * 0.5f), tc, text->c_str());
      }
      ImGui::SetCursorScreenPos(a);
      ImGui::PushID(&b);
      if (ImGui::InvisibleButton("box", ImVec2(std::max(1.0f, z.x - a.x), std::max(1.0f, z.y - a.y))) && idx >= 0)
        act::jump(c.worker, idx);
      note_item(std::string("diagram ") + row_label + " " + b.label);
      if (ImGui::IsItemHovered()) {
        if (idx >= 0)
          ImGui::SetTooltip("%s\n(click to go there)", s.stages[static_cast<size_t>(idx)].title.c_str());
        else
          ImGui::SetTooltip("not computed yet");
      }
      ImGui::PopID();
      if (b.kind == StageKind::CrossAttention && cross_tops) cross_tops->push_back(ImVec2((a.x + z.x) * 0.5f, a.y));
      if (b.kind == StageKind::Memory && memory_pos) *memory_pos = ImVec2((a.x + z.x) * 0.5f, z.y);
    }
    // Flow arrows between consecutive boxes. A parallel-residual layer (GPT-NeoX) has none from the
    // attention to the MLP's norm: that norm reads the layer's input, drawn as a fork below the row.
    const bool parallel = s.model->config.residual == Residual::Parallel;
    for (size_t i = 0; i + 1 < boxes.size(); ++i) {
      const Box& n = boxes[i + 1];
      if (parallel && n.norm && n.kind == StageKind::Norm && n.block == Block::FeedForward) continue;
      const float y = origin.y + h * 0.5f;
      dl->AddLine(ImVec2(boxes[i].x1, y), ImVec2(n.x0, y), pal.text_dim, 1.5f);
    }
    if (parallel) draw_parallel_forks(c, boxes, origin, h);
  }

  // Parallel residual: x + Attn(LN1(x)) + MLP(LN2(x)). From each layer's input a line runs below
  // the row to the MLP's norm (both branches read the same x), and the attention's output to the
  // sum after the MLP.
  static void draw_parallel_forks(Ctx& c, const std::vector<Box>& boxes, ImVec2 origin, float h) {
    const Palette& pal = palette();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = c.fonts.small;
    const float below = origin.y + h + small->FontSize * 0.9f, mid = origin.y + h * 0.5f;
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Box& ln1 = boxes[i];
      if (!(ln1.norm && ln1.kind == StageKind::Norm && ln1.block == Block::SelfAttention)) continue;
      const Box* ln2 = nullptr;
      const Box* att = nullptr;
      const Box* ffn = nullptr;
      for (size_t j = i + 1; j < boxes.size() && boxes[j].layer == ln1.layer; ++j) {
        if (boxes[j].kind == StageKind::SelfAttention) att = &boxes[j];
        if (boxes[j].kind == StageKind::FeedForward) ffn = &boxes[j];
        if (boxes[j].norm && boxes[j].block == Block::FeedForward) ln2 = &boxes[j];
      }
      if (!ln2 || !att || !ffn) continue;
      // The attention's output over the MLP branch to the sum after it.
      const float over = origin.y - 5, xa = att->x1 - (att->x1 - att->x0) * 0.2f, xs = ffn->x1 + 4;
      dl->AddLine(ImVec2(xa, origin.y), ImVec2(xa, over), pal.accent, 2);
      dl->AddLine(ImVec2(xa, over), ImVec2(xs, over), pal.accent, 2);
      dl->AddLine(ImVec2(xs, over), ImVec2(xs, mid - 5), pal.accent, 2);
      dl->AddCircleFilled(ImVec2(xs, mid), 5, pal.accent);
      dl->AddText(small, small->FontSize, ImVec2(xs - 3, mid - small->FontSize * 0.5f), pal.text, "+");
      const float x_in = ln1.x0 - 3, x2 = (ln2->x0 + ln2->x1) * 0.5f, top2 = origin.y + h * 0.85f;
      const ImU32 col = pal.accent2;
      dl->AddLine(ImVec2(x_in, mid), ImVec2(x_in, below), col, 2);
      dl->AddLine(ImVec2(x_in, below), ImVec2(x2, below), col, 2);
      dl->AddLine(ImVec2(x2, below), ImVec2(x2, top2 + 3), col, 2);
      dl->AddTriangleFilled(ImVec2(x2 - 4, top2 + 8), ImVec2(x2 + 4, top2 + 8), ImVec2(x2, top2 + 2), col);
      const char* note = "same x";
      const ImVec2 ts = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0, note);
      dl->AddText(small, small->FontSize, ImVec2((x_in + x2 - ts.x) * 0.5f, below + 1), pal.text_dim, note);
    }
  }

  void draw_diagram(Ctx& c) {
    const Snapshot& s = c.snap;
    const Config& m = s.model->config;
    const Palette& pal = palette();
    std::vector<Box> enc = m.has_encoder() ? encoder_boxes(m) : std::vector<Box>{};
    std::vector<Box> dec = m.has_decoder() ? decoder_boxes(m) : std::vector<Box>{};
    shorten(enc);
    shorten(dec);
    const auto units = [](const std::vector<Box>& b) {
      float u = 0;
      int layers = 0, last = -1;
      for (auto& x : b) {
        u += x.units;
        if (x.layer >= 0 && x.layer != last) ++layers, last = x.layer;
      }
      return u + layers * 0.16f;
    };
    const float fs = ImGui::GetFontSize();
    const float label_w = c.fonts.bold->CalcTextSizeA(c.fonts.bold->FontSize, FLT_MAX, 0, "Decoder t=00").x + fs * 0.5f;
    const float avail = ImGui::GetContentRegionAvail().x - label_w - 4;
    const float unit = std::min(fs * 6.0f, avail / std::max(units(enc), units(dec)));
    const int rows = (enc.empty() ? 0 : 1) + (dec.empty() ? 0 : 1);
    const float need = c.fonts.small->FontSize + 2 + rows * fs * 1.8f + (rows - 1) * fs * 2.4f + fs * 0.5f +
                       (m.residual == Residual::Parallel ? c.fonts.small->FontSize * 2.0f : 0.0f);
    // Rows get thinner down to where a box still holds its label (1.2 font heights); in a shorter
    // panel the diagram keeps that height and the panel scrolls instead of drawing rows over rows.
    const float fit = std::clamp(ImGui::GetContentRegionAvail().y / need, 0.67f, 1.0f);
    const float h = fs * 1.8f * fit;
    // The gap between the rows keeps room for the memory bus's note and the layer frames' labels.
    const float row_gap = std::max(fs * 2.4f * fit, c.fonts.small->FontSize * 2.0f + fs * 0.6f + 2.0f);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const int step = s.session->current_step() >= 0 ? s.session->current_step() : 0;
    std::vector<ImVec2> cross_tops;
    ImVec2 memory(0, 0);
    float y = p.y + c.fonts.small->FontSize + 2;
    if (!enc.empty()) {
      draw_row(c, enc, ImVec2(p.x, y), unit, h, -1, "Encoder", label_w, nullptr, &memory);
      y += h + row_gap;
    }
    const std::string dlabel = s.session->current_step() >= 0 ? "Decoder t=" + std::to_string(step) : "Decoder";
    if (!dec.empty())
      draw_row(c, dec, ImVec2(p.x, y), unit, h, step, dlabel.c_str(), label_w, &cross_tops, nullptr);
    else
      y -= h + row_gap;  // encoder-only: one row
    // The memory feeds every cross-attention: a bus from the Memory box down to each Cross box.
    if (!enc.empty() && !cross_tops.empty()) {
      ImDrawList* dl = ImGui::GetWindowDrawList();
      const float bus_y = y - c.fonts.small->FontSize - fs * 0.55f;
      const ImU32 col = pal.accent2;
      dl->AddLine(memory, ImVec2(memory.x, bus_y), col, 2);
      float xmin = memory.x, xmax = memory.x;
      for (auto& t : cross_tops) xmin = std::min(xmin, t.x), xmax = std::max(xmax, t.x);
      dl->AddLine(ImVec2(xmin, bus_y), ImVec2(xmax, bus_y), col, 2);
      for (auto& t : cross_tops) {
        dl->AddLine(ImVec2(t.x, bus_y), ImVec2(t.x, t.y - 3), col, 2);
        dl->AddTriangleFilled(ImVec2(t.x - 4, t.y - 8), ImVec2(t.x + 4, t.y - 8), ImVec2(t.x, t.y - 2), col);
      }
      const char* note = "memory → K, V of cross-attention";
      ImFont* sm = c.fonts.small;
      const float tw = sm->CalcTextSizeA(sm->FontSize, FLT_MAX, 0, note).x;
      const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
      const float tx = xmax + 6 + tw <= right ? xmax + 6 : std::max(p.x, xmin - 6 - tw);
      dl->AddText(sm, sm->FontSize, ImVec2(tx, bus_y - sm->FontSize - 1), pal.text_dim, note);
    }
    // A parallel-residual model draws its forks below the decoder row.
    const float forks = m.residual == Residual::Parallel ? c.fonts.small->FontSize * 2.0f : 0.0f;
    ImGui::SetCursorScreenPos(ImVec2(p.x, y + h + 4 + forks));
    ImGui::Dummy(ImVec2(1, 1));
  }

  // [SECTION] formula
  void draw_formula(Ctx& c) {
    const Stage& st = c.snap.stage;
    const Palette& pal = palette();
    ImGui::PushFont(c.fonts.big);
    ImGui::PushStyleColor(ImGuiCol_Text, pal.accent);
    ImGui::TextWrapped("%s", st.title.c_str());
    ImGui::PopStyleColor();
    ImGui::PopFont();
    ImGui::PushFont(c.fonts.mono);
    ImGui::TextWrapped("%s", st.formula.c_str());
    note_item("formula " + st.formula);
    ImGui::PopFont();
    // Reads and writes on one line (wrapped when long): the diagram below gets the height.
    std::string line;
    const auto add = [&](const char* what, const std::vector<TensorRef>& r) {
      if (r.empty()) return;
      line += std::string(line.empty() ? "" : "   ·   ") + what;
      for (size_t i = 0; i < r.size(); ++i) line += (i ? ",  " : "  ") + r[i].label + " " + shape_str(r[i].shape);
    };
    add("reads:", st.reads);
    add("writes:", st.writes);
    if (!line.empty()) text_coloured_wrapped(pal.text_dim, line.c_str());
    if (!st.note.empty()) text_coloured_wrapped(pal.accent2, st.note.c_str());
  }

  int last_scrub_ = -1;
};

}  // namespace

std::unique_ptr<Panel> make_stepper_panel() { return std::make_unique<StepperPanel>(); }

}  // namespace sf::gui
