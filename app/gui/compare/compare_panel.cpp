// compare_panel.cpp — "Compare pre-LN / post-LN": two runs side by side on one input, stepped in
// lockstep (core/analysis/compare.h). For the chosen layer/head: both attention maps and their difference;
// per layer: residual-stream norm, LayerNorm mean/variance, attention entropy per head; the
// next-token distributions and the decoded sequences.
//
// [SECTION] sources (shipped pair, files, the explorer's model switched)
// [SECTION] lockstep stepper
// [SECTION] the two runs
// [SECTION] attention: A, B, A − B
// (next-token distributions and per-layer statistics: compare_stats.cpp)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <GLFW/glfw3.h>

#include "app.h"
#include "compare/panels.h"
#include "gfx/imgui_math.h"
#include "widgets.h"

namespace sf::gui {

namespace {

// Keeps the next item, `width` pixels wide, on the current line when it fits there, else starts a
// new line (a row of controls wraps instead of running past the window's edge).
void wrap_unless_fits(float width, float spacing = -1.0f) {
  ImGui::SameLine(0, spacing);
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

class ComparePanel : public HubPanel {
 public:
  explicit ComparePanel(std::shared_ptr<PrePostHub> hub)
      : HubPanel("Compare pre-LN / post-LN", "compare", std::move(hub)) {}

  const Heatmap* main_heatmap() const override { return &heat_[2]; }

  // True while the compare view has the keyboard focus: the arrows then step the comparison, and
  // the explorer's own stepper keys stand aside.
  bool owns_keyboard() const override { return focus_frame_ >= ImGui::GetFrameCount() - 1; }

  void draw_view(Ctx& c) override {
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)) focus_frame_ = ImGui::GetFrameCount();
    const auto snap = hub_->compare.snapshot();
    const CompareSnap& s = *snap;
    if (!opened_) {
      opened_ = true;
      if (!s.ok() && hub_->compare.idle()) open_default(c);
    }
    keyboard(c);
    draw_sources(c, s);
    if (!s.ok()) {
      ImGui::Separator();
      if (!hub_->compare.idle())
        ImGui::TextDisabled("loading…");
      else
        ImGui::TextWrapped(
            "Choose two models above: a shipped pre-LN/post-LN pair, two files, or the explorer's model with its "
            "LayerNorm placement switched. Both runs then read the same input and step together.");
      draw_log(s);
      return;
    }
    draw_stepper(s);
    ImGui::Separator();
    // What each run is on (its stage, formula and decoded tokens) under the stepper, across the
    // view: the first thing the lockstep shows, never scrolled away.
    draw_runs(c, s);
    ImGui::Separator();
    if (ImGui::BeginTable("cmp", 2, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV)) {
      ImGui::TableSetupColumn("left", ImGuiTableColumnFlags_WidthStretch, 0.6f);
      ImGui::TableSetupColumn("right", ImGuiTableColumnFlags_WidthStretch, 0.4f);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::BeginChild("left", ImVec2(0, 0), false);
      // The maps first, with the column's height; the next-token distributions under them.
      draw_attention(c, s);
      ImGui::Separator();
      draw_compare_distributions(c, s);
      ImGui::EndChild();
      ImGui::TableSetColumnIndex(1);
      ImGui::BeginChild("right", ImVec2(0, 0), false);
      draw_compare_layer_stats(c, s, hub_->sel, stats_);
      ImGui::EndChild();
      ImGui::EndTable();
    }
  }

 private:
  // The shipped pair of the first task, else the explorer's model switched.
  void open_default(Ctx& c) {
    if (!hub_->pairs.empty())
      hub_->open_pair(hub_->pairs.front());
    else if (c.snap.model)
      hub_->open_switched(c.snap.model, c.snap.model_name);
  }

