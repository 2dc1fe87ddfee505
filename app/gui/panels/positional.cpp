// positional.cpp — "Positional encoding": the PE matrix (positions × dimensions), sin/cos curves
// of chosen dimensions, the similarity p_t·p_s, the rotation M(k, φ) that maps p_t to p_{t+φ},
// a switch that runs the model without PE so one sees word order stop mattering, and for rotary
// models (Llama, Qwen2, Mistral, Pythia) the same rotation applied to the recorded q and k.
//
// [SECTION] switch and order test
// [SECTION] matrix
// [SECTION] curves
// [SECTION] similarity
// [SECTION] rotation
// [SECTION] rotary
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "actions.h"
#include "analysis/position_view.h"
#include "analysis/rotary_view.h"
#include "app.h"
#include "gfx/imgui_math.h"
#include "model/positional_encoding.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class PositionalPanel : public Panel {
 public:
  PositionalPanel() : Panel({"Positional encoding", "pe", ImVec4(0.24f, 0.40f, 0.76f, 0.60f)}) {}

  const Heatmap* main_heatmap() const override { return &pe_; }

  void Draw(Ctx& c) override {
    const Snapshot& s = c.snap;
    if (s.model != model_) prepare(s.model);
    draw_switch(c);
    ImGui::Separator();
    const float fs = ImGui::GetFontSize();
    // Left: the matrix; right: curves / similarity / rotation / order test in tabs. A rotary model
    // adds no position vectors: the tabs take the whole width.
    const bool rotary = s.model->config.positional == Positional::Rotary;
    if (!rotary) {
      const float left_w = std::min(ImGui::GetContentRegionAvail().x * 0.42f, fs * 36);
      ImGui::BeginChild("pe-left", ImVec2(left_w, 0));
      draw_matrix(c);
      ImGui::EndChild();
      ImGui::SameLine();
    }
    ImGui::BeginChild("pe-right", ImVec2(0, 0));
    // The tabs in the order scripts number them (`pe-tab N`). (A table of member-function
    // pointers here made GCC 12's UBSan build check the index against an uninitialised copy of
    // it, a flaky out-of-bounds report; draw_tab's switch avoids that.)
    // The rotary tab (4) sits beside the rotation M(k, φ) it generalises.
    static const char* const tabs[] = {"sin / cos curves", "similarity p_t·p_s", "rotation M(k, φ)", "word order test",
                                       "rotary q·k"};
    static const int order[] = {0, 1, 2, 4, 3};
    if (ImGui::BeginTabBar("petabs")) {
      for (int i : order) {
        if (!ImGui::BeginTabItem(tabs[i], nullptr, tab_flags(c, i))) continue;
        draw_tab(c, i);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
    c.ui.pe_tab_request = -1;
    open_rotary_ = false;
    ImGui::EndChild();
  }

  void draw_tab(Ctx& c, int tab) {
    switch (tab) {
      case 0:
        draw_curves(c);
        break;
      case 1:
        draw_similarity(c);
        break;
      case 2:
        draw_rotation(c);
        break;
      case 4:
        draw_rotary(c);
        break;
      default:
        draw_order(c);
        break;
    }
  }

  // A script's request, or the rotary tab when a rotary model has just been opened.
  ImGuiTabItemFlags tab_flags(Ctx& c, int tab) const {
    const bool want = c.ui.pe_tab_request >= 0 ? c.ui.pe_tab_request == tab : open_rotary_ && tab == 4;
    return want ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  }

 private:
  void prepare(const std::shared_ptr<const Model>& m) {
    model_ = m;
    P_ = m->positions();
    sim_ = position_similarity(P_);  // (max_len, max_len) p_t · p_s
    rows_ = numbered(static_cast<int>(P_.rows()));
    cols_ = numbered(static_cast<int>(P_.cols()));
    ++version_;
    open_rotary_ = m->config.positional == Positional::Rotary;
    rope_.reset();
  }

  // [SECTION] switch and order test
  void draw_switch(Ctx& c) {
    const Session& se = *c.snap.session;
    bool on = se.settings().run.positional_encoding;
    const bool rotary = c.snap.model->config.positional == Positional::Rotary;
    ImGui::PushFont(c.fonts.bold);
    if (ImGui::Checkbox(rotary ? "rotate q and k in the run" : "add positional encoding in the run", &on)) {
      DecodeSettings s = se.settings();
      s.run.positional_encoding = on;
      act::set_settings(c.worker, s);
    }
    ImGui::PopFont();
    ImGui::SameLine();
    const char* e = c.snap.model->config.scale_embeddings ? "E[id_t]·√d" : "E[id_t]";  // GPT-2, BERT: no √d
    if (rotary) {
      if (on)
        ImGui::TextDisabled("x_t = %s, nothing added: q and k are turned by their position in every attention", e);
      else
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn),
                           "OFF: q and k are not turned — the model cannot tell positions apart");
      return;
    }
    if (on)
      ImGui::TextDisabled("x_t = %s + p_t", e);
    else
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn),
                         "OFF: x_t = %s — the model cannot tell positions apart", e);
  }

  void draw_order(Ctx& c) {
    const auto& d = c.snap.order_demo;
    const Palette& pal = palette();
    if (still_running(d.get(), "running the model on the reversed input…")) return;
    ImGui::TextWrapped(
        "The %s is run as typed and reversed, with and without positional encoding. Without PE every "
        "token's output is the same vector wherever the token stands: attention sees a set, not a sequence.",
        c.snap.model->config.has_encoder() ? "encoder" : "decoder");
    std::string a, b;
    for (auto& t : d->tokens) a += t + " ";
    for (auto& t : d->reversed) b += t + " ";
    ImGui::PushFont(c.fonts.mono);
    ImGui::Text("input     %s", a.c_str());
    ImGui::Text("reversed  %s", b.c_str());
    ImGui::PopFont();
    if (ImGui::BeginTable("order", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("");
      ImGui::TableSetupColumn("with PE");
      ImGui::TableSetupColumn("without PE");
      ImGui::TableHeadersRow();
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted("max |out(x)_i − out(rev x)_j|\nover matching tokens");
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.warn), "%.4f", d->max_diff_pe);
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.ok), "%.2g", d->max_diff_no_pe);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const Config& cfg = c.snap.model->config;
      ImGui::TextUnformatted(cfg.has_decoder() ? "first greedy output token\n(input / reversed)"
                             : cfg.mlm_head    ? "MLM top-1 at the first [MASK]\n(input / reversed)"
                                               : "(no output head)");
      ImGui::TableNextColumn();
      ImGui::Text("%s / %s", d->next_pe.c_str(), d->next_rev_pe.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s / %s", d->next_no_pe.c_str(), d->next_rev_no_pe.c_str());
      ImGui::EndTable();
    }
    std::vector<Series> s = {{&d->per_token_pe, pal.warn, "with PE"}, {&d->per_token_no_pe, pal.ok, "without PE"}};
    line_plot("orderplot", s, &d->tokens, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 9), c.fonts,
              "max |Δ output| per token");
  }

  // [SECTION] matrix
  void draw_matrix(Ctx& c) {
    const Config& cfg = c.snap.model->config;
    float lo, hi;
    symmetric_range(P_.data(), static_cast<size_t>(P_.size()), lo, hi);
    pe_.update(P_.data(), static_cast<int>(P_.rows()), static_cast<int>(P_.cols()), version_, Colormap::Diverging, lo,
               hi);
    ImGui::Text("%s PE: P (%ld positions × %d dims)", to_string(cfg.positional), static_cast<long>(P_.rows()),
                cfg.d_model);
    const int n = static_cast<int>(c.snap.session->input().src_ids.size());
    HeatmapOpts o;
    o.row_labels = &rows_;
    o.col_labels = &cols_;
    o.row_title = "position t";
    o.col_title = "dimension i";
    o.square = false;
    o.max_cell = 24;
    o.fonts = &c.fonts;
    o.max_size = ImVec2(0, ImGui::GetContentRegionAvail().y - ImGui::GetFontSize() * 2.6f);
    o.new_row0 = 0;
    o.new_rows =
        std::min(n > 0 ? n : static_cast<int>(c.snap.session->input().tgt_ids.size()), static_cast<int>(P_.rows()));
    const HeatmapHit hit = heatmap_widget("pe", pe_, o);
    heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    if (hit.hovered) {
      const int t = hit.row, i = hit.col, k = i / 2;
      if (cfg.positional == Positional::Sinusoidal)
        ImGui::SetTooltip("p_%d[%d] = %s(%d · ω_%d) = %s\nω_%d = 10000^(−2·%d/%d) = %.5f", t, i, i % 2 ? "cos" : "sin",
                          t, k, fmt_value(P_(t, i), 4).c_str(), k, k, cfg.d_model, pe_frequency(k, cfg.d_model));
      else
        ImGui::SetTooltip("pos_embed.weight[%d][%d] = %s (learned)", t, i, fmt_value(P_(t, i), 4).c_str());
      if (ImGui::IsMouseClicked(0)) c.ui.pe_dims[0] = i, c.ui.pe_k = k;
    }
    colour_bar(bar_, Colormap::Diverging, lo, hi, ImGui::GetFontSize() * 8, "value");
    ImGui::TextDisabled("outlined: the positions of the current input");
  }

  // [SECTION] curves
  // Rotary models have no position vectors to plot.
  static bool no_vectors(const Config& cfg) {
    if (cfg.positional != Positional::Rotary) return false;
    ImGui::TextWrapped(
        "This model adds no position vectors p_t to its input: it turns each query and key by the angle p·θ_i "
        "instead. The tab \"rotary q·k\" shows that rotation on the recorded q and k.");
    return true;
  }

  void draw_curves(Ctx& c) {
    const Config& cfg = c.snap.model->config;
    if (no_vectors(cfg)) return;
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(fs * 10);
    ImGui::SliderInt("dimension A", &c.ui.pe_dims[0], 0, cfg.d_model - 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fs * 10);
    ImGui::SliderInt("dimension B", &c.ui.pe_dims[1], 0, cfg.d_model - 1);
    std::vector<float> a(static_cast<size_t>(P_.rows())), b(a.size());
    for (Eigen::Index t = 0; t < P_.rows(); ++t)
      a[static_cast<size_t>(t)] = P_(t, c.ui.pe_dims[0]), b[static_cast<size_t>(t)] = P_(t, c.ui.pe_dims[1]);
    char na[48], nb[48];
    const auto name = [&](char* out, int i) {
      if (cfg.positional == Positional::Sinusoidal)
        std::snprintf(out, 48, "dim %d: %s(ω_%d t)", i, i % 2 ? "cos" : "sin", i / 2);
      else
        std::snprintf(out, 48, "dim %d (learned)", i);
    };
    name(na, c.ui.pe_dims[0]);
    name(nb, c.ui.pe_dims[1]);
    std::vector<Series> s = {{&a, pal.accent2, na}, {&b, pal.accent, nb}};
    line_plot("curves", s, &rows_,
              ImVec2(ImGui::GetContentRegionAvail().x, std::max(fs * 10, ImGui::GetContentRegionAvail().y - fs * 4)),
              c.fonts, "p_t[i] over positions t", true, "position");
    if (cfg.positional == Positional::Sinusoidal) {
      for (int i : c.ui.pe_dims) {
        const float w = pe_frequency(i / 2, cfg.d_model);
        ImGui::Text("dim %d: ω_%d = 10000^(−2·%d/%d) = %.5f,  wavelength 2π/ω = %.1f positions", i, i / 2, i / 2,
                    cfg.d_model, w, pe_wavelength(i / 2, cfg.d_model));
      }
    }
  }

  // [SECTION] similarity
  void draw_similarity(Ctx& c) {
    if (no_vectors(c.snap.model->config)) return;
    float lo, hi;
    finite_range(sim_.data(), static_cast<size_t>(sim_.size()), lo, hi);
    sim_hm_.update(sim_.data(), static_cast<int>(sim_.rows()), static_cast<int>(sim_.cols()), version_,
                   Colormap::Viridis, lo, hi);
    ImGui::TextWrapped(
        "p_t · p_s for every pair of positions. For sinusoids it is Σ_k cos(ω_k (t − s)): it depends only on "
        "the offset t − s, so every diagonal is constant.");
    HeatmapOpts o;
    o.row_labels = &rows_;
    o.col_labels = &rows_;
    o.row_title = "t";
    o.col_title = "s";
    o.fonts = &c.fonts;
    o.max_size = ImVec2(0, ImGui::GetContentRegionAvail().y - ImGui::GetFontSize() * 2);
    const HeatmapHit hit = heatmap_widget("sim", sim_hm_, o);
    if (hit.hovered)
      ImGui::SetTooltip("p_%d · p_%d = %s   (offset t − s = %d)", hit.row, hit.col,
                        fmt_value(sim_(hit.row, hit.col), 4).c_str(), hit.row - hit.col);
    colour_bar(sim_bar_, Colormap::Viridis, lo, hi, ImGui::GetFontSize() * 8, "p_t·p_s");
  }

  // [SECTION] rotation
  void draw_rotation(Ctx& c) {
    const Config& cfg = c.snap.model->config;
    const Palette& pal = palette();
    if (no_vectors(cfg)) return;
    if (cfg.positional != Positional::Sinusoidal) {
      ImGui::TextWrapped(
          "This model learned its position vectors (pos_embed.weight): there is no fixed rotation between "
          "p_t and p_{t+φ}. Load a model with sinusoidal PE to see M(k, φ).");
      return;
    }
    const int d = cfg.d_model, L = static_cast<int>(P_.rows());
    const float fs = ImGui::GetFontSize();
    ImGui::PushItemWidth(fs * 9);
    ImGui::SliderInt("pair k", &c.ui.pe_k, 0, d / 2 - 1);
    ImGui::SameLine();
    ImGui::SliderInt("offset φ", &c.ui.pe_phi, 0, std::max(1, L - 1));
    ImGui::SameLine();
    ImGui::SliderInt("position t", &c.ui.pe_t, 0, std::max(0, L - 1 - c.ui.pe_phi));
    ImGui::PopItemWidth();
    const int k = c.ui.pe_k, phi = c.ui.pe_phi, t = std::min(c.ui.pe_t, std::max(0, L - 1 - phi));
    const PairShift shift = pair_shift(P_, k, phi, t);
    const Eigen::Matrix2f& M = shift.rotation;
    const Eigen::Vector2f &pt = shift.p_t, &rot = shift.turned, &target = shift.p_tphi;
    const float w = shift.omega;
    ImGui::TextWrapped(
        "Each (sin, cos) pair of p_{t+φ} is the pair of p_t turned by the angle ω_k·φ — the same rotation for "
        "every t. So \"φ positions later\" is a linear map the model can learn.");
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.mono);
    ImGui::Text("ω_%d = %.5f,  ω_%d·φ = %.4f rad", k, w, k, shift.angle);
    ImGui::Text("M(%d, %d) = [ %7.4f  %7.4f ]", k, phi, M(0, 0), M(0, 1));
    ImGui::Text("          [ %7.4f  %7.4f ]", M(1, 0), M(1, 1));
    ImGui::Text("p_%d[%d..%d]      = (%7.4f, %7.4f)", t, 2 * k, 2 * k + 1, pt(0), pt(1));
    ImGui::Text("M · p_%d pair    = (%7.4f, %7.4f)", t, rot(0), rot(1));
    ImGui::Text("p_%d[%d..%d]      = (%7.4f, %7.4f)", t + phi, 2 * k, 2 * k + 1, target(0), target(1));
    const float err = shift.max_diff;
    ImGui::PopFont();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(err < 1e-4f ? pal.ok : pal.error), "%s  max difference %.1e",
                       err < 1e-4f ? "✓ equal" : "✖ differ", err);
    ImGui::EndGroup();
    ImGui::SameLine(0, fs * 2);
    // The unit circle with p_t, p_{t+φ} and the arc between them.
    const float R = std::min(fs * 6.0f, ImGui::GetContentRegionAvail().x * 0.4f);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const ImVec2 o(p.x + R + fs, p.y + R + fs);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddCircle(o, R, pal.grid, 64, 1.5f);
    dl->AddLine(ImVec2(o.x - R - 6, o.y), ImVec2(o.x + R + 6, o.y), pal.grid);
    dl->AddLine(ImVec2(o.x, o.y - R - 6), ImVec2(o.x, o.y + R + 6), pal.grid);
    // x axis: the sin component, y axis (up): the cos component.
    const auto at = [&](float s, float co) { return ImVec2(o.x + s * R, o.y - co * R); };
    const float a0 = std::atan2(pt(0), pt(1)), a1 = a0 + shift.angle;
    for (int i = 0; i < 32; ++i) {
      const float u0 = a0 + (a1 - a0) * i / 32.0f, u1 = a0 + (a1 - a0) * (i + 1) / 32.0f;
      dl->AddLine(at(0.8f * std::sin(u0), 0.8f * std::cos(u0)), at(0.8f * std::sin(u1), 0.8f * std::cos(u1)),
                  pal.accent, 2);
    }
    dl->AddLine(o, at(pt(0), pt(1)), pal.accent2, 2.5f);
    dl->AddCircleFilled(at(pt(0), pt(1)), 5, pal.accent2);
    dl->AddLine(o, at(target(0), target(1)), pal.accent, 2.5f);
    dl->AddCircleFilled(at(target(0), target(1)), 5, pal.accent);
    char l0[32], l1[32];
    std::snprintf(l0, sizeof l0, "p_%d", t);
    std::snprintf(l1, sizeof l1, "p_%d", t + phi);
    dl->AddText(at(pt(0) * 1.08f, pt(1) * 1.08f), pal.accent2, l0);
    dl->AddText(at(target(0) * 1.08f, target(1) * 1.08f), pal.accent, l1);
    dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(o.x + R + 8, o.y - c.fonts.small->FontSize),
                pal.text_dim, "sin");
    dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(o.x + 4, o.y - R - fs), pal.text_dim, "cos");
    ImGui::Dummy(ImVec2(2 * R + 2 * fs, 2 * R + 2 * fs));
  }

  // [SECTION] rotary
  // Colour of position t of n: dark blue (first) to yellow (last), viridis-like.
  static ImU32 position_colour(int t, int n) {
    static const float stops[][3] = {{0.27f, 0.00f, 0.33f},
                                     {0.23f, 0.32f, 0.55f},
                                     {0.13f, 0.57f, 0.55f},
                                     {0.37f, 0.79f, 0.38f},
                                     {0.99f, 0.91f, 0.15f}};
    const float u = n > 1 ? static_cast<float>(t) / static_cast<float>(n - 1) * 4.0f : 0.0f;
    const int i = std::min(3, static_cast<int>(u));
    const float f = u - static_cast<float>(i);
    float rgb[3];
    for (int j = 0; j < 3; ++j) rgb[j] = stops[i][j] + (stops[i + 1][j] - stops[i][j]) * f;
    return ImGui::ColorConvertFloat4ToU32(ImVec4(rgb[0], rgb[1], rgb[2], 1.0f));
  }

  // One polar plot: row t of `v` (n, 2) as an arrow from the centre, coloured by position; the
  // arrow of row `mark` drawn thicker and labelled. Returns the plot's rectangle.
  ImVec4 polar(Ctx& c, const char* title, const Mat& v, int mark, const char* letter, float R) {
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.small);
    ImGui::TextUnformatted(title);
    ImGui::PopFont();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const ImVec2 o(p.x + R + fs * 0.5f, p.y + R + fs * 0.5f);
    float scale = 1e-12f;
    for (Eigen::Index t = 0; t < v.rows(); ++t) scale = std::max(scale, v.row(t).norm());
    scale = R / scale;
    dl->AddCircle(o, R, pal.grid, 64, 1.0f);
    dl->AddLine(ImVec2(o.x - R - 4, o.y), ImVec2(o.x + R + 4, o.y), pal.grid);
    dl->AddLine(ImVec2(o.x, o.y - R - 4), ImVec2(o.x, o.y + R + 4), pal.grid);
    const int n = static_cast<int>(v.rows());
    for (int pass = 0; pass < 2; ++pass)
      for (int t = 0; t < n; ++t) {
        if ((t == mark) != (pass == 1)) continue;  // the marked arrow last, on top
        const ImVec2 tip(o.x + v(t, 0) * scale, o.y - v(t, 1) * scale);
        const ImU32 col = position_colour(t, n);
        const float w = t == mark ? 3.5f : 2.0f;
        dl->AddLine(o, tip, col, w);
        dl->AddCircleFilled(tip, t == mark ? 5.0f : 3.5f, col);
        if (t == mark || n <= 12) {
          char l[24];
          std::snprintf(l, sizeof l, "%s%d", letter, t);
          const float len = std::max(1.0f, std::hypot(tip.x - o.x, tip.y - o.y));
          dl->AddText(c.fonts.small, c.fonts.small->FontSize,
                      ImVec2(tip.x + (tip.x - o.x) / len * 6 - 4, tip.y + (tip.y - o.y) / len * 6 - 6),
                      t == mark ? pal.text : pal.text_dim, l);
        }
      }
    ImGui::Dummy(ImVec2(2 * R + fs, 2 * R + fs));
    ImGui::EndGroup();
    return ImVec4(p.x, p.y, p.x + 2 * R + fs, p.y + 2 * R + fs);
  }

  void draw_rotary(Ctx& c) {
    const Config& cfg = c.snap.model->config;
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    if (cfg.positional != Positional::Rotary) {
      ImGui::TextWrapped(
          "This model adds its positions to the input (%s). Rotary models (Llama, Qwen2, Mistral, Pythia) add "
          "nothing there: they turn each query and key by the rotation of the tab beside this one, M(k, φ), by "
          "an angle that grows with the position. Open such a model to see it here.",
          to_string(cfg.positional));
      return;
    }
    ImGui::PushItemWidth(fs * 7);
    ImGui::SliderInt("layer", &c.ui.rope_layer, 0, cfg.n_decoder_layers - 1);
    ImGui::SameLine();
    ImGui::SliderInt("head", &c.ui.rope_head, 0, cfg.n_heads - 1);
    ImGui::SameLine();
    ImGui::SliderInt("frequency i", &c.ui.rope_pair, 0, std::max(0, cfg.rotary_dim() / 2 - 1));
    c.ui.rope_layer = std::clamp(c.ui.rope_layer, 0, cfg.n_decoder_layers - 1);
    const AttnView* av = c.snap.attn_view(AttnKind::DecoderSelf, c.ui.rope_layer);
    if (!av || av->trace().q.rows() == 0) {
      ImGui::PopItemWidth();
      ImGui::TextDisabled("layer %d's self-attention has not run yet: step to it in the stepper", c.ui.rope_layer);
      return;
    }
    c.ui.rope_head = std::clamp(c.ui.rope_head, 0, cfg.n_heads - 1);
    const AttentionTrace& tr = av->trace();
    const int nq = static_cast<int>(tr.q.rows()), nk = static_cast<int>(tr.k.rows());
    if (c.ui.rope_m < 0) c.ui.rope_m = nq - 1;  // the newest query until one is chosen
    ImGui::SameLine();
    ImGui::SliderInt("query m", &c.ui.rope_m, 0, nq - 1);
    ImGui::SameLine();
    ImGui::SliderInt("key n", &c.ui.rope_n, 0, nk - 1);
    ImGui::PopItemWidth();
    c.ui.rope_head = std::clamp(c.ui.rope_head, 0, cfg.n_heads - 1);
    c.ui.rope_pair = std::clamp(c.ui.rope_pair, 0, std::max(0, cfg.rotary_dim() / 2 - 1));
    c.ui.rope_m = std::clamp(c.ui.rope_m, 0, nq - 1);
    c.ui.rope_n = std::clamp(c.ui.rope_n, 0, nk - 1);
    const int m = c.ui.rope_m, n = c.ui.rope_n;
    const std::tuple<uint64_t, int, int, int, int, int> key{
        c.snap.generation, c.ui.rope_layer, c.ui.rope_head, c.ui.rope_pair, m, n};
    if (!rope_ || key != rope_key_) {
      auto v = rotary_view(cfg, tr.q, tr.k, c.ui.rope_head, c.ui.rope_pair, m, n);
      rope_error_ = v.ok() ? "" : v.error();
      rope_ = v.ok() ? std::make_shared<RotaryView>(std::move(*v)) : nullptr;
      rope_key_ = key;
    }
    if (!rope_) {
      text_coloured_wrapped(pal.error, rope_error_.c_str());
      return;
    }
    const RotaryView& v = *rope_;
    const RotaryLayout& l = v.layout;
    ImGui::TextWrapped(
        "Rotary embedding is the rotation M(k, φ) of the sinusoidal encoding (tab \"rotation M(k, φ)\"; \"Transformer "
        "in details\", Positional Encoding), applied to the queries and keys instead of added to the input: "
        "dimensions i and i + %d of every head turn by the angle p·θ_i at position p. Then q_m·k_n = q̃·M(n − m)k̃ "
        "depends on the positions only through m − n.",
        l.pairs());
    draw_rotary_dims(v);
    // The chosen frequency: one query's pair turned to every position, the recorded q_m and k_n at
    // every position; then the numbers.
    // The numbers go beside the plots when they fit, below them otherwise.
    const float avail = ImGui::GetContentRegionAvail().x, numbers_w = fs * 22;
    const bool beside = avail > numbers_w + fs * 4.5f + 6 * fs * 4.0f;
    const float R =
        std::clamp((avail - fs * 4.5f - (beside ? numbers_w : 0.0f)) / 6.0f - fs * 0.5f, fs * 4.0f,
                   std::max(fs * 4.0f, std::min(fs * 6.5f, (ImGui::GetContentRegionAvail().y - fs * 3) / 2)));
    char tf[64], tq[64], tk[64];
    std::snprintf(tf, sizeof tf, "q̃_%d turned to each p", m);
    std::snprintf(tq, sizeof tq, "recorded q_p (head %d)", v.head);
    std::snprintf(tk, sizeof tk, "recorded k_p (K/V %d)", v.kv_head);
    const ImVec4 fr = polar(c, tf, v.q_fan, m, "", R);
    ImGui::SameLine(0, fs);
    polar(c, tq, v.q_pair, m, "q", R);
    ImGui::SameLine(0, fs);
    const ImVec4 kr = polar(c, tk, v.k_pair, n, "k", R);
    mark_rect = ImVec4(fr.x, fr.y, kr.z, kr.w);  // the plots (the GUI tests read it)
    if (beside) ImGui::SameLine(0, fs * 1.5f);
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.mono);
    ImGui::Text("θ_%d = %.5f rad/position", v.pair, v.theta);
    ImGui::Text("wavelength 2π/θ_%d = %.1f positions", v.pair, v.wavelength);
    ImGui::Text("q_%d pair = (%7.4f, %7.4f)", m, v.q_pair(m, 0), v.q_pair(m, 1));
    ImGui::Text("k_%d pair = (%7.4f, %7.4f)", n, v.k_pair(n, 0), v.k_pair(n, 1));
    ImGui::Text("this pair's share     %9.4f", v.pair_scores(m, n));
    ImGui::Text("q_%d·k_%d (whole head) %9.4f", m, n, v.scores(m, n));
    const Mat& raw = av->head(v.head).raw;
    if (m < raw.rows() && n < raw.cols()) {
      const float rec = raw(m, n);
      if (std::isfinite(rec))
        ImGui::Text("recorded Q_h K_hᵀ     %9.4f", rec);
      else
        ImGui::TextDisabled("recorded Q_h K_hᵀ     — (key %d after query %d)", n, m);
    }
    ImGui::PopFont();
    ImGui::TextDisabled(
        "scores recomputed from the recorded\nrotated q and k; arrow colour: position p,\ndark (0) → light (last)");
    ImGui::EndGroup();
    draw_rotary_table(c, v);
  }

  // Which dimensions of a head rotate: a strip of d_head cells (rotating pairs i and i + r/2 in two
  // colours, pass-through dimensions grey), the chosen pair outlined.
  static void draw_rotary_dims(const RotaryView& v) {
    const Palette& pal = palette();
    const RotaryLayout& l = v.layout;
    const float fs = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("head dimensions");
    ImGui::SameLine();
    const float cell =
        std::clamp((ImGui::GetContentRegionAvail().x - fs) / static_cast<float>(l.d_head), 3.0f, fs * 1.4f);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int i = 0; i < l.d_head; ++i) {
      const ImVec2 a(p.x + static_cast<float>(i) * cell, p.y), z(a.x + cell - 1, p.y + fs * 1.2f);
      const bool rot = i < l.rot_dim;
      dl->AddRectFilled(a, z, rot ? (i < l.pairs() ? pal.accent2 : pal.accent) : pal.grid, 2);
      if (i == v.dim_a || i == v.dim_b) dl->AddRect(a, z, pal.text, 2, 0, 2.5f);
    }
    ImGui::Dummy(ImVec2(cell * static_cast<float>(l.d_head), fs * 1.2f));
    if (ImGui::IsItemHovered()) {
      const int i = static_cast<int>((ImGui::GetIO().MousePos.x - p.x) / cell);
      if (i >= 0 && i < l.rot_dim)
        ImGui::SetTooltip("dimension %d turns with dimension %d by p·θ_%d", i,
                          i < l.pairs() ? i + l.pairs() : i - l.pairs(), i % l.pairs());
      else if (i >= l.rot_dim && i < l.d_head)
        ImGui::SetTooltip("dimension %d passes through unrotated", i);
    }
    if (l.pass_through() > 0)
      ImGui::TextWrapped(
          "partial rotary: dimensions 0–%d rotate (i with i + %d, outlined: the chosen pair), %d–%d (grey) pass "
          "through unchanged — %d of %d dimensions rotate",
          l.rot_dim - 1, l.pairs(), l.rot_dim, l.d_head - 1, l.rot_dim, l.d_head);
    else
      ImGui::TextWrapped("all %d dimensions rotate: i with i + %d (outlined: the chosen pair)", l.d_head, l.pairs());
  }

  // The relative-position property in numbers: q̃ and k̃ held fixed, placed at (m, n).
  void draw_rotary_table(Ctx& c, const RotaryView& v) {
    const Palette& pal = palette();
    ImGui::TextWrapped(
        "Hold the un-rotated q̃ (query %d) and k̃ (key %d) fixed and place them at positions m and n: the score "
        "R(m)q̃ · R(n)k̃ is the same for every pair with the same m − n (q̃·k̃ = %s without rotation).",
        v.fix_q, v.fix_k, fmt_value(v.unrotated_score, 4).c_str());
    size_t cols = 0;
    for (const RelativeRow& r : v.relative) cols = std::max(cols, r.at.size());
    if (!ImGui::BeginTable("relative", static_cast<int>(cols) + 2,
                           ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg))
      return;
    ImGui::TableSetupColumn("m − n");
    for (size_t j = 0; j < cols; ++j) ImGui::TableSetupColumn(j == 0 ? "(m, n): score" : "");
    ImGui::TableSetupColumn("spread");
    ImGui::TableHeadersRow();
    ImGui::PushFont(c.fonts.mono);
    for (const RelativeRow& r : v.relative) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%+d", r.offset);
      for (size_t j = 0; j < cols; ++j) {
        ImGui::TableNextColumn();
        if (j < r.at.size()) ImGui::Text("(%d, %d): %8.4f", r.at[j].m, r.at[j].n, r.at[j].score);
      }
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(r.spread < 1e-3f ? pal.ok : pal.error), "%.1e", r.spread);
    }
    ImGui::PopFont();
    ImGui::EndTable();
  }

  std::shared_ptr<const RotaryView> rope_;
  std::tuple<uint64_t, int, int, int, int, int> rope_key_{};
  std::string rope_error_;
  bool open_rotary_ = false;  // select the rotary tab on the next frame (a rotary model was opened)

  std::shared_ptr<const Model> model_;
  Mat P_, sim_;
  std::vector<std::string> rows_, cols_;
  uint64_t version_ = 1;
  Heatmap pe_, bar_, sim_hm_, sim_bar_;
};

}  // namespace

std::unique_ptr<Panel> make_positional_panel() { return std::make_unique<PositionalPanel>(); }

}  // namespace sf::gui
