// masks.cpp — "Masks": the padding, causal and combined masks as the exact additive matrices
// (0 or −∞), next to the scaled scores, the masked scores and the softmax, as in the
// "Transformer Architecture" lecture's attention mask tables; a sliding-window decoder's banded
// causal mask (Mistral) with the keys that fell out of the window marked; a padded batch of the model's
// examples with each sequence's masks; and a switch that removes the causal mask from a
// teacher-forced run to show the leak (future tokens receiving weight).
//
// [SECTION] the three masks
// [SECTION] scores → masked → softmax
// [SECTION] a padded batch
// [SECTION] the leak
#include <algorithm>
#include <cmath>

#include <memory>

#include "actions.h"
#include "analysis/mask_tables.h"
#include "app.h"
#include "model/mask.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

// Keys that fell out of a sliding window: violet, apart from the highlight (amber) and the
// diverging map's blue and red, on the dark and the light theme alike.
constexpr ImU32 kOutOfWindow = IM_COL32(170, 80, 230, 255);
constexpr ImU32 kOutOfWindowFill = IM_COL32(170, 80, 230, 120);

class MasksPanel : public Panel {
 public:
  MasksPanel() : Panel({"Masks", "masks", ImVec4(0.24f, 0.40f, 0.76f, 0.60f)}) {}

  const Heatmap* main_heatmap() const override { return &maps_[2]; }

  void Draw(Ctx& c) override {
    // Two views: the current input's masks for the chosen sublayer, and a batch of examples.
    const char* views[] = {"This input", "A padded batch"};
    for (int i = 0; i < 2; ++i) {
      if (i) ImGui::SameLine();
      const bool on = c.ui.masks_batch == (i == 1);
      if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
      if (ImGui::Button(views[i])) c.ui.masks_batch = i == 1;
      if (on) ImGui::PopStyleColor();
    }
    if (c.ui.masks_batch) {
      draw_batch(c);
      return;
    }
    const AttnView* v = selected_attention(c);
    const bool decoder = c.snap.model->config.has_decoder();  // encoder-only: no causal mask to remove
    if (decoder) {
      ImGui::Checkbox("remove the causal mask (leak demo)", &c.ui.leak_demo);
    }
    if (c.ui.leak_demo && decoder) {
      draw_leak(c);
      return;
    }
    if (!v) {
      ImGui::TextDisabled("not computed yet at this stage");
      return;
    }
    draw_tables(c, *v);
  }

