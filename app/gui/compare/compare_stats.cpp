// compare_stats.cpp — what the compare view measures on its two runs (core/analysis/layer_stats.h,
// the same numbers `stepformer compare` prints): per layer, the residual-stream norm and the
// LayerNorm mean/variance (Xiong et al. 2020, §3) plotted for both runs, attention entropy per head
// as two layers × heads grids on one colour scale, and both runs' next-token distributions.
//
// [SECTION] next-token distributions
// [SECTION] per-layer statistics
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app.h"
#include "compare/panels.h"
#include "widgets.h"

namespace sf::gui {

namespace {

// The step whose next-token distribution a run shows: the current one once its Logits stage is
// reached, else the previous one (−1: none yet).
int shown_step(const Session& s) {
  const int t = s.current_step();
  if (t < 0) return -1;
  const StageKind k = s.current().kind;
  return (k == StageKind::Logits || k == StageKind::Choose) ? t : t - 1;
}

// "pre-LN · copy-pre" for a file, the run's own name when it already says its placement.
std::string legend_name(const std::string& placement, std::string name) {
  const std::string ext = ".safetensors";
  if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
    name.resize(name.size() - ext.size());
  if (name.find("pre-LN") != std::string::npos || name.find("post-LN") != std::string::npos) return name;
  return placement + " · " + name;
}

}  // namespace

// [SECTION] next-token distributions

void draw_compare_distributions(Ctx& c, const CompareSnap& s) {
  const Comparison& cmp = *s.cmp;
  const float fs = ImGui::GetFontSize();
  int steps[2];
  Mat held[2];
  const Mat* probs[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    steps[i] = shown_step(cmp.run(i));
    if (steps[i] >= 0 && steps[i] < static_cast<int>(cmp.run(i).steps().size())) {
      const auto& rec = cmp.run(i).steps()[static_cast<size_t>(steps[i])];
      if (rec->trace) {
        held[i] = probs_of(*rec->trace);
        probs[i] = &held[i];
      }
    }
  }
  heading(c.fonts, "Next-token distribution");
  ImGui::SameLine();
  if (!probs[0] && !probs[1]) {
    ImGui::TextDisabled("(after the first Logits stage)");
    return;
  }
  ImGui::TextDisabled("A at step %d, B at step %d", steps[0], steps[1]);
  // Union of both runs' 6 most likely tokens, by token text (the vocabularies may differ).
  struct Row {
    std::string tok;
    float p[2] = {0, 0};
  };
  std::vector<Row> rows;
  const auto find = [&](const std::string& t) -> Row& {
    for (Row& r : rows)
      if (r.tok == t) return r;
    rows.push_back({t});
    return rows.back();
  };
  for (int i = 0; i < 2; ++i) {
    if (!probs[i]) continue;
    const RowVec p = probs[i]->bottomRows(1);
    std::vector<int> idx(static_cast<size_t>(p.size()));
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<int>(k);
    std::partial_sort(idx.begin(), idx.begin() + std::min<size_t>(6, idx.size()), idx.end(),
                      [&](int x, int y) { return p(x) > p(y); });
    for (size_t k = 0; k < 6 && k < idx.size(); ++k) find(cmp.run(i).model().config.tgt_vocab.token(idx[k]));
  }
  for (Row& r : rows)
    for (int i = 0; i < 2; ++i) {
      if (!probs[i]) continue;
      const int id = cmp.run(i).model().config.tgt_vocab.id(r.tok);
      if (id >= 0 && id < probs[i]->cols()) r.p[i] = (*probs[i])(probs[i]->rows() - 1, id);
    }
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.p[0] + x.p[1] > y.p[0] + y.p[1]; });
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = fs * 5, bar_w = std::max(fs * 6, (ImGui::GetContentRegionAvail().x - label_w - fs * 8) * 0.5f);
  for (const Row& r : rows) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddText(c.fonts.mono, fs, p, palette().text, r.tok.c_str());
    for (int i = 0; i < 2; ++i) {
      const float x0 = p.x + label_w + i * (bar_w + fs * 4);
      const ImU32 col = placement_colour(cmp.run(i).model().config.norm == NormPlacement::Pre);
      dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + bar_w, p.y + fs - 1), IM_COL32(128, 128, 128, 30));
      dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + bar_w * r.p[i], p.y + fs - 1), col);
      char b[32];
      std::snprintf(b, sizeof b, "%s %.3f", i == 0 ? "A" : "B", r.p[i]);
      dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(x0 + bar_w + 4, p.y + 1), palette().text_dim, b);
    }
    ImGui::Dummy(ImVec2(label_w + 2 * bar_w + fs * 8, fs + 2));
  }
}

// [SECTION] per-layer statistics

