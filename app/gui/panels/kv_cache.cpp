// kv_cache.cpp — "KV cache": per decoder layer and head, the cached K and V as matrices that grow
// by one row per decoded token (the new row outlined), cross-attention K/V marked as computed
// once; the bytes held, and the cost of a step with and without the cache; a cache on/off switch.
//
// [SECTION] switch and bytes
// [SECTION] matrices
// [SECTION] cost per token
#include <algorithm>
#include <cmath>

#include "actions.h"
#include "app.h"
#include "stepper/cost.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class KvCachePanel : public Panel {
 public:
  KvCachePanel() : Panel({"KV cache", "kv", ImVec4(0.24f, 0.40f, 0.76f, 0.60f), false, Needs::Decoder}) {}

  const Heatmap* main_heatmap() const override { return &maps_[0]; }

  void Draw(Ctx& c) override {
    draw_header(c);
    ImGui::Separator();
    const float fs = ImGui::GetFontSize();
    const float right = std::min(fs * 24, ImGui::GetContentRegionAvail().x * 0.34f);
    ImGui::BeginChild("kv-mats", ImVec2(ImGui::GetContentRegionAvail().x - right - fs * 0.5f, 0));
    draw_matrices(c);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("kv-cost", ImVec2(0, 0));
    draw_cost(c);
    ImGui::EndChild();
  }

 private:
  // [SECTION] switch and bytes
  void draw_header(Ctx& c) {
    const Snapshot& s = c.snap;
    const KvCacheView& kv = s.kv;
    const Config& cfg = s.model->config;
    bool on = s.session->use_cache();
    ImGui::PushFont(c.fonts.bold);
    if (ImGui::Checkbox("KV cache", &on)) act::set_cache(c.worker, on);
    ImGui::PopFont();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "on: each step projects only the newest token and appends its K, V rows\n"
          "off: each step recomputes the decoder over the whole prefix (same numbers, more work)");
    ImGui::SameLine();
    const float fs = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(fs * 7);
    c.ui.kv_layer = std::clamp(c.ui.kv_layer, 0, cfg.n_decoder_layers - 1);
    ImGui::SliderInt("layer", &c.ui.kv_layer, 0, cfg.n_decoder_layers - 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fs * 7);
    ImGui::SliderInt("head", &c.ui.head, 0, cfg.n_heads - 1);
    ImGui::SameLine();
    ImGui::Checkbox("all heads", &all_heads_);
    ImGui::SameLine(0, fs * 1.5f);
    if (kv.step < 0) {
      ImGui::TextDisabled("nothing cached yet: the decoder has not run");
      return;
    }
    if (!kv.enabled) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn),
                         "cache off: 0 bytes kept; K, V recomputed every step");
      return;
    }
    ImGui::Text("holds %s", fmt_bytes(kv.self_bytes + kv.cross_bytes).c_str());
    ImGui::SameLine();
    const int rows = kv.row_step.empty() ? 0 : static_cast<int>(kv.row_step.size());
    ImGui::TextDisabled("= self %s (2 × %d layers × %d rows × %d × 4 B%s) + cross %s", fmt_bytes(kv.self_bytes).c_str(),
                        cfg.n_decoder_layers, rows, cfg.d_kv(), kv.sequences > 1 ? " × beams" : "",
                        fmt_bytes(kv.cross_bytes).c_str());
  }

  // [SECTION] matrices
  void one(Ctx& c, int slot, const char* caption, const Mat* m, int rows, int new_rows,
           const std::vector<std::string>& labels, uint64_t key, float w, float h, bool once) {
    const Config& cfg = c.snap.model->config;
    const int dk = cfg.d_k();
    ImGui::BeginGroup();
    ImGui::PushFont(c.fonts.bold);
    ImGui::TextUnformatted(caption);
    ImGui::PopFont();
    if (!m || rows == 0) {
      ImGui::TextDisabled(once ? "not computed yet (step 0 computes it)" : "empty");
      ImGui::EndGroup();
      return;
    }
    // A self-attention cache of a grouped-query model holds h_kv heads: query head h reads K/V head
    // h ÷ (h ÷ h_kv); cross-attention K/V have every head.
    const int cols = static_cast<int>(m->cols()), heads_held = std::max(1, cols / dk);
    const int kv_head = c.ui.head / std::max(1, cfg.n_heads / heads_held);
    const Mat block = all_heads_ ? Mat(m->topRows(rows)) : Mat(m->topRows(rows).middleCols(kv_head * dk, dk));
    float lo, hi;
    symmetric_range(block.data(), static_cast<size_t>(block.size()), lo, hi);
    maps_[slot].update(block.data(), static_cast<int>(block.rows()), static_cast<int>(block.cols()),
                       mix_key(key, static_cast<uint64_t>(slot)), Colormap::Diverging, lo, hi);
    if (static_cast<int>(dims_.size()) != block.cols()) dims_ = numbered(static_cast<int>(block.cols()));
    HeatmapOpts o;
    o.row_labels = &labels;
    o.col_labels = &dims_;
    o.fonts = &c.fonts;
    o.square = true;
    o.max_cell = 28;
    o.max_size = ImVec2(w, h);
    o.new_row0 = new_rows > 0 ? rows - new_rows : -1;
    o.new_rows = new_rows;
    const HeatmapHit hit = heatmap_widget(caption, maps_[slot], o);
    if (slot == 0) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    if (hit.hovered)
      ImGui::SetTooltip(
          "%s row %d '%s', column %d: %s", caption, hit.row,
          labels[static_cast<size_t>(std::min<int>(hit.row, static_cast<int>(labels.size()) - 1))].c_str(), hit.col,
          fmt_value(block(hit.row, hit.col), 4).c_str());
    ImGui::EndGroup();
  }

  void draw_matrices(Ctx& c) {
    const Snapshot& s = c.snap;
    const KvCacheView& kv = s.kv;
    if (kv.step < 0 || kv.layers.empty()) {
      ImGui::TextWrapped(
          "The cache fills during decoding: at every step each decoder layer appends the newest token's "
          "key and value rows; cross-attention K and V are computed once from the encoder memory.");
      return;
    }
    const int l = std::clamp(c.ui.kv_layer, 0, static_cast<int>(kv.layers.size()) - 1);
    const KvLayerView& L = kv.layers[static_cast<size_t>(l)];
    std::vector<std::string> labels;
    const AttnView* dv = s.attn_view(AttnKind::DecoderSelf, l);
    // Position, token and the step that wrote the row; a decoder-only prompt's rows all come in at
    // step 0 together, the prefill, and say so.
    const int prefill = static_cast<int>(std::count(kv.row_step.begin(), kv.row_step.end(), 0));
    for (int r = 0; r < L.self_rows; ++r) {
      std::string tok = dv && r < static_cast<int>(dv->k_labels.size()) ? dv->k_labels[static_cast<size_t>(r)] : "?";
      const int st = r < static_cast<int>(kv.row_step.size()) ? kv.row_step[static_cast<size_t>(r)] : -1;
      labels.push_back(std::to_string(r) + " " + tok +
                       (st == 0 && prefill > 1 ? " ·prefill" : " ·t" + std::to_string(st)));
    }
    std::vector<std::string> src;
    if (s.session->encoder())
      for (int id : s.session->encoder()->src_ids) src.push_back(display_token(s.model->config.src_vocab, id));
    const uint64_t key =
        mix_key(mix_key(s.generation, static_cast<uint64_t>(l)), static_cast<uint64_t>(c.ui.head * 2 + all_heads_));
    const float fs = ImGui::GetFontSize();
    const bool cross = L.cross_k != nullptr || s.model->config.has_encoder();
    const float W = (ImGui::GetContentRegionAvail().x - fs) / 2.0f;
    const float H =
        cross ? (ImGui::GetContentRegionAvail().y - fs * 4) * 0.62f : ImGui::GetContentRegionAvail().y - fs * 2;
    char ck[96], cv[96];
    if (kv.enabled) {
      std::snprintf(ck, sizeof ck, "self K  (%d rows%s)", L.self_rows, L.new_rows ? ", +1 this step" : "");
      std::snprintf(cv, sizeof cv, "self V  (%d rows)", L.self_rows);
    } else {
      std::snprintf(ck, sizeof ck, "self K  (all %d rows recomputed)", L.self_rows);
      std::snprintf(cv, sizeof cv, "self V  (all %d rows recomputed)", L.self_rows);
    }
    one(c, 0, ck, L.self_k, L.self_rows, L.new_rows, labels, key, W, H, false);
    ImGui::SameLine();
    one(c, 1, cv, L.self_v, L.self_rows, L.new_rows, labels, key, W, H, false);
    if (!s.model->config.has_encoder()) return;
    const char* when = !kv.enabled   ? "recomputed at every step"
                       : L.cross_new ? "computed now, once"
                                     : "computed once at step 0, reused";
    char xk[96], xv[96];
    std::snprintf(xk, sizeof xk, "cross K  (%s)", when);
    std::snprintf(xv, sizeof xv, "cross V  (%s)", when);
    const float H2 = ImGui::GetContentRegionAvail().y - fs * 1.5f;
    one(c, 2, xk, L.cross_k, L.cross_k ? static_cast<int>(L.cross_k->rows()) : 0, 0, src, key, W, H2, true);
    ImGui::SameLine();
    one(c, 3, xv, L.cross_v, L.cross_v ? static_cast<int>(L.cross_v->rows()) : 0, 0, src, key, W, H2, true);
  }

  // [SECTION] cost per token
  void draw_cost(Ctx& c) {
    const Snapshot& s = c.snap;
    const Config& cfg = s.model->config;
    const CostReport& r = s.cost;
    const Palette& pal = palette();
    heading(c.fonts, "Cost of this step");
    ImGui::Text("with cache     %s", fmt_flops(r.step_cached.total()).c_str());
    ImGui::Text("recomputing    %s", fmt_flops(r.step_uncached.total()).c_str());
    if (r.step_cached.total() > 0)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.ok), "the cache saves %.1f×",
                         static_cast<double>(r.step_uncached.total()) / static_cast<double>(r.step_cached.total()));
    ImGui::TextDisabled("t = %d decoder tokens, n_src = %d", r.t, r.n_src);
    // FLOPs per generated token over t, both ways (cost.h's formulas).
    const int T = cfg.max_len;
    cached_.clear();
    uncached_.clear();
    xs_.clear();
    for (int t = 1; t <= T; ++t) {
      cached_.push_back(static_cast<float>(decode_step_flops(cfg, r.n_src, t, true).total()) / 1e3f);
      uncached_.push_back(static_cast<float>(decode_step_flops(cfg, r.n_src, t, false).total()) / 1e3f);
      xs_.push_back(std::to_string(t));
    }
    std::vector<Series> ser = {{&uncached_, pal.warn, "recompute"}, {&cached_, pal.ok, "KV cache"}};
    line_plot("flops", ser, &xs_, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 10), c.fonts,
              "kFLOP per token vs. t", false, "t =");
    ImGui::TextWrapped(
        "Recomputing runs the decoder over all t tokens at every step (quadratic in total); the cache "
        "runs one row and reads the stored K, V (linear).");
    // On a line of its own: ImGui wraps after a '.', which would split "1.0 KiB".
    ImGui::Text("Memory grows by %s per token.", fmt_bytes(kv_cache_bytes(cfg, 1)).c_str());
  }

  Heatmap maps_[4];
  std::vector<std::string> dims_, xs_;
  std::vector<float> cached_, uncached_;
  bool all_heads_ = false;
};

}  // namespace

std::unique_ptr<Panel> make_kv_cache_panel() { return std::make_unique<KvCachePanel>(); }

}  // namespace sf::gui