 private:
  // One small table: a heatmap with its values written in, and a caption; `out`: cells to mark as
  // fallen out of the sliding window (−∞ in it), or null.
  void table(Ctx& c, int slot, const char* caption, const Mat& m, Colormap map, float lo, float hi, const AttnView& v,
             uint64_t key, float w, float h, int decimals = 2, const Mat* out = nullptr) {
    maps_[slot].update(m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()),
                       mix_key(key, static_cast<uint64_t>(slot)), map, lo, hi);
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.bold);
    ImGui::TextUnformatted(caption);
    ImGui::PopFont();
    HeatmapOpts o;
    o.row_labels = &v.q_labels();
    o.col_labels = &v.k_labels();
    o.show_values = true;
    o.decimals = decimals;
    o.fonts = &c.fonts;
    o.max_size = ImVec2(w, h);
    o.max_cell = 44;
    if (c.ui.cell_pinned) o.sel_row = c.ui.cell_row, o.sel_col = c.ui.cell_col;
    const HeatmapHit hit = heatmap_widget(caption, maps_[slot], o);
    if (out) mark_outside_window(*out, hit);
    if (out && slot == 1) mark_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);  // the band
    if (slot == 5) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    if (hit.hovered)
      ImGui::SetTooltip("%s\nquery %d '%s', key %d '%s': %s", caption, hit.row,
                        v.q_labels()[static_cast<size_t>(hit.row)].c_str(), hit.col,
                        v.k_labels()[static_cast<size_t>(hit.col)].c_str(), fmt_value(m(hit.row, hit.col), 4).c_str());
    ImGui::EndGroup();
  }

  // The cells a sliding window drops, tinted and outlined over the heatmap's hatching, so the band
  // reads apart from the causal mask's future (hatched only).
  static void mark_outside_window(const Mat& out, const HeatmapHit& hit) {
    if (out.size() == 0) return;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float cw = (hit.max.x - hit.min.x) / static_cast<float>(out.cols());
    const float ch = (hit.max.y - hit.min.y) / static_cast<float>(out.rows());
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j) {
        if (!std::isinf(out(i, j))) continue;
        const ImVec2 a(hit.min.x + static_cast<float>(j) * cw + 1, hit.min.y + static_cast<float>(i) * ch + 1);
        const ImVec2 b(a.x + cw - 2, a.y + ch - 2);
        dl->AddRectFilled(a, b, kOutOfWindowFill);
        dl->AddRect(a, b, kOutOfWindow, 0, 0, 1.5f);
      }
  }

  // [SECTION] the three masks, [SECTION] scores → masked → softmax
  void draw_tables(Ctx& c, const AttnView& v) {
    const Config& cfg = c.snap.model->config;
    const AttentionTrace& a = v.trace();
    const HeadMap head = v.head(c.ui.head);
    const int nq = static_cast<int>(a.masks[0].rows()), nk = static_cast<int>(a.masks[0].cols());
    const bool self_dec = v.kind == AttnKind::DecoderSelf;
    // The two parts of the combined mask, from the keys' ids and the pad key the forward uses.
    const int pad_key = self_dec ? decoder_pad_key(cfg) : source_pad_key(cfg);
    const std::vector<int>& key_ids = v.k_ids();
    // The rules of the mask the forward built (make_mask's), one by one; a sliding window (Mistral)
    // bands the causal mask. Computed once per view and head (core's mask_tables), drawn every frame.
    const int window = self_dec ? cfg.sliding_window : 0;
    if (!tables_.same(v.data) || tables_.head != c.ui.head || tables_.window != window) {
      tables_.view = v.data;
      tables_.head = c.ui.head;
      tables_.window = window;
      tables_.t = mask_tables(a, head.raw, key_ids, pad_key, self_dec, window);
      symmetric_range(tables_.t.scores.data(), static_cast<size_t>(tables_.t.scores.size()), tables_.lo, tables_.hi);
    }
    const MaskTables& t = tables_.t;
    const Mat& pad = t.padding;
    const Mat& causal = t.causal;
    const Mat* out = window > 0 ? &t.outside_window : nullptr;
    const Mat& combined = a.masks[0];
    const Mat& sc = t.scores;
    const Mat& masked = t.masked;
    const Mat& w = head.weights;
    const float slo = tables_.lo, shi = tables_.hi;

    const uint64_t key =
        mix_key(mix_key(c.snap.generation, reinterpret_cast<uintptr_t>(&v)), static_cast<uint64_t>(c.ui.head));
    // Six tables in the arrangement (3 × 2, 6 × 1 or 2 × 3) that gives their cells the most room:
    // a wide, short panel (a projector's row) takes them in one row.
    const float fs = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float gutter = fs * 3, caption_h = ImGui::GetTextLineHeightWithSpacing();
    // The note under the tables (two lines), the padding button, and the band's caption.
    const float below = fs * (window > 0 ? 5.0f : 3.5f);
    const auto cell = [&](int cols) {
      const int rows = 6 / cols;
      const float w = (avail.x - fs * static_cast<float>(cols - 1)) / static_cast<float>(cols);
      const float h = (avail.y - below) / static_cast<float>(rows) - caption_h;
      return std::min((w - gutter) / static_cast<float>(nk), (h - gutter) / static_cast<float>(nq));
    };
    // No more columns than tables of twelve font heights fit (a narrow panel takes two, so that
    // the softmax table stays in view without scrolling).
    const float min_w = 12.0f * fs;
    const int fit = std::max(2, static_cast<int>((avail.x + fs) / (min_w + fs)));
    int cols = fit >= 3 ? 3 : 2;
    for (int k : {6, 2})
      if (k <= fit && cell(k) > cell(cols) * 1.05f) cols = k;
    const float W = (avail.x - fs * static_cast<float>(cols - 1)) / static_cast<float>(cols);
    const float H = (avail.y - below) / static_cast<float>(6 / cols) - caption_h;
    const auto next = [&](int i) {
      if (i % cols) ImGui::SameLine(0, fs);
    };
    table(c, 0, "padding mask", pad, Colormap::Diverging, -1, 1, v, key, W, H, 0);
    next(1);
    char band[64];
    std::snprintf(band, sizeof band, "causal band W = %d (i−W < j ≤ i)", window);
    table(c, 1,
          window > 0 ? band
          : self_dec ? "causal mask (j ≤ i)"
                     : "causal mask (none here)",
          causal, Colormap::Diverging, -1, 1, v, key, W, H, 0, out);
    next(2);
    table(c, 2, "combined mask M", combined, Colormap::Diverging, -1, 1, v, key, W, H, 0, out);
    next(3);
    table(c, 3, "scores S = QKᵀ/√d_k", sc, Colormap::Diverging, slo, shi, v, key, W, H);
    next(4);
    table(c, 4, "masked S + M", masked, Colormap::Diverging, slo, shi, v, key, W, H, 2, out);
    next(5);
    table(c, 5, "softmax(S + M)", w, Colormap::Viridis, 0, 1, v, key, W, H, 2, out);  // masked weights are exactly 0
    if (window > 0) draw_window_caption(c, v, window, nq);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped(
        "hatched cells are −∞: exp(−∞) = 0, so a masked key gets weight exactly 0. Grey \"—\": never "
        "computed (the key did not exist yet at that decoding step).");
    ImGui::PopStyleColor();
    if (v.kind != AttnKind::DecoderSelf && cfg.has_encoder()) {
      if (pad_key >= 0 && std::find(key_ids.begin(), key_ids.end(), pad_key) == key_ids.end()) {
        ImGui::TextDisabled("No <pad> in the source: the padding mask is all 0.");
        ImGui::SameLine();
        if (ImGui::SmallButton("append two <pad>")) c.worker.post([](Engine& e) { e.append_padding(); });
      }
    }
  }

  // What the band means, for the selected query (the pinned cell's row, else the last row): the
  // tokens it sees and those that fell out of its window.
  void draw_window_caption(Ctx& c, const AttnView& v, int window, int nq) {
    const float fs = ImGui::GetFontSize();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + fs * 0.15f), ImVec2(p.x + fs * 0.9f, p.y + fs * 1.05f),
                                              kOutOfWindow);
    ImGui::Dummy(ImVec2(fs * 1.1f, fs));
    ImGui::SameLine();
    ImGui::PushFont(c.fonts.bold);
    ImGui::Text("sliding window W = %d: token t sees tokens t−%d … t", window, window - 1);
    ImGui::PopFont();
    ImGui::SameLine();
    const int t = c.ui.cell_pinned ? std::clamp(c.ui.cell_row, 0, nq - 1) : nq - 1;
    const int first = first_visible_key(t, window);
    const std::string& tok = v.q_labels()[static_cast<size_t>(t)];
    if (first > 0)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kOutOfWindow),
                         "— token %d '%s' sees %d … %d; tokens 0 … %d fell out of its window (−∞, violet)", t,
                         tok.c_str(), first, t, first - 1);
    else
      ImGui::TextDisabled("— token %d '%s' sees 0 … %d: nothing has fallen out yet (a prompt longer than %d shows it)",
                          t, tok.c_str(), t, window);
  }

  // [SECTION] a padded batch
  // The model's example inputs, of different lengths, padded to the longest and stacked: each
  // sequence gets its own mask (core's batch_masks, as the batched forward builds them).
  void draw_batch(Ctx& c) {
    const auto& d = c.snap.batch_demo;
    if (!d || !d->note.empty()) {
      ImGui::TextWrapped("No batch to show: %s.", d ? d->note.c_str() : "no model loaded");
      return;
    }
    const BatchMasks& bm = d->masks;
    const int B = static_cast<int>(d->src.size());
    const bool enc = !bm.encoder.empty(), dec = d->has_target && !bm.decoder.empty();
    ImGui::TextWrapped(
        "%d example inputs of different lengths, padded with <pad> at the end to the longest and stacked into one "
        "batch. Each sequence gets its own mask: its <pad> keys are −∞ for every query%s.",
        B, dec ? "; the decoder side adds the causal mask (j ≤ i)" : "");
    const float fs = ImGui::GetFontSize();
    // One map per (side, sequence), in a grid oriented to give the maps the most room: sides as
    // rows and sequences as columns in a wide panel, the other way round in a tall one.
    struct Map {
      const char* side;
      const Mat* m;
      const std::vector<std::string>* tokens;
      int len, seq, slot;
    };
    const bool has_src = c.snap.model->config.has_encoder();
    std::vector<std::vector<Map>> by_side;
    if (enc) {
      by_side.emplace_back();
      for (int b = 0; b < B; ++b)
        by_side.back().push_back({"source", &bm.encoder[static_cast<size_t>(b)], &d->src[static_cast<size_t>(b)],
                                  bm.src_len[static_cast<size_t>(b)], b, b});
    }
    if (dec) {
      by_side.emplace_back();
      for (int b = 0; b < B; ++b)
        by_side.back().push_back({has_src ? "target" : "sequence", &bm.decoder[static_cast<size_t>(b)],
                                  &d->tgt[static_cast<size_t>(b)], bm.tgt_len[static_cast<size_t>(b)], b, 4 + b});
    }
    const int sides = static_cast<int>(by_side.size());
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float head = fs * 1.6f;  // a map's caption line
    const auto map_size = [&](int cols, int rows) {
      return std::min((avail.x - fs * (cols - 1)) / cols, (avail.y - fs * 1.5f) / rows - head);
    };
    // Columns narrower than a map's caption would run off the panel.
    const float caption_w = ImGui::CalcTextSize("target 0: 00 + 00 <pad>").x;
    const bool fits_wide = (avail.x - fs * (B - 1)) / B >= caption_w;
    const bool wide = fits_wide && map_size(B, sides) >= map_size(sides, B);
    // A wide, short panel (a projector's row) may take every map in one row.
    const bool one_row = sides > 1 && (avail.x - fs * (B * sides - 1)) / (B * sides) >= caption_w &&
                         map_size(B * sides, 1) > map_size(wide ? B : sides, wide ? sides : B);
    const int cols = one_row ? B * sides : wide ? B : sides, rows = one_row ? 1 : wide ? sides : B;
    const float W = (avail.x - fs * (cols - 1)) / cols, H = (avail.y - fs * 1.5f) / rows - head;
    ImGui::TextDisabled("source: encoder self-attention, padding mask%s",
                        dec ? "  ·  target: decoder self-attention, padding + causal" : "");
    const uint64_t key = mix_key(reinterpret_cast<uintptr_t>(d.get()), 99);
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < cols; ++k) {
        const Map& mp = one_row ? by_side[static_cast<size_t>(k / B)][static_cast<size_t>(k % B)]
                        : wide  ? by_side[static_cast<size_t>(r)][static_cast<size_t>(k)]
                                : by_side[static_cast<size_t>(k)][static_cast<size_t>(r)];
        if (k) ImGui::SameLine(0, fs);
        const Mat& m = *mp.m;
        Heatmap& h = batch_[static_cast<size_t>(mp.slot)];
        h.update(m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()),
                 mix_key(key, static_cast<uint64_t>(mp.slot)), Colormap::Diverging, -1, 1);
        ImGui::BeginGroup();
        const int n = static_cast<int>(mp.tokens->size());
        ImGui::Text("%s %d: %d + %d <pad>", mp.side, mp.seq, mp.len, n - mp.len);
        HeatmapOpts o;
        o.row_labels = mp.tokens;
        o.col_labels = mp.tokens;
        o.show_values = true;
        o.decimals = 0;
        o.fonts = &c.fonts;
        o.max_size = ImVec2(W, H);
        o.max_cell = 44;
        const std::string id = std::string(mp.side) + std::to_string(mp.seq);
        const HeatmapHit hit = heatmap_widget(id.c_str(), h, o);
        if (r == 0 && k == 0) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
        if (hit.hovered)
          ImGui::SetTooltip("%s %d, query %d '%s', key %d '%s': %s", mp.side, mp.seq, hit.row,
                            (*mp.tokens)[static_cast<size_t>(hit.row)].c_str(), hit.col,
                            (*mp.tokens)[static_cast<size_t>(hit.col)].c_str(),
                            fmt_value(m(hit.row, hit.col), 0).c_str());
        ImGui::EndGroup();
      }
  }

  // [SECTION] the leak
  void draw_leak(Ctx& c) {
    const auto& d = c.snap.leak_demo;
    const Palette& pal = palette();
    if (still_running(d.get(), "running the teacher-forced pass with and without the causal mask…")) return;
    const int h = std::min(c.ui.head, static_cast<int>(d->causal.weights.size()) - 1);
    ImGui::TextWrapped(
        "Teacher forcing feeds the whole target at once. The causal mask is what stops position i from "
        "reading positions after i — the tokens it is supposed to predict. Without it (right) the upper "
        "triangle fills with weight: the model would be copying the answer. Decoder layer %d, head %d.",
        d->layer, h);
    const float fs = ImGui::GetFontSize();
    const float W = (ImGui::GetContentRegionAvail().x - fs * 10) / 2.0f;
    const float H = ImGui::GetContentRegionAvail().y - fs * 3;
    const uint64_t key = mix_key(reinterpret_cast<uintptr_t>(d.get()), static_cast<uint64_t>(h));
    const Mat& a = d->causal.weights[static_cast<size_t>(h)];
    const Mat& b = d->leaky.weights[static_cast<size_t>(h)];
    leak_[0].update(a.data(), static_cast<int>(a.rows()), static_cast<int>(a.cols()), key, Colormap::Viridis, 0, 1);
    leak_[1].update(b.data(), static_cast<int>(b.rows()), static_cast<int>(b.cols()), key, Colormap::Viridis, 0, 1);
    const auto one = [&](int slot, const char* caption) {
      ImGui::BeginGroup();
      ImGui::PushFont(c.fonts.bold);
      ImGui::TextUnformatted(caption);
      ImGui::PopFont();
      HeatmapOpts o;
      o.row_labels = &d->tokens;
      o.col_labels = &d->tokens;
      o.show_values = true;
      o.fonts = &c.fonts;
      o.max_size = ImVec2(W, H);
      o.max_cell = 44;
      heatmap_widget(caption, leak_[slot], o);
      ImGui::EndGroup();
    };
    one(0, "with the causal mask");
    ImGui::SameLine();
    one(1, "causal mask removed");
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.bold);
    ImGui::TextUnformatted("weight on the future");
    ImGui::PopFont();
    for (size_t i = 0; i < d->future_mass.size(); ++i) {
      const float m = d->future_mass[i];
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(m > 0.01f ? pal.error : pal.text_dim), "%-6s %5.1f%%",
                         d->tokens[i].c_str(), 100.0f * m);
    }
    ImGui::TextWrapped("logits change by up to %.3f", d->max_logit_diff);
    ImGui::EndGroup();
  }

  Heatmap maps_[6], leak_[2], batch_[8];
  // The tables of the view and head drawn last. The view is watched, not kept: its control block
  // outlives it, so a later view never compares equal to it.
  struct Tables {
    std::weak_ptr<const AttnData> view;
    bool same(const std::shared_ptr<const AttnData>& v) const {
      return !view.owner_before(v) && !v.owner_before(view) && !view.expired();
    }
    int head = -1, window = 0;
    MaskTables t;
    float lo = 0, hi = 0;
  } tables_;
};

}  // namespace

std::unique_ptr<Panel> make_masks_panel() { return std::make_unique<MasksPanel>(); }

}  // namespace sf::gui