void draw_compare_layer_stats(Ctx& c, const CompareSnap& s, const CompareSelection& sel, CompareStatsView& view) {
  const ModelStats& a = s.run[0].stats;
  const ModelStats& b = s.run[1].stats;
  const std::string na = std::string(to_string(s.cmp->run(0).model().config.norm)) + "-LN";
  const std::string nb = std::string(to_string(s.cmp->run(1).model().config.norm)) + "-LN";
  const float fs = ImGui::GetFontSize();
  heading(c.fonts, "Per layer, as of the current stage");
  help_marker(
      "Pre-LN (x = x + F(LN(x))) never normalises the residual stream itself: its norm grows layer by layer. "
      "Post-LN (x = LN(x + F(x))) renormalises after every block, so the stream leaves each layer with norm ≈ √d. "
      "The LayerNorm statistics are those of the norm's input: the stream itself for pre-LN, x + F(x) for post-LN.");
  const float avail_h = ImGui::GetContentRegionAvail().y;
  const float ph = std::max(fs * 9, (avail_h - fs * 14) / 3.0f);
  for (int k = 0; k < 3; ++k) {
    const LayerMeasure m = k == 0 ? LayerMeasure::ResidualNorm : k == 1 ? LayerMeasure::LnVar : LayerMeasure::LnMean;
    PlotData d = layer_plot(a, b, legend_name(na, s.run[0].name), legend_name(nb, s.run[1].name), m);
    for (int i = 0; i < 2; ++i)
      d.series[static_cast<size_t>(i)].colour =
          placement_colour(s.cmp->run(i).model().config.norm == NormPlacement::Pre,
                           i == 1 && s.cmp->run(0).model().config.norm == s.cmp->run(1).model().config.norm);
    if (m == LayerMeasure::ResidualNorm) d.log_y = false;
    static const char* ids[] = {"compare.resid", "compare.lnvar", "compare.lnmean"};
    plot_widget(ids[k], d, view.plots[k], ImVec2(-1, ph), c.fonts, c.app);
  }
  // Entropy per head: layers × heads for each run, one colour scale.
  heading(c.fonts, (std::string("Attention entropy per head (nats): ") + compare_kind_label(sel.kind)).c_str());
  const auto grid = [&](const ModelStats& st, std::vector<float>& out, std::vector<std::string>& rows, int heads) {
    out.clear();
    rows.clear();
    const bool enc = sel.kind == AttnKind::EncoderSelf;
    const Block blk = sel.kind == AttnKind::Cross ? Block::CrossAttention : Block::SelfAttention;
    for (const LayerStat& l : enc ? st.encoder : st.decoder) {
      const BlockStat* bs = l.find(blk);
      if (!bs || bs->entropy.empty()) continue;
      rows.push_back(std::string(enc ? "enc " : "dec ") + std::to_string(l.layer));
      for (int h = 0; h < heads; ++h)
        out.push_back(h < static_cast<int>(bs->entropy.size()) ? static_cast<float>(bs->entropy[static_cast<size_t>(h)])
                                                               : NAN);
    }
  };
  const int heads = std::min(s.cmp->run(0).model().config.n_heads, s.cmp->run(1).model().config.n_heads);
  grid(a, view.ent[0], view.ent_rows[0], heads);
  grid(b, view.ent[1], view.ent_rows[1], heads);
  float hi = 0.01f;
  for (auto& e : view.ent)
    for (float v : e)
      if (std::isfinite(v)) hi = std::max(hi, v);
  const float w = (ImGui::GetContentRegionAvail().x - fs) * 0.5f;
  for (int i = 0; i < 2; ++i) {
    if (i) ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::PushID(100 + i);
    placement_badge(s.cmp->run(i).model().config.norm);
    ImGui::SameLine();
    ImGui::TextUnformatted(i == 0 ? "A" : "B");
    const int R = static_cast<int>(view.ent_rows[i].size());
    if (R == 0) {
      ImGui::TextDisabled("no attention run yet");
    } else {
      view.ent_heat[i].update(view.ent[static_cast<size_t>(i)].data(), R, heads,
                              mix_key(s.generation, static_cast<uint64_t>(sel.kind) + 10), Colormap::Viridis, 0, hi);
      view.head_labels.clear();
      for (int h = 0; h < heads; ++h) view.head_labels.push_back("h" + std::to_string(h));
      HeatmapOpts o;
      o.row_labels = &view.ent_rows[i];
      o.col_labels = &view.head_labels;
      o.max_size = ImVec2(w, fs * 2.2f * static_cast<float>(R) + fs * 2);
      o.square = false;
      o.show_values = true;
      o.max_cell = 90;
      o.max_cell_h = fs * 2;
      o.fonts = &c.fonts;
      const HeatmapHit hit = heatmap_widget("ent", view.ent_heat[i], o);
      if (hit.hovered)
        ImGui::SetTooltip("%s head %d: %.4f nats", view.ent_rows[i][static_cast<size_t>(hit.row)].c_str(), hit.col,
                          view.ent_heat[i].at(hit.row, hit.col));
    }
    ImGui::PopID();
    ImGui::EndGroup();
  }
  ImGui::TextDisabled("0 = all weight on one key; ln(keys) = uniform. Scale 0 … %.2f.", hi);
}

}  // namespace sf::gui
