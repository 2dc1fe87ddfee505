// gradnorms_panel.cpp — "Gradient norms at initialisation": Xiong et al. (2020), Fig. 3. For a
// freshly initialised pre-LN and post-LN encoder-decoder of a chosen depth, the gradient norm of
// each layer's feed-forward W² and the residual-stream norm leaving each layer, averaged over
// seeds — computed by the same function as `stepformer gradnorms` (core/train/gradnorms.h), on a
// background task.
#include <algorithm>
#include <cstdio>
#include <string>

#include "app.h"
#include "compare/panels.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class GradNormsPanel : public HubPanel {
 public:
  explicit GradNormsPanel(std::shared_ptr<PrePostHub> hub)
      : HubPanel("Gradient norms at initialisation", "gradnorms", std::move(hub)) {}

  void draw_view(Ctx& c) override {
    if (!hub_->gn_result && !hub_->gn_running()) hub_->start_gradnorms();  // the paper's setting on first view
    GradNormOptions& o = hub_->gn_opt;
    const float fs = ImGui::GetFontSize();
    heading(c.fonts, "Pre-LN vs post-LN at initialisation (Xiong et al. 2020, Fig. 3)");
    ImGui::TextWrapped(
        "A freshly initialised encoder-decoder, one batch of the task, the gradient of the loss. Post-LN: the "
        "gradient of the last layers is large and does not shrink with depth — a large learning rate at the start "
        "blows it up, hence the warm-up. Pre-LN: the gradient shrinks like 1/√L toward the output while the "
        "residual stream grows, so it trains without warm-up.");
    ImGui::PushItemWidth(fs * 8);
    ImGui::SliderInt("layers L (encoder and decoder each)", &o.layers, 1, 12);
    ImGui::SameLine();
    ImGui::SliderInt("seeds", &o.seeds, 1, 20);
    ImGui::SameLine();
    static const int dims[] = {16, 32, 64, 128};
    if (ImGui::BeginCombo("d_model", std::to_string(o.d_model).c_str())) {
      for (int d : dims)
        if (ImGui::Selectable(std::to_string(d).c_str(), d == o.d_model)) o.d_model = d, o.d_ff = 4 * d;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SliderInt("batch", &o.batch, 1, 64);
    ImGui::PopItemWidth();
    ImGui::SameLine();
    ImGui::BeginDisabled(hub_->gn_running());
    if (ImGui::Button("Compute")) hub_->start_gradnorms();
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (hub_->gn_running())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn), "computing…");
    else if (hub_->gn_result)
      ImGui::TextDisabled("%.1f s", hub_->gn_seconds);
    const auto r = hub_->gn_result;
    if (!r) return;
    const GradNormOptions& g = r->options;
    char shown[512];
    std::snprintf(
        shown, sizeof shown,
        "shown: %d + %d layers, d_model %d, %d heads, d_ff %d, task %s, batch %d, %d seeds · the same numbers: "
        "stepformer gradnorms --layers %d --norm pre|post --seeds %d --d-model %d --heads %d --d-ff %d --batch %d",
        g.layers, g.layers, g.d_model, g.n_heads, g.d_ff, g.task.c_str(), g.batch, g.seeds, g.layers, g.seeds,
        g.d_model, g.n_heads, g.d_ff, g.batch);
    const float W = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
    const float H = std::max(fs * 16, ImGui::GetContentRegionAvail().y - fs * 12);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    plot_widget("gradnorms.grad", gradnorm_plot(*r), views_[0], ImVec2(W * 0.5f - gap, H), c.fonts, c.app);
    heat_rect = ImVec4(at.x, at.y, at.x + W * 0.5f - gap, at.y + H);  // the layout JSON (GUI tests)
    ImGui::SameLine();
    plot_widget("gradnorms.stream", stream_norm_plot(*r), views_[1], ImVec2(W * 0.5f, H), c.fonts, c.app);
    // What is shown, wrapped between words at the window's width, then the numbers as the command
    // prints them.
    ImGui::PushStyleColor(ImGuiCol_Text, palette().text_dim);
    note_item("shown " + text_wrapped_words(shown));
    ImGui::PopStyleColor();
    if (ImGui::BeginTable("numbers", 9,
                          ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchSame | ImGuiTableFlags_ScrollY)) {
      for (const char* h : {"layer", "pre enc |∇W²|", "pre dec |∇W²|", "post enc |∇W²|", "post dec |∇W²|",
                            "pre enc |x|", "pre dec |x|", "post enc |x|", "post dec |x|"})
        ImGui::TableSetupColumn(h);
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableHeadersRow();
      for (size_t l = 0; l < r->pre.encoder_ffn.size(); ++l) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%zu", l);
        for (double v :
             {r->pre.encoder_ffn[l], r->pre.decoder_ffn[l], r->post.encoder_ffn[l], r->post.decoder_ffn[l]}) {
          ImGui::TableNextColumn();
          ImGui::Text("%.5f", v);
        }
        for (double v : {r->pre.encoder_stream[l], r->pre.decoder_stream[l], r->post.encoder_stream[l],
                         r->post.decoder_stream[l]}) {
          ImGui::TableNextColumn();
          ImGui::Text("%.3f", v);
        }
      }
      ImGui::EndTable();
    }
  }

 private:
  PlotView views_[2];
};

}  // namespace

std::unique_ptr<Panel> make_gradnorms_panel(std::shared_ptr<PrePostHub> hub) {
  return std::make_unique<GradNormsPanel>(std::move(hub));
}

}  // namespace sf::gui