  // With the focus here the explorer's stepping keys stand aside (owns_keyboard) and these step
  // the comparison; Space plays it. F11, Ctrl ± 0 and Ctrl+Q stay the explorer's (one handler,
  // whichever panel has the focus).
  void keyboard(Ctx& c) {
    if (playing_) {
      const double now = ImGui::GetTime();
      const auto snap = hub_->compare.snapshot();
      if (!snap->ok() || snap->cmp->at_end())
        playing_ = false;
      else if (now - last_play_ >= 1.0 / c.ui.speed && hub_->compare.idle()) {
        last_play_ = now;
        hub_->move("forward");
      }
    }
    if (!owns_keyboard() || ImGui::GetIO().WantTextInput) return;
    const auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), true); };
    const bool ctrl = ImGui::GetIO().KeyCtrl;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) playing_ = !playing_, last_play_ = 0;
    if (pressed(ImGuiKey_RightArrow)) hub_->move(ctrl ? "next-token" : "forward");
    if (pressed(ImGuiKey_LeftArrow)) hub_->move(ctrl ? "prev-token" : "back");
    if (pressed(ImGuiKey_DownArrow) || pressed(ImGuiKey_PageDown)) hub_->move("next-token");
    if (pressed(ImGuiKey_UpArrow) || pressed(ImGuiKey_PageUp)) hub_->move("prev-token");
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) hub_->move("home");
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) hub_->move("end");
  }

  // [SECTION] sources (shipped pair, files, the explorer's model switched)
  void draw_sources(Ctx& c, const CompareSnap& s) {
    const float fs = ImGui::GetFontSize();
    const Palette& pal = palette();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Models:");
    note_item("Models:");
    ImGui::SameLine();
    if (hub_->pairs.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, pal.warn);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted("no shipped pre/post pair in assets/models yet");
      ImGui::PopStyleColor();
    } else {
      ImGui::SetNextItemWidth(fs * 13);
      if (ImGui::BeginCombo("##pair", "shipped pair…")) {
        for (const ShippedPair& p : hub_->pairs)
          if (ImGui::Selectable((p.task + ": pre-LN vs post-LN").c_str())) hub_->open_pair(p);
        ImGui::EndCombo();
      }
      note_item("pair");
    }
    wrap_unless_fits(button_width("Explorer's model, placement switched"));
    if (ImGui::Button("Explorer's model, placement switched")) hub_->open_switched(c.snap.model, c.snap.model_name);
    note_item("Explorer's model, placement switched");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A = the model open in the explorer; B = the same weights with the LayerNorm placement\n"
          "switched (pre ↔ post). An experiment, not an equivalent model.");
    wrap_unless_fits(button_width("Two files…"));
    if (ImGui::Button("Two files…")) ImGui::OpenPopup("files");
    note_item("Two files…");
    if (ImGui::BeginPopup("files")) {
      ImGui::TextUnformatted("Any two models (.safetensors) on the same input:");
      ImGui::SetNextItemWidth(fs * 30);
      ImGui::InputText("A", path_a_, sizeof path_a_);
      ImGui::SetNextItemWidth(fs * 30);
      ImGui::InputText("B", path_b_, sizeof path_b_);
      if (ImGui::Button("Open")) {
        hub_->open_files(path_a_, path_b_);
        ImGui::CloseCurrentPopup();
      }
      ImGui::EndPopup();
    }
    // Input.
    if (s.generation != seen_gen_) {
      seen_gen_ = s.generation;
      if (!ImGui::IsAnyItemActive()) {
        std::snprintf(src_, sizeof src_, "%s", s.src.c_str());
        std::snprintf(tgt_, sizeof tgt_, "%s", s.tgt.c_str());
      }
    }
    if (s.ok()) {
      const float sp = ImGui::GetStyle().ItemSpacing.x;
      // The input field narrows (down to 8 em) so that input and target share the models' line.
      const float target_w = ImGui::CalcTextSize("target").x + sp + fs * 10 + sp + button_width("Run");
      ImGui::SameLine(0, fs * 1.5f);
      const float room = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("input").x - sp - sp - target_w;
      const float input_w = room < fs * 8 ? fs * 16 : std::min(room, fs * 16);
      if (room < fs * 8) ImGui::NewLine();
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted("input");
      ImGui::SameLine();
      ImGui::SetNextItemWidth(input_w);
      const bool enter = ImGui::InputText("##src", src_, sizeof src_, ImGuiInputTextFlags_EnterReturnsTrue);
      note_item("input");
      wrap_unless_fits(target_w);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted("target");
      ImGui::SameLine();
      ImGui::SetNextItemWidth(fs * 10);
      const bool enter2 = ImGui::InputText("##tgt", tgt_, sizeof tgt_, ImGuiInputTextFlags_EnterReturnsTrue);
      note_item("target");
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("optional: with a target both runs are teacher-forced on it (forced decoding)");
      ImGui::SameLine();
      const bool run = ImGui::Button("Run");
      note_item("Run");
      if (run || enter || enter2) {
        const std::string a = src_, b = tgt_;
        hub_->compare.post([a, b](CompareEngine& e) { e.set_input(a, b); });
      }
    }
  }

  void draw_log(const CompareSnap& s) {
    for (auto it = s.log.rbegin(); it != s.log.rend() && it - s.log.rbegin() < 3; ++it)
      text_coloured_wrapped(it->rfind("error:", 0) == 0 ? palette().error : palette().text_dim, it->c_str());
  }

  // [SECTION] lockstep stepper
  void draw_stepper(const CompareSnap& s) {
    const Comparison& cmp = *s.cmp;
    const float fs = ImGui::GetFontSize();
    const auto button = [&](const char* label, const char* op, const char* tip) {
      if (ImGui::Button(label)) hub_->move(op);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
      ImGui::SameLine();
    };
    button("|◀", "home", "first stage (Home)");
    button("◀◀", "prev-token", "previous token, both runs (↑)");
    button("◀", "back", "one stage back (←)");
    button("▶", "forward", "one stage forward, both runs in lockstep (→)");
    button("▶▶", "next-token", "next token, both runs (↓)");
    button("▶|", "end", "decode both to the end (End)");
    if (ImGui::Button(playing_ ? "pause" : "play")) playing_ = !playing_, last_play_ = 0;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("advance both runs stage by stage (Space), at the explorer's play speed");
    char point[64];
    std::snprintf(point, sizeof point, "point %d / %d%s", s.position + 1, s.known, cmp.finished() ? "" : "+");
    wrap_unless_fits(ImGui::CalcTextSize(point).x);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(point);
    note_item("point");
    wrap_unless_fits(ImGui::CalcTextSize(s.point.c_str()).x, fs);
    ImGui::PushStyleColor(ImGuiCol_Text, palette().accent);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(s.point.c_str());
    note_item("stage");
    ImGui::PopStyleColor();
    const bool aligned =
        cmp.run(0).current_step() == cmp.run(1).current_step() || cmp.run(0).at_end() || cmp.run(1).at_end();
    const char* lockstep =
        aligned ? "in lockstep: same token, aligned stages (focus this window: ← → ↑ ↓)" : "runs out of step";
    wrap_unless_fits(ImGui::CalcTextSize(lockstep).x, fs);
    ImGui::AlignTextToFramePadding();
    ImGui::PushStyleColor(ImGuiCol_Text, aligned ? palette().text_dim : palette().error);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(lockstep);
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    note_item(lockstep);
    if (!s.log.empty() && s.log.back().rfind("error:", 0) == 0)
      text_coloured_wrapped(palette().error, s.log.back().c_str());
  }

  // [SECTION] the two runs
  void draw_runs(Ctx& c, const CompareSnap& s) {
    const Comparison& cmp = *s.cmp;
    if (!ImGui::BeginTable("runs", 2, ImGuiTableFlags_BordersInnerV)) return;
    const std::vector<int> ta = cmp.run(0).tokens(), tb = cmp.run(1).tokens();
    for (int i = 0; i < 2; ++i) {
      ImGui::TableNextColumn();
      const Session& se = cmp.run(i);
      const Stage st = se.current();
      ImGui::PushFont(c.fonts.bold);
      ImGui::Text("%s", i == 0 ? "A" : "B");
      ImGui::PopFont();
      ImGui::SameLine();
      placement_badge(se.model().config.norm);
      ImGui::SameLine();
      ImGui::TextDisabled("%s", s.run[i].name.c_str());
      const std::string run = i == 0 ? "run A " : "run B ";
      ImGui::PushFont(c.fonts.bold);
      ImGui::TextWrapped("%s", st.title.c_str());
      ImGui::PopFont();
      note_item(run + "stage");
      ImGui::PushFont(c.fonts.mono);
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("%s", st.formula.c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopFont();
      note_item(run + "formula");
      // Decoded so far; tokens where the two runs differ are outlined.
      const std::vector<int>& mine = i == 0 ? ta : tb;
      const std::vector<int>& other = i == 0 ? tb : ta;
      const Vocab& v = se.model().config.tgt_vocab;
      const Vocab& ov = cmp.run(1 - i).model().config.tgt_vocab;
      ImGui::TextDisabled("decoded:");
      ImGui::SameLine();
      if (mine.empty()) ImGui::TextDisabled("(nothing yet)");
      for (size_t k = 0; k < mine.size(); ++k) {
        const std::string tok = v.token(mine[k]);
        const bool differs = k >= other.size() || ov.token(other[k]) != tok;
        token_chip(c.fonts, tok, mine[k], tok.size() && tok[0] == '<' ? ChipKind::Special : ChipKind::Normal, differs);
      }
      if (!mine.empty()) ImGui::NewLine();  // ends the row of chips
      if (se.at_end() && !cmp.run(1 - i).at_end())
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn),
                           "finished decoding: stays on its last stage");
    }
    ImGui::EndTable();
  }

  // [SECTION] attention: A, B, A − B
  void follow_stage(const CompareSnap& s) {
    if (!hub_->sel.follow || s.generation == followed_) return;
    followed_ = s.generation;
    const Stage st = s.cmp->run(0).current();
    if (st.layer < 0 || st.block == Block::FeedForward || st.block == Block::None) return;
    hub_->sel.kind = st.side == Side::Encoder            ? AttnKind::EncoderSelf
                     : st.block == Block::CrossAttention ? AttnKind::Cross
                                                         : AttnKind::DecoderSelf;
    hub_->sel.layer = st.layer;
  }

  void draw_attention(Ctx& c, const CompareSnap& s) {
    CompareSelection& sel = hub_->sel;
    follow_stage(s);
    const Config& ca = s.cmp->run(0).model().config;
    const Config& cb = s.cmp->run(1).model().config;
    const bool enc = ca.has_encoder() && cb.has_encoder();
    if (!enc && sel.kind != AttnKind::DecoderSelf) sel.kind = AttnKind::DecoderSelf;
    const float fs = ImGui::GetFontSize();
    heading(c.fonts, "Attention");
    note_item("Attention");
    float kind_w = 0;
    for (AttnKind k : {AttnKind::EncoderSelf, AttnKind::DecoderSelf, AttnKind::Cross})
      kind_w = std::max(kind_w, ImGui::CalcTextSize(compare_kind_label(k)).x);
    kind_w += ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2;
    wrap_unless_fits(kind_w);
    ImGui::SetNextItemWidth(kind_w);
    if (ImGui::BeginCombo("##kind", compare_kind_label(sel.kind))) {
      for (AttnKind k : {AttnKind::EncoderSelf, AttnKind::DecoderSelf, AttnKind::Cross}) {
        if (k != AttnKind::DecoderSelf && !enc) continue;
        if (ImGui::Selectable(compare_kind_label(k), k == sel.kind)) sel.kind = k, sel.follow = false;
      }
      ImGui::EndCombo();
    }
    note_item("kind");
    const int layers = std::min(sel.kind == AttnKind::EncoderSelf ? ca.n_encoder_layers : ca.n_decoder_layers,
                                sel.kind == AttnKind::EncoderSelf ? cb.n_encoder_layers : cb.n_decoder_layers);
    const int heads = std::min(ca.n_heads, cb.n_heads);
    sel.layer = std::clamp(sel.layer, 0, std::max(0, layers - 1));
    sel.head = std::clamp(sel.head, 0, std::max(0, heads - 1));
    wrap_unless_fits(labelled_width(fs * 4.5f, "layer"));
    ImGui::SetNextItemWidth(fs * 4.5f);
    if (ImGui::SliderInt("layer", &sel.layer, 0, std::max(0, layers - 1))) sel.follow = false;
    note_item("layer");
    wrap_unless_fits(labelled_width(fs * 4.5f, "head"));
    ImGui::SetNextItemWidth(fs * 4.5f);
    ImGui::SliderInt("head", &sel.head, 0, std::max(0, heads - 1));
    note_item("head");
    wrap_unless_fits(labelled_width(ImGui::GetFrameHeight(), "follow"));
    ImGui::Checkbox("follow", &sel.follow);
    note_item("follow");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the attention sublayer the runs are on");

    const AttnView* v[2] = {s.run[0].view->attn_view(sel.kind, sel.layer),
                            s.run[1].view->attn_view(sel.kind, sel.layer)};
    const uint64_t key =
        mix_key(mix_key(mix_key(s.generation, static_cast<uint64_t>(sel.kind)), static_cast<uint64_t>(sel.layer)),
                static_cast<uint64_t>(sel.head));
    const float w = (ImGui::GetContentRegionAvail().x - fs) / 3.0f;
    // The maps take the height left in the column under their title line and above their entropy
    // line (measured from the top of the column, so scrolling does not change it), at least 8 lines.
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float left_h = ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y - ImGui::GetCursorPosY();
    const float h = std::max(fs * 8, left_h - 3 * line - ImGui::GetStyle().ItemSpacing.y);
    const Mat* m[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i)
      if (v[i] && sel.head < v[i]->trace().n_heads) m[i] = &v[i]->head(sel.head).weights;
    // The difference over the rows and keys both runs have (core/analysis/compare.h).
    const WeightDifference wd = m[0] && m[1] ? weight_difference(*m[0], *m[1]) : WeightDifference{};
    const Mat& diff = wd.diff;
    const int dr = static_cast<int>(diff.rows()), dc = static_cast<int>(diff.cols());
    const char* titles[3] = {"A", "B", "A − B"};
    for (int i = 0; i < 3; ++i) {
      // Side by side while a map fits beside the last one; else on the next line.
      if (i) {
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x < w * 0.9f) ImGui::NewLine();
      }
      ImGui::BeginGroup();
      ImGui::PushID(i);
      if (i < 2) {
        placement_badge(s.cmp->run(i).model().config.norm);
        ImGui::SameLine();
      }
      ImGui::TextUnformatted(titles[i]);
      note_item(std::string("title ") + titles[i]);
      const Mat* mm = i < 2 ? m[i] : (dr > 0 ? &diff : nullptr);
      if (!mm) {
        ImGui::Dummy(ImVec2(w, h * 0.3f));
        ImGui::TextDisabled(i < 2 ? "not computed yet at this stage" : "needs both maps");
        ImGui::Dummy(ImVec2(w, h * 0.5f));
      } else {
        const AttnView* av = i < 2 ? v[i] : v[0];
        float lo = 0, hi = 1;
        Colormap map = Colormap::Viridis;
        if (i == 2) {
          symmetric_range(mm->data(), static_cast<size_t>(mm->size()), lo, hi);
          map = Colormap::Diverging;
        }
        heat_[i].update(mm->data(), static_cast<int>(mm->rows()), static_cast<int>(mm->cols()), key, map, lo, hi);
        HeatmapOpts o;
        std::vector<std::string> ql(
            av->q_labels().begin(),
            av->q_labels().begin() + std::min<size_t>(av->q_labels().size(), static_cast<size_t>(mm->rows())));
        std::vector<std::string> kl(
            av->k_labels().begin(),
            av->k_labels().begin() + std::min<size_t>(av->k_labels().size(), static_cast<size_t>(mm->cols())));
        o.row_labels = &ql;
        o.col_labels = &kl;
        o.max_size = ImVec2(w, h);
        o.own_height = true;
        o.show_values = c.ui.show_values;
        o.fonts = &c.fonts;
        const HeatmapHit hit = heatmap_widget("map", heat_[i], o);
        drawn_boxes().add(std::string("map ") + titles[i], hit.min, hit.max);
        if (i == 0) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);  // the layout JSON (GUI tests)
        if (hit.hovered) {
          ImGui::BeginTooltip();
          const size_t r = static_cast<size_t>(hit.row), k = static_cast<size_t>(hit.col);
          ImGui::Text("query %zu '%s' → key %zu '%s'", r, r < ql.size() ? ql[r].c_str() : "?", k,
                      k < kl.size() ? kl[k].c_str() : "?");
          for (int j = 0; j < 2; ++j)
            if (m[j] && hit.row < m[j]->rows() && hit.col < m[j]->cols())
              ImGui::Text("%s weight %s", j == 0 ? "A" : "B", fmt_value((*m[j])(hit.row, hit.col), 4).c_str());
          if (dr > hit.row && dc > hit.col) ImGui::Text("A − B = %s", fmt_value(diff(hit.row, hit.col), 4).c_str());
          ImGui::EndTooltip();
        }
        // The line under a map wraps at the map's width, so that three maps stand side by side.
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
        if (i < 2) {
          // Mean entropy of this head over its query rows (core/analysis/layer_stats.h).
          ImGui::TextDisabled("entropy %.3f nats (mean over %d queries)",
                              static_cast<double>(row_entropies(*mm, v[i]->trace().masks[0]).mean),
                              static_cast<int>(mm->rows()));
        } else {
          ImGui::TextDisabled("max |A − B| = %s%s", fmt_value(wd.max_abs, 4).c_str(),
                              wd.cut ? " (common rows/keys only)" : "");
        }
        ImGui::PopTextWrapPos();
        note_item(std::string("under ") + titles[i]);
      }
      ImGui::PopID();
      ImGui::EndGroup();
    }
  }

  bool opened_ = false;
  int focus_frame_ = -10;  // the last frame the view had the keyboard focus
  bool playing_ = false;
  double last_play_ = 0;
  char path_a_[512] = {0}, path_b_[512] = {0};
  char src_[512] = {0}, tgt_[256] = {0};
  uint64_t seen_gen_ = 0, followed_ = 0;
  Heatmap heat_[3];
  CompareStatsView stats_;
};

}  // namespace

// Shorter than to_string(AttnKind) ("decoder masked self-attention"): these labels head plots.
const char* compare_kind_label(AttnKind k) {
  static const char* const label[kAttnKinds] = {"encoder self-attention", "decoder self-attention", "cross-attention"};
  const int i = static_cast<int>(k);
  return i >= 0 && i < kAttnKinds ? label[i] : "?";
}

void placement_badge(NormPlacement n) {
  const bool pre = n == NormPlacement::Pre;
  const ImU32 col = placement_colour(pre);
  const char* text = pre ? " pre-LN " : " post-LN ";
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 ts = ImGui::CalcTextSize(text);
  ImGui::GetWindowDrawList()->AddRectFilled(p, p + ts + ImVec2(0, 2), col, 3);
  ImGui::GetWindowDrawList()->AddText(p + ImVec2(0, 1), IM_COL32(0, 0, 0, 255), text);
  ImGui::Dummy(ts + ImVec2(0, 2));
}

std::unique_ptr<Panel> make_compare_panel(std::shared_ptr<PrePostHub> hub) {
  return std::make_unique<ComparePanel>(std::move(hub));
}

}  // namespace sf::gui
