// output.cpp — "Output": the next-token distribution (top-k bars), decoding controls
// (strategy, temperature, top-k, top-p, beam width, seed), the chosen token, the sequence so far,
// and for beam search every beam with its score and the candidates it pruned. For an encoder-only
// model (BERT): the masked-LM head's top tokens at every [MASK] and at a chosen position.
//
// [SECTION] decoding controls
// [SECTION] distribution
// [SECTION] sequence and beams
// [SECTION] masked-token predictions (encoder-only)
#include <algorithm>
#include <cmath>

#include "actions.h"
#include "app.h"
#include "gfx/imgui_math.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class OutputPanel : public Panel {
 public:
  OutputPanel() : Panel({"Output", "output", ImVec4(0.0f, 0.55f, 0.24f, 0.45f), true}) {}

  void Draw(Ctx& c) override {
    if (!c.snap.model->config.has_decoder()) return draw_masked(c);
    draw_controls(c);
    ImGui::Separator();
    draw_distribution(c);
    ImGui::Separator();
    draw_sequence(c);
  }

 private:
  // [SECTION] decoding controls
  void draw_controls(Ctx& c) {
    const Session& se = *c.snap.session;
    if (c.snap.generation != seen_) {
      if (!editing_) edit_ = se.settings();
      seen_ = c.snap.generation;
    }
    const float fs = ImGui::GetFontSize();
    bool changed = false;
    const Strategy strategies[] = {Strategy::Greedy, Strategy::Sample, Strategy::Beam, Strategy::Forced};
    const char* names[] = {"greedy", "sample", "beam", "forced"};
    for (int i = 0; i < 4; ++i) {
      if (i) ImGui::SameLine();
      if (ImGui::RadioButton(names[i], edit_.strategy == strategies[i])) edit_.strategy = strategies[i], changed = true;
    }
    if (edit_.strategy == Strategy::Forced && se.input().tgt.ids.empty())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn),
                         "forced decoding needs a target (Model & input)");
    editing_ = false;
    const auto track = [&](bool edited) {
      editing_ |= ImGui::IsItemActive();
      changed |= ImGui::IsItemDeactivatedAfterEdit() || (edited && !ImGui::IsItemActive());
    };
    ImGui::PushItemWidth(fs * 9);
    if (edit_.strategy == Strategy::Sample) {
      track(ImGui::SliderFloat("temperature", &edit_.temperature, 0.05f, 3.0f, "%.2f", ImGuiSliderFlags_Logarithmic));
      track(ImGui::SliderInt("top-k (0 = all)", &edit_.top_k, 0, c.snap.model->config.tgt_vocab.size()));
      track(ImGui::SliderFloat("top-p", &edit_.top_p, 0.05f, 1.0f, "%.2f"));
      int seed = static_cast<int>(edit_.seed);
      track(ImGui::InputInt("seed", &seed));
      edit_.seed = static_cast<uint64_t>(std::max(0, seed));
    }
    if (edit_.strategy == Strategy::Beam)
      track(ImGui::SliderInt("beam width", &edit_.beam_width, 1,
                             std::min(kMaxBeamWidth, c.snap.model->config.tgt_vocab.size())));
    ImGui::PopItemWidth();
    if (changed) act::set_settings(c.worker, edit_);
  }

  // [SECTION] distribution
  void draw_distribution(Ctx& c) {
    const Snapshot& s = c.snap;
    const Session& se = *s.session;
    const Config& m = s.model->config;
    const Palette& pal = palette();
    const int step = se.current_step();
    // The distribution of the current step exists from its Logits stage on; before that, show
    // the previous step's.
    int shown = step;
    const bool reached =
        s.stage.side == Side::Decoder && (s.stage.kind == StageKind::Logits || s.stage.kind == StageKind::Choose);
    if (!reached) shown = step - 1;
    if (shown < 0 || shown >= static_cast<int>(se.steps().size())) {
      heading(c.fonts, "Next-token distribution");
      ImGui::TextDisabled("appears at the first decoder step's Logits stage");
      return;
    }
    const StepRecord& r = *se.steps()[static_cast<size_t>(shown)];
    const bool chosen_now = shown < step || s.stage.kind == StageKind::Choose;
    char title[96];
    std::snprintf(title, sizeof title, "Next token at step %d%s", shown, shown < step ? " (previous step)" : "");
    heading(c.fonts, title);

    const DecodeSettings& ds = se.settings();
    if (ds.strategy == Strategy::Sample && !r.sampling.rows.empty())
      sampling_rows(c, r.sampling, m.tgt_vocab, chosen_now ? r.chosen : -1, r.argmax);
    else
      prob_bars(c, r.top, m.tgt_vocab, chosen_now ? r.chosen : -1, r.argmax);
    if (chosen_now) {
      ImGui::Text("chosen:");
      ImGui::SameLine();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.accent), "'%s'",
                         display_token(m.tgt_vocab, r.chosen).c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("p = %.3f  (%s)", r.chosen_prob, to_string(ds.strategy));
      if (ds.strategy == Strategy::Sample && r.kept)
        ImGui::TextDisabled("kept from before the settings changed: not drawn again (p' = %.3f now)", r.sample.prob);
      else if (ds.strategy == Strategy::Sample)
        ImGui::TextDisabled("T = %.2f: kept %d tokens (mass %.3f), draw u = %.3f → p' = %.3f", ds.temperature,
                            r.sample.kept, r.sample.kept_mass, r.sample.u, r.sample.prob);
      if (r.finished)
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.ok), "decoding finished: %s", r.finish_reason.c_str());
    } else {
      ImGui::TextDisabled("the token is chosen at the next stage (Choose)");
    }
  }

  // Sampling: the likeliest tokens with the three probabilities core computed (sampling_table),
  // each in its own labelled column; the bar is p', what the draw used.
  static void sampling_rows(Ctx& c, const SamplingTable& t, const Vocab& voc, int chosen_id, int argmax_id) {
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    ImGui::TextWrapped(
        "p: the model's softmax (T = 1) · p_T = softmax(logits / %.2f) · p': p_T over the %d kept tokens "
        "(top-k, top-p), renormalised — what the draw uses and the stepper's p'",
        static_cast<double>(t.temperature), t.kept);
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg;
    if (!ImGui::BeginTable("sampling", 5, flags)) return;
    ImGui::TableSetupColumn("token");
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("p");
    ImGui::TableSetupColumn("p_T");
    ImGui::TableSetupColumn("p' ");
    ImGui::TableHeadersRow();
    const int n = std::min<int>(static_cast<int>(t.rows.size()), 9);
    for (int i = 0; i < n; ++i) {
      const SamplingRow& row = t.rows[static_cast<size_t>(i)];
      const bool chosen = row.id == chosen_id;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string tok = display_token(voc, row.id) + (row.id == argmax_id ? "  (argmax)" : "");
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(chosen     ? pal.accent
                                                        : row.kept ? pal.text
                                                                   : pal.text_dim),
                         "%s", tok.c_str());
      ImGui::TableNextColumn();
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float w = std::max(fs * 3, ImGui::GetContentRegionAvail().x), h = ImGui::GetTextLineHeight();
      ImDrawList* dl = ImGui::GetWindowDrawList();
      dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + w, p.y + h - 2), IM_COL32(128, 128, 128, 40));
      dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + w * row.p_kept, p.y + h - 2),
                        chosen ? pal.accent : pal.accent2);
      ImGui::Dummy(ImVec2(w, h));
      const auto number = [&](float v, bool dim) {
        ImGui::TableNextColumn();
        ImGui::PushFont(c.fonts.mono);
        if (dim)
          ImGui::TextDisabled("%.3f", static_cast<double>(v));
        else
          ImGui::Text("%.3f", static_cast<double>(v));
        ImGui::PopFont();
      };
      number(row.p, true);
      number(row.p_temp, true);
      number(row.p_kept, !row.kept);
    }
    ImGui::EndTable();
  }

  // Bars of the most likely tokens (at most 8): the chosen one (−1: none) highlighted, the argmax
  // marked.
  static void prob_bars(Ctx& c, const std::vector<Alternative>& top, const Vocab& voc, int chosen_id, int argmax_id) {
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    ImFont* mono = c.fonts.mono;
    float lw = fs * 3;
    for (auto& a : top) lw = std::max(lw, ImGui::CalcTextSize(display_token(voc, a.id).c_str()).x + fs * 0.5f);
    const float bar_max = std::max(fs * 4, ImGui::GetContentRegionAvail().x - lw - fs * 6.5f);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int n = std::min<int>(static_cast<int>(top.size()), 8);
    for (int i = 0; i < n; ++i) {
      const Alternative& a = top[static_cast<size_t>(i)];
      const bool chosen = a.id == chosen_id;
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      const std::string tok = display_token(voc, a.id);
      dl->AddText(ImVec2(p.x + lw - ImGui::CalcTextSize(tok.c_str()).x - fs * 0.4f, p.y),
                  chosen ? pal.accent : pal.text, tok.c_str());
      const float x0 = p.x + lw;
      dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + bar_max, p.y + h - 2), IM_COL32(128, 128, 128, 40));
      dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + bar_max * a.prob, p.y + h - 2),
                        chosen ? pal.accent : pal.accent2);
      char val[32];
      std::snprintf(val, sizeof val, "%.3f", a.prob);
      dl->AddText(mono, mono->FontSize, ImVec2(x0 + bar_max + fs * 0.4f, p.y), pal.text, val);
      if (a.id == argmax_id)
        dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(x0 + bar_max + fs * 3.6f, p.y + 2), pal.text_dim,
                    "argmax");
      ImGui::Dummy(ImVec2(lw + bar_max + fs * 6, h));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("p('%s') = softmax(logits)[%d] = %.5f\nlog p = %.4f", tok.c_str(), a.id, a.prob, a.log_prob);
    }
  }

  // [SECTION] sequence and beams
  void draw_sequence(Ctx& c) {
    const Snapshot& s = c.snap;
    const Session& se = *s.session;
    const Config& m = s.model->config;
    heading(c.fonts, "Sequence so far");
    const std::vector<int> out = se.tokens();
    if (out.empty()) ImGui::TextDisabled("(nothing decoded yet)");
    for (size_t i = 0; i < out.size(); ++i)
      token_chip(c.fonts, display_token(m.tgt_vocab, out[i]), out[i],
                 out[i] == m.tgt_vocab.eos() ? ChipKind::Special : ChipKind::Chosen, i + 1 == out.size());
    ImGui::NewLine();
    if (!out.empty()) {
      ImGui::PushFont(c.fonts.mono);
      ImGui::TextWrapped("“%s”", se.text().c_str());
      ImGui::PopFont();
    }
    const auto rec = se.current_record();
    if (se.settings().strategy != Strategy::Beam || !rec || rec->beams.empty()) return;
    ImGui::Spacing();
    heading(c.fonts, "Beams (sum of log-probabilities)");
    if (ImGui::BeginTable("beams", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("#");
      ImGui::TableSetupColumn("tokens");
      ImGui::TableSetupColumn("score");
      ImGui::TableHeadersRow();
      for (size_t b = 0; b < rec->beams.size(); ++b) {
        const Beam& beam = rec->beams[b];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%zu", b);
        ImGui::TableNextColumn();
        std::string t;
        for (int id : beam.tokens) t += display_token(m.tgt_vocab, id) + " ";
        if (beam.finished) t += " ✓";
        if (b == 0)
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().accent), "%s", t.c_str());
        else
          ImGui::TextUnformatted(t.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.3f", beam.score);
      }
      ImGui::EndTable();
    }
    if (!rec->candidates.empty() &&
        ImGui::TreeNode("candidates", "candidates at this step (%zu)", rec->candidates.size())) {
      for (const BeamCandidate& k : rec->candidates)
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(k.kept ? palette().ok : palette().text_dim),
                           "beam %d + '%s' → %.3f %s", k.parent, display_token(m.tgt_vocab, k.token).c_str(), k.score,
                           k.kept ? "kept" : "pruned");
      ImGui::TreePop();
    }
  }

  // [SECTION] masked-token predictions (encoder-only)
  void draw_masked(Ctx& c) {
    const Snapshot& s = c.snap;
    const Session& se = *s.session;
    const Config& m = s.model->config;
    const Vocab& voc = m.src_vocab;
    heading(c.fonts, "Masked-token predictions (MLM head)");
    if (!m.mlm_head) {
      ImGui::TextWrapped(
          "This encoder-only model has no masked-LM head: its output is one contextual vector per "
          "token (%d × %d), shown in the Residual panel; there is nothing to predict.",
          static_cast<int>(se.input().src_ids.size()), m.d_model);
      return;
    }
    const int last = se.stage_count() - 1;
    if (s.cursor < last) {
      ImGui::TextWrapped(
          "The predictions appear at the last stage (%d, the masked-LM head); the cursor is on stage %d. "
          "Press End to go there.",
          last, s.cursor);
      return;
    }
    // The positions: every [MASK], and one chosen by clicking an input token.
    const std::vector<int>& ids = se.input().src_ids;
    ImGui::TextDisabled("click a token to see the prediction at its position:");
    for (int i = 0; i < static_cast<int>(ids.size()); ++i) {
      ImGui::PushID(i);
      const bool on = i == selected_;
      if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(palette().accent2));
      if (ImGui::SmallButton(display_token(voc, ids[static_cast<size_t>(i)]).c_str())) selected_ = on ? -1 : i;
      if (on) ImGui::PopStyleColor();
      ImGui::PopID();
      if (i + 1 < static_cast<int>(ids.size())) ImGui::SameLine();
    }
    if (selected_ >= static_cast<int>(ids.size())) selected_ = -1;
    std::vector<MaskedPrediction> shown = s.masked;
    if (selected_ >= 0 && (selected_ != picked_at_ || picked_gen_ != s.generation)) {
      const auto one = se.masked_predictions(10, selected_);
      picked_.clear();
      for (const MaskedPrediction& p : one)
        if (p.position == selected_) picked_.push_back(p);
      picked_at_ = selected_;
      picked_gen_ = s.generation;
    }
    if (selected_ >= 0)
      for (const MaskedPrediction& p : picked_)
        if (!p.masked) shown.push_back(p);
    std::sort(shown.begin(), shown.end(),
              [](const MaskedPrediction& a, const MaskedPrediction& b) { return a.position < b.position; });
    if (shown.empty()) {
      ImGui::TextWrapped(
          "No %s in the input. Write %s where a word should be predicted (e.g. \"the cat %s on the "
          "mat\"), or click a token above.",
          display_token(voc, mask_token(voc)).c_str(), display_token(voc, mask_token(voc)).c_str(),
          display_token(voc, mask_token(voc)).c_str());
      return;
    }
    for (const MaskedPrediction& p : shown) {
      ImGui::Spacing();
      ImGui::Text("position %d: %s%s", p.position, display_token(voc, p.input_id).c_str(),
                  p.masked ? "" : "  (not masked: what the model reads there)");
      prob_bars(c, p.top, voc, -1, p.top.empty() ? -1 : p.top[0].id);
    }
    ImGui::Spacing();
    ImGui::TextDisabled("p = softmax(LN(act(H W_tᵀ + b_t)) Eᵀ + b) of that row; all positions are predicted at once");
  }

  int selected_ = -1;   // the clicked position (−1: masks only)
  int picked_at_ = -1;  // the position picked_ was computed for
  uint64_t picked_gen_ = 0;
  std::vector<MaskedPrediction> picked_;  // its prediction (cached: a sort over the vocabulary)
  DecodeSettings edit_;
  bool editing_ = false;
  uint64_t seen_ = 0;
};

}  // namespace

std::unique_ptr<Panel> make_output_panel() { return std::make_unique<OutputPanel>(); }

}  // namespace sf::gui
