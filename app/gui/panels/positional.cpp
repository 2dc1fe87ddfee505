// positional.cpp — "Positional encoding": the PE matrix (positions × dimensions), sin/cos curves
// of chosen dimensions, the similarity p_t·p_s, the rotation M(k, φ) that maps p_t to p_{t+φ},
// and a switch that runs the model without PE so one sees word order stop mattering.
//
// [SECTION] switch and order test
// [SECTION] matrix
// [SECTION] curves
// [SECTION] similarity
// [SECTION] rotation
#include <algorithm>
#include <cmath>
#include <utility>

#include "actions.h"
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
    // Left: the matrix; right: curves / similarity / rotation / order test in tabs.
    const float left_w = std::min(ImGui::GetContentRegionAvail().x * 0.42f, fs * 36);
    ImGui::BeginChild("pe-left", ImVec2(left_w, 0));
    draw_matrix(c);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("pe-right", ImVec2(0, 0));
    // The tabs in the order scripts number them (`pe-tab N`). (A table of member-function
    // pointers here made GCC 12's UBSan build check the index against an uninitialised copy of
    // it, a flaky out-of-bounds report; draw_tab's switch avoids that.)
    static const char* const tabs[] = {"sin / cos curves", "similarity p_t·p_s", "rotation M(k, φ)", "word order test"};
    if (ImGui::BeginTabBar("petabs")) {
      for (int i = 0; i < 4; ++i) {
        if (!ImGui::BeginTabItem(tabs[i], nullptr, tab_flags(c, i))) continue;
        draw_tab(c, i);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
    c.ui.pe_tab_request = -1;
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
      default:
        draw_order(c);
        break;
    }
  }

  static ImGuiTabItemFlags tab_flags(Ctx& c, int tab) {
    return c.ui.pe_tab_request == tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  }

 private:
  void prepare(const std::shared_ptr<const Model>& m) {
    model_ = m;
    P_ = m->positions();
    sim_ = P_ * P_.transpose();  // (max_len, max_len) p_t · p_s
    rows_ = numbered(static_cast<int>(P_.rows()));
    cols_ = numbered(static_cast<int>(P_.cols()));
    ++version_;
  }

  // [SECTION] switch and order test
  void draw_switch(Ctx& c) {
    const Session& se = *c.snap.session;
    bool on = se.settings().run.positional_encoding;
    ImGui::PushFont(c.fonts.bold);
    if (ImGui::Checkbox("add positional encoding in the run", &on)) {
      DecodeSettings s = se.settings();
      s.run.positional_encoding = on;
      act::set_settings(c.worker, s);
    }
    ImGui::PopFont();
    ImGui::SameLine();
    const char* e = c.snap.model->config.scale_embeddings ? "E[id_t]·√d" : "E[id_t]";  // GPT-2, BERT: no √d
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
  void draw_curves(Ctx& c) {
    const Config& cfg = c.snap.model->config;
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
                    cfg.d_model, w, 6.2831853f / w);
      }
    }
  }

  // [SECTION] similarity
  void draw_similarity(Ctx& c) {
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
    const Eigen::Matrix2f M = pe_rotation(k, phi, d);
    const Eigen::Vector2f pt(P_(t, 2 * k), P_(t, 2 * k + 1));
    const Eigen::Vector2f rot = M * pt;
    const Eigen::Vector2f target(P_(t + phi, 2 * k), P_(t + phi, 2 * k + 1));
    const float w = pe_frequency(k, d);
    ImGui::TextWrapped(
        "Each (sin, cos) pair of p_{t+φ} is the pair of p_t turned by the angle ω_k·φ — the same rotation for "
        "every t. So \"φ positions later\" is a linear map the model can learn.");
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.mono);
    ImGui::Text("ω_%d = %.5f,  ω_%d·φ = %.4f rad", k, w, k, w * phi);
    ImGui::Text("M(%d, %d) = [ %7.4f  %7.4f ]", k, phi, M(0, 0), M(0, 1));
    ImGui::Text("          [ %7.4f  %7.4f ]", M(1, 0), M(1, 1));
    ImGui::Text("p_%d[%d..%d]      = (%7.4f, %7.4f)", t, 2 * k, 2 * k + 1, pt(0), pt(1));
    ImGui::Text("M · p_%d pair    = (%7.4f, %7.4f)", t, rot(0), rot(1));
    ImGui::Text("p_%d[%d..%d]      = (%7.4f, %7.4f)", t + phi, 2 * k, 2 * k + 1, target(0), target(1));
    const float err = (rot - target).cwiseAbs().maxCoeff();
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
    const float a0 = std::atan2(pt(0), pt(1)), a1 = a0 + w * phi;
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

  std::shared_ptr<const Model> model_;
  Mat P_, sim_;
  std::vector<std::string> rows_, cols_;
  uint64_t version_ = 1;
  Heatmap pe_, bar_, sim_hm_, sim_bar_;
};

}  // namespace

std::unique_ptr<Panel> make_positional_panel() { return std::make_unique<PositionalPanel>(); }

}  // namespace sf::gui
