// training_panel.cpp — "Train pre-LN vs post-LN": trains a pre-LN and a post-LN model of the same
// configuration on a task, on the TrainJob's thread (core/train/train_job.h), with progress bars,
// pause/resume/cancel, and live plots: the loss curves overlaid, the learning-rate schedule, the
// gradient norm, held-out exact match, and the gradient norm of every layer over time (a layer ×
// step heatmap per run). Earlier runs stay on the plots (dashed when they had no warm-up), so
// "with and without warm-up" is two clicks. Shipped models' recorded metrics plot without training.
// Runs that recorded head scores (every run does, at its probe steps) also show each head's
// induction score over the steps next to the loss: on the induction task the loss's plateau ends
// when the induction heads form (Olsson et al. 2022).
//
// [SECTION] controls
// [SECTION] progress, save, open in compare
// [SECTION] plots
#include <algorithm>
#include <cmath>
#include <functional>

#include "app.h"
#include "compare/panels.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class TrainingPanel : public HubPanel {
 public:
  explicit TrainingPanel(std::shared_ptr<PrePostHub> hub)
      : HubPanel("Train pre-LN vs post-LN", "training", std::move(hub)) {}

  void draw_view(Ctx& c) override {
    if (ImGui::BeginTable("train", 2, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV)) {
      const float fs = ImGui::GetFontSize();
      ImGui::TableSetupColumn("controls", ImGuiTableColumnFlags_WidthFixed, fs * 23);
      ImGui::TableSetupColumn("plots", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::BeginChild("controls");
      draw_controls(c);
      draw_progress(c);
      ImGui::EndChild();
      ImGui::TableSetColumnIndex(1);
      ImGui::BeginChild("plots");
      draw_plots(c);
      ImGui::EndChild();
      ImGui::EndTable();
    }
  }

 private:
  // [SECTION] controls
  void draw_controls(Ctx& c) {
    PairOptions& o = hub_->train_opt;
    const float fs = ImGui::GetFontSize();
    const Palette& pal = palette();
    heading(c.fonts, "Train a pre-LN and a post-LN model");
    ImGui::TextWrapped("Same configuration, seed and batches; only the LayerNorm placement differs.");
    ImGui::PushItemWidth(fs * 11);
    if (ImGui::BeginCombo("task", o.task.c_str())) {
      for (const std::string& t : task_names())
        if (ImGui::Selectable(t.c_str(), t == o.task)) o.task = t;
      ImGui::EndCombo();
    }
    ImGui::SliderInt("layers", &o.depth, 1, 8);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("encoder layers and decoder layers (each)");
    if (arch_task_ != o.task) {  // (a task is built once per choice, not per frame)
      auto task = make_task(o.task);
      decoder_only_ = task && task->arch == Arch::DecoderOnly;
      arch_task_ = o.task;
    }
    const bool decoder_only = decoder_only_;
    if (!decoder_only) o.attention_only = false;
    ImGui::BeginDisabled(!decoder_only);
    ImGui::Checkbox("attention-only (no MLP)", &o.attention_only);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(decoder_only ? "layers of self-attention alone: no feed-forward sublayer (d_ff 0)"
                                     : "for decoder-only tasks (copy-lm, en-lm, induction)");
    static const int dims[] = {16, 32, 64, 128};
    if (ImGui::BeginCombo("d_model", std::to_string(o.d_model).c_str())) {
      for (int d : dims)
        if (ImGui::Selectable(std::to_string(d).c_str(), d == o.d_model)) o.d_model = d;
      ImGui::EndCombo();
    }
    if (o.d_model % o.n_heads != 0) o.n_heads = 2;
    static const int head_counts[] = {1, 2, 4, 8};
    if (ImGui::BeginCombo("heads", std::to_string(o.n_heads).c_str())) {
      for (int h : head_counts)
        if (o.d_model % h == 0 && ImGui::Selectable(std::to_string(h).c_str(), h == o.n_heads)) o.n_heads = h;
      ImGui::EndCombo();
    }
    float lr = static_cast<float>(o.lr);
    if (ImGui::SliderFloat("learning rate", &lr, 1e-4f, 1e-2f, "%.1e", ImGuiSliderFlags_Logarithmic)) o.lr = lr;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Adam's rate: the peak of the warm-up schedule, or the constant rate without warm-up");
    ImGui::Checkbox("warm-up", &o.warmup);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "on: linear rise to the learning rate over the warm-up steps, then 1/√step decay (Vaswani §5.3)\n"
          "off: the learning rate from the first step");
    if (o.warmup) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(fs * 6);
      ImGui::SliderInt("steps##w", &o.warmup_steps, 5, 2000, "%d", ImGuiSliderFlags_Logarithmic);
    }
    int steps = static_cast<int>(o.steps);
    if (ImGui::SliderInt("steps", &steps, 10, 5000, "%d", ImGuiSliderFlags_Logarithmic)) o.steps = steps;
    ImGui::SliderInt("batch", &o.batch, 4, 128, "%d", ImGuiSliderFlags_Logarithmic);
    int seed = static_cast<int>(o.seed);
    if (ImGui::InputInt("seed", &seed)) o.seed = static_cast<uint64_t>(std::max(0, seed));
    ImGui::PopItemWidth();
    if (ImGui::SmallButton("preset: 6 layers, lr 3e-3, no warm-up")) {
      o.task = "copy", o.depth = 6, o.d_model = 64, o.n_heads = 4, o.lr = 3e-3, o.warmup = false, o.warmup_steps = 100;
      o.steps = 300, o.batch = 32;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Xiong et al. 2020: at this rate post-LN without warm-up stalls (measured: loss 2.2, 0%% exact\n"
          "match after 300 steps) while pre-LN trains (0.72, 76%%). Run it, then switch warm-up on and\n"
          "run again: both runs stay on the plots. About 1–2 minutes per pair.");
    if (ImGui::SmallButton("preset: induction heads (2 attention-only layers)")) {
      o.task = "induction", o.depth = 2, o.d_model = 64, o.n_heads = 4, o.attention_only = true, o.lr = 6e-3;
      o.warmup = true, o.warmup_steps = 400, o.steps = 600, o.batch = 64;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Olsson et al. 2022: random letters, then the same letters again. The loss sits on a plateau,\n"
          "then drops within about 150 steps, as layer-1 heads' induction scores jump (next to the loss;\n"
          "measured: from 0.06 at step 200 to 0.47 at 350). The shipped induction-preln / -postln curves:\n"
          "\"Recorded metrics\" below.");

    const TrainJob* job = hub_->job.get();
    const auto prog = job ? job->progress() : nullptr;
    const bool active = prog && prog->active();
    ImGui::Spacing();
    if (ImGui::Button(active ? "Restart both" : "Train both", ImVec2(fs * 8, 0))) hub_->start_training();
    if (active) {
      ImGui::SameLine();
      if (job->paused() ? ImGui::Button("Resume") : ImGui::Button("Pause"))
        job->paused() ? hub_->job->resume() : hub_->job->pause();
      ImGui::SameLine();
      if (ImGui::Button("Cancel")) hub_->job->cancel();
    }
    if (!hub_->job_error.empty()) text_coloured_wrapped(pal.error, hub_->job_error.c_str());
    ImGui::Checkbox("keep earlier runs on the plots", &hub_->keep_history);
    if (!hub_->history.empty()) {
      ImGui::SameLine();
      if (ImGui::SmallButton("clear")) hub_->history.clear();
    }
  }

  // [SECTION] progress, save, open in compare
  void draw_progress(Ctx& c) {
    const float fs = ImGui::GetFontSize();
    const Palette& pal = palette();
    ImGui::Separator();
    TrainJob* job = hub_->job.get();
    if (job) {
      const auto p = job->progress();
      ImGui::Text("%s", to_string(p->state));
      ImGui::SameLine();
      ImGui::TextDisabled("%.1f s, %.1f steps/s", p->seconds,
                          p->seconds > 0 ? static_cast<double>(p->steps_done) / p->seconds : 0.0);
      for (const RunCurves& r : p->runs) {
        const double done = r.step.empty() ? 0 : r.step.back();
        const float frac = r.steps_planned ? static_cast<float>(done / static_cast<double>(r.steps_planned)) : 0.0f;
        char overlay[160];
        std::snprintf(overlay, sizeof overlay, "%s  %.0f/%lld  loss %.3f%s",
                      r.norm == NormPlacement::Pre ? "pre" : "post", done, static_cast<long long>(r.steps_planned),
                      r.loss.empty() ? 0.0 : r.loss.back(), r.diverged() ? "  DIVERGED" : "");
        ImGui::PushStyleColor(ImGuiCol_PlotHistogram, placement_colour(r.norm == NormPlacement::Pre));
        ImGui::ProgressBar(frac, ImVec2(-1, 0), overlay);
        ImGui::PopStyleColor();
        if (!r.exact_match.empty() || r.final_exact_match >= 0)
          ImGui::TextDisabled("  exact match %.0f%% at step %.0f",
                              100 * (r.final_exact_match >= 0 ? r.final_exact_match : r.exact_match.back()),
                              r.final_exact_match >= 0 ? done : r.eval_step.back());
      }
      // Save and open.
      if (!p->models.empty()) {
        ImGui::Spacing();
        ImGui::SetNextItemWidth(-fs * 6);
        ImGui::InputText("##stem", hub_->save_stem, sizeof hub_->save_stem);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("file stem: writes <stem>-preln.safetensors, <stem>-postln… and .metrics.json");
        ImGui::SameLine();
        if (ImGui::Button("Save both")) job->save(hub_->save_stem);
        if (ImGui::Button("Open both in Compare", ImVec2(-1, 0))) open_in_compare(c, *p);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("the trained models as they are now, side by side in the compare view");
      } else if (p->active()) {
        ImGui::TextDisabled("pause, cancel or let it finish to save or compare the models");
      }
      for (auto it = p->messages.rbegin(); it != p->messages.rend() && it - p->messages.rbegin() < 2; ++it)
        text_coloured_wrapped(it->rfind("saved", 0) == 0 ? pal.ok : pal.error, it->c_str());
    } else {
      ImGui::TextDisabled("no training yet");
    }
    // Recorded metrics of the shipped models.
    ImGui::Separator();
    heading(c.fonts, "Recorded metrics");
    bool any = false;
    for (const ShippedPair& sp : hub_->pairs) {
      if (sp.pre_metrics.empty() || sp.post_metrics.empty()) continue;
      any = true;
      ImGui::PushID(sp.task.c_str());
      if (ImGui::SmallButton(sp.task.c_str())) {
        std::string e;
        if (!hub_->load_recorded(sp, e)) c.app.notify(Message::Error, e);
      }
      ImGui::PopID();
      ImGui::SameLine();
    }
    if (!any)
      ImGui::TextDisabled("no shipped pair with .metrics.json yet");
    else
      ImGui::NewLine();
    if (!hub_->recorded.empty()) {
      ImGui::Checkbox(("show recorded " + hub_->recorded_name).c_str(), &hub_->show_recorded);
      ImGui::SameLine();
      if (ImGui::SmallButton("remove")) hub_->recorded.clear();
    }
    ImGui::Separator();
    ImGui::TextWrapped(
        "What to look for (Xiong et al. 2020): at initialisation post-LN's gradient norm grows toward the output "
        "layers (the heatmaps' first columns, and the per-layer plot); at a high learning rate without warm-up "
        "post-LN's loss stalls or diverges while pre-LN trains; with warm-up both train.");
  }

  void open_in_compare(Ctx& c, const TrainProgress& p) {
    if (p.models.size() < 2) return;
    hub_->open_models(p.models[0], p.runs[0].label + " (trained)", p.models[1], p.runs[1].label + " (trained)");
    if (Panel* cp = c.app.find_panel("compare")) c.app.show_panel(cp);
  }

  // [SECTION] plots
  void draw_plots(Ctx& c) {
    const float fs = ImGui::GetFontSize();
    const std::vector<RunCurves> runs = hub_->plotted_runs();
    if (runs.empty()) {
      ImGui::Dummy(ImVec2(0, fs * 2));
      ImGui::PushFont(c.fonts.big);
      ImGui::TextUnformatted("Press \"Train both\" to start, or plot a shipped pair's recorded metrics.");
      ImGui::PopFont();
      ImGui::TextWrapped("Both models train on a worker thread; the plots fill in live.");
      return;
    }
    const float W = ImGui::GetContentRegionAvail().x;
    const float H = std::max(fs * 40, ImGui::GetContentRegionAvail().y);
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    const float row_h = H * 0.29f;
    std::vector<size_t> scored;  // the runs of the induction task (they recorded head scores)
    for (size_t i = 0; i < runs.size(); ++i)
      if (has_head_scores(runs[i]) && runs[i].task == "induction") scored.push_back(i);
    PlotData loss = curve_plot(runs, Curve::Loss);
    if (!scored.empty()) loss.log_y = false;  // the plateau and the drop read best on a linear scale
    plot_widget("training.loss", loss, views_[0], ImVec2(W * 0.5f - gap, row_h), c.fonts, c.app);
    ImGui::SameLine();
    // On the induction task: every head's induction score next to the loss, for one run (a choice
    // above the plot).
    if (!scored.empty()) {
      ImGui::BeginGroup();
      head_run_ = std::min(head_run_, scored.size() - 1);
      for (size_t k = 0; k < scored.size(); ++k) {
        if (k) ImGui::SameLine();
        const RunCurves& r = runs[scored[k]];
        const std::string name =
            (r.norm == NormPlacement::Pre ? "pre-LN" : "post-LN") + std::string("##hr") + std::to_string(k);
        if (ImGui::RadioButton(name.c_str(), head_run_ == k)) head_run_ = k;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.label.c_str());
      }
      ImGui::SameLine();
      ImGui::RadioButton("induction", &head_curve_, 0);
      ImGui::SameLine();
      ImGui::RadioButton("previous token", &head_curve_, 1);
      const float bar = ImGui::GetFrameHeightWithSpacing();
      plot_widget(
          "training.heads",
          head_score_plot(runs[scored[head_run_]], head_curve_ ? HeadCurve::PreviousToken : HeadCurve::Induction),
          views_[5], ImVec2(W * 0.5f, row_h - bar), c.fonts, c.app);
      ImGui::EndGroup();
      const float w4 = W * 0.25f - gap;
      plot_widget("training.lr", curve_plot(runs, Curve::LearningRate), views_[1], ImVec2(w4, row_h), c.fonts, c.app);
      ImGui::SameLine();
      plot_widget("training.exact", curve_plot(runs, Curve::ExactMatch), views_[2], ImVec2(w4, row_h), c.fonts, c.app);
      ImGui::SameLine();
      plot_widget("training.gradnorm", curve_plot(runs, Curve::GradNorm), views_[3], ImVec2(W * 0.5f, row_h), c.fonts,
                  c.app);
      draw_grids(c, runs, W, H, row_h, gap);
      return;
    }
    plot_widget("training.lr", curve_plot(runs, Curve::LearningRate), views_[1], ImVec2(W * 0.25f - gap, row_h),
                c.fonts, c.app);
    ImGui::SameLine();
    plot_widget("training.exact", curve_plot(runs, Curve::ExactMatch), views_[2], ImVec2(W * 0.25f, row_h), c.fonts,
                c.app);
    plot_widget("training.gradnorm", curve_plot(runs, Curve::GradNorm), views_[3], ImVec2(W * 0.5f - gap, row_h),
                c.fonts, c.app);
    ImGui::SameLine();
    plot_widget("training.layers-at-init", layer_grad_profile(runs, 1), views_[4], ImVec2(W * 0.5f, row_h), c.fonts,
                c.app);
    draw_grids(c, runs, W, H, row_h, gap);
  }

  void draw_grids(Ctx& c, const std::vector<RunCurves>& runs, float W, float H, float row_h, float gap) {
    const float fs = ImGui::GetFontSize();
    // Layer × step heatmaps of the current job's runs (else the recorded ones), one colour scale.
    std::vector<const RunCurves*> grids;
    const size_t first = runs.size() >= 2 ? runs.size() - 2 : 0;
    for (size_t i = first; i < runs.size(); ++i) grids.push_back(&runs[i]);
    std::vector<GridData> g;
    float lo = INFINITY, hi = -INFINITY;
    for (const RunCurves* r : grids) {
      g.push_back(layer_grad_grid(*r, 160));
      float a, b;
      grid_range(g.back(), true, a, b);
      lo = std::min(lo, a), hi = std::max(hi, b);
    }
    const uint64_t gen = hub_->job ? hub_->job->progress()->generation : 0;
    for (size_t i = 0; i < g.size() && i < 2; ++i) {
      if (i) ImGui::SameLine();
      ImGui::BeginGroup();
      const char* id = i == 0 ? "training.grid-a" : "training.grid-b";
      const ImVec2 at = ImGui::GetCursorScreenPos();
      grid_widget(id, g[i], heat_[i],
                  mix_key(mix_key(mix_key(gen, i), g[i].cols.size() + 1000 * runs.size()),
                          std::hash<std::string>{}(g[i].title)),
                  true, ImVec2(W * 0.5f - gap, H - 2 * row_h - fs * 2), c.fonts, c.app, lo, hi);
      if (i == 0) heat_rect = ImVec4(at.x, at.y, at.x + W * 0.5f - gap, ImGui::GetItemRectMax().y);  // GUI tests
      ImGui::EndGroup();
    }
  }

  PlotView views_[6];
  Heatmap heat_[2];
  size_t head_run_ = 0;  // which scored run the head-score plot shows
  int head_curve_ = 0;   // 0 induction, 1 previous token
  std::string arch_task_;
  bool decoder_only_ = false;
};

}  // namespace

std::unique_ptr<Panel> make_training_panel(std::shared_ptr<PrePostHub> hub) {
  return std::make_unique<TrainingPanel>(std::move(hub));
}

}  // namespace sf::gui
