// residual.cpp — "Residual & LayerNorm": per sublayer connection, the norm of the residual stream
// entering and leaving it per token, and the mean and variance its LayerNorm saw (an RMSNorm's
// root mean square per token) — the numbers behind pre-LN vs post-LN (pre-LN lets the stream grow
// with depth; post-LN renormalises it).
//
// [SECTION] growth through depth
// [SECTION] per block
#include <algorithm>
#include <cmath>

#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class ResidualPanel : public Panel {
 public:
  ResidualPanel() : Panel({"Residual & LayerNorm", "residual", ImVec4(0.66f, 0.40f, 0.34f, 0.60f)}) {}

  void Draw(Ctx& c) override {
    const Snapshot& s = c.snap;
    const Config& cfg = s.model->config;
    const Palette& pal = palette();
    const bool rms = cfg.norm_kind == NormKind::RMSNorm;
    if (cfg.residual == Residual::Parallel)
      ImGui::TextWrapped(
          "pre-LN, parallel residual: x = x + Attn(LN1(x)) + MLP(LN2(x)) — both branches read the same x, and the "
          "stream itself is never normalised");
    else if (rms)
      ImGui::TextWrapped(
          "pre-LN with RMSNorm: x = x + Sublayer(RMSNorm(x)), RMSNorm(x) = x / √(mean(x²) + ε) ⊙ g — no mean "
          "subtracted and no variance: one number per token, rms = ‖x‖ / √d");
    else
      ImGui::TextWrapped("%s: %s", cfg.norm == NormPlacement::Pre ? "pre-LN" : "post-LN",
                         cfg.norm == NormPlacement::Pre
                             ? "x = x + Sublayer(LN(x)) — the stream itself is never normalised"
                             : "x = LN(x + Sublayer(x)) — every block renormalises the stream");
    if (s.blocks.empty()) {
      ImGui::TextDisabled("nothing computed yet at this stage");
      return;
    }
    // [SECTION] growth through depth
    depth_in_.clear();
    depth_out_.clear();
    labels_.clear();
    for (const BlockStats& b : s.blocks) {
      depth_in_.push_back(static_cast<float>(b.stat.mean_norm_in()));
      depth_out_.push_back(static_cast<float>(b.stat.mean_norm_out()));
      // "enc 0 · self-attn" → "e0 att", "dec 1 · cross-attn" → "d1 x", "dec 1 · ffn" → "d1 ff"
      const std::string& l = b.label;
      const char* kind = l.find("cross") != std::string::npos ? " x"
                         : l.find("ffn") != std::string::npos ? " ff"
                                                              : " att";
      labels_.push_back(std::string(b.encoder ? "e" : "d") + std::to_string(b.layer) + kind);
    }
    const float fs = ImGui::GetFontSize();
    std::vector<Series> d = {{&depth_out_, pal.accent, "mean ‖x‖ leaving the block"}};
    line_plot("depth", d, &labels_, ImVec2(ImGui::GetContentRegionAvail().x, fs * 8), c.fonts,
              "through the stack (att = self-attention, x = cross, ff = feed-forward)", false, "sublayer");
    ImGui::Separator();
    // [SECTION] per block
    ImGui::SetNextItemWidth(fs * 12);
    std::vector<std::string> names = {"every block"};
    for (auto& b : s.blocks) names.push_back(b.label);
    sel_ = std::clamp(sel_, 0, static_cast<int>(names.size()) - 1);
    if (ImGui::BeginCombo("##block", names[static_cast<size_t>(sel_)].c_str())) {
      for (size_t i = 0; i < names.size(); ++i)
        if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == sel_)) sel_ = static_cast<int>(i);
      ImGui::EndCombo();
    }
    ImGui::BeginChild("blocks");
    for (size_t i = 0; i < s.blocks.size(); ++i) {
      if (sel_ > 0 && static_cast<int>(i) + 1 != sel_) continue;
      const BlockStats& b = s.blocks[i];
      ImGui::PushID(static_cast<int>(i));
      heading(c.fonts, b.label.c_str());
      const float w = (ImGui::GetContentRegionAvail().x - fs * 0.5f) / 2.0f;
      std::vector<Series> n = {{&b.stat.norm_in, pal.accent2, "‖x‖ in"}, {&b.stat.norm_out, pal.accent, "‖x‖ out"}};
      line_plot("norm", n, &b.tokens, ImVec2(w, fs * 7), c.fonts, "residual norm per token");
      ImGui::SameLine();
      if (rms) {
        std::vector<Series> r = {{&b.stat.ln_rms, pal.warn, "rms = √mean(x²)"}};
        line_plot("ln", r, &b.tokens, ImVec2(w, fs * 7), c.fonts, "RMSNorm of the input: rms per token", true);
      } else {
        std::vector<Series> ln = {{&b.stat.ln_mean, pal.ok, "LN mean μ"}, {&b.stat.ln_var, pal.warn, "LN var σ²"}};
        line_plot("ln", ln, &b.tokens, ImVec2(w, fs * 7), c.fonts,
                  cfg.norm == NormPlacement::Pre ? "LN of the input" : "LN of x + sublayer", true);
      }
      if (rms && !b.stat.ln_rms.empty())
        ImGui::TextDisabled("mean rms over tokens %s: each token's row is divided by its rms, then scaled by g",
                            fmt_value(static_cast<float>(b.stat.mean_ln_rms()), 4).c_str());
      ImGui::PopID();
    }
    ImGui::EndChild();
  }

 private:
  std::vector<float> depth_in_, depth_out_;
  std::vector<std::string> labels_;
  int sel_ = 0;
};

}  // namespace

std::unique_ptr<Panel> make_residual_panel() { return std::make_unique<ResidualPanel>(); }

}  // namespace sf::gui
