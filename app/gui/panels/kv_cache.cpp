// kv_cache.cpp — "KV cache": per decoder layer and head, the cached K and V as matrices that grow
// by one row per decoded token (the new row outlined), cross-attention K/V marked as computed
// once; the bytes held, per layer beside a multi-head cache of the same model (what grouped-query
// attention saves), which query heads share each K/V head, and the cost of a step with and
// without the cache; a cache on/off switch.
//
// [SECTION] switch and bytes
// [SECTION] grouped-query attention
// [SECTION] matrices
// [SECTION] bytes per layer
// [SECTION] cost per token
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

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
    if (c.snap.kv.table.group > 1) draw_groups(c);
    draw_matrices(c);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("kv-cost", ImVec2(0, 0));
    draw_bytes(c);
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
    const int rows = kv.row_step.empty() ? 0 : static_cast<int>(kv.row_step.size());
    const KvCacheTable& t = kv.table;
    char sum[192];
    if (cfg.has_encoder())
      std::snprintf(sum, sizeof sum, "= self %s (2 × %d layers × %d rows × %d × %d B%s) + cross %s",
                    fmt_bytes(kv.self_bytes).c_str(), cfg.n_decoder_layers, rows, t.kv_heads * t.d_k,
                    t.bytes_per_element, kv.sequences > 1 ? " × beams" : "", fmt_bytes(kv.cross_bytes).c_str());
    else
      std::snprintf(sum, sizeof sum, "= 2 × %d layers × %d K/V heads × d_k %d × %d rows × %d B%s", cfg.n_decoder_layers,
                    t.kv_heads, t.d_k, rows, t.bytes_per_element, kv.sequences > 1 ? " × beams" : "");
    // Beside the total when it fits, else on the next line (wrapped between words): never cut.
    same_line_if_fits(ImGui::CalcTextSize(sum).x);
    disabled_wrapped(sum);
  }

  // Dimmed text wrapped between words, recorded as a box (DrawnBoxes) under the text as drawn.
  static void disabled_wrapped(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    const std::string drawn = text_wrapped_words(text);
    ImGui::PopStyleColor();
    note_item(drawn);
  }

  // [SECTION] grouped-query attention
  // The query heads in a row, coloured by the K/V head they read, each joined to it: the K/V heads
  // in the row below, under the middle of their group. Clicking a head selects it.
  void draw_groups(Ctx& c) {
    const Config& cfg = c.snap.model->config;
    const KvCacheTable& t = c.snap.kv.table;
    const std::vector<std::vector<int>> groups = query_heads_by_kv_head(cfg);
    const Palette& pal = palette();
    const float fs = ImGui::GetFontSize();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float label_w = ImGui::CalcTextSize("query heads").x + fs;
    const float caption_w = std::min(fs * 17, ImGui::GetContentRegionAvail().x * 0.36f);
    const float avail = ImGui::GetContentRegionAvail().x - label_w - caption_w - fs;
    const float slot = std::clamp(avail / static_cast<float>(t.query_heads), fs * 0.6f, fs * 3.2f);
    const float box_w = slot * 0.82f, box_h = fs * 1.45f, gap_y = fs * 1.5f;
    const float y_kv = p.y + box_h + gap_y;
    const int sel = std::clamp(c.ui.head, 0, t.query_heads - 1);
    const int sel_kv = kv_head_of(cfg, sel);
    dl->AddText(ImVec2(p.x, p.y + (box_h - fs) * 0.5f), pal.text_dim, "query heads");
    dl->AddText(ImVec2(p.x, y_kv + (box_h - fs) * 0.5f), pal.text_dim, "K/V heads");
    const auto centred = [&](ImVec2 a, ImVec2 b, const char* text) {
      const ImVec2 ts = ImGui::CalcTextSize(text);
      if (ts.x > b.x - a.x) return;  // too narrow for its name: the colour says enough
      dl->AddText(ImVec2((a.x + b.x - ts.x) * 0.5f, (a.y + b.y - ts.y) * 0.5f), IM_COL32(255, 255, 255, 255), text);
    };
    const float x0 = p.x + label_w;
    char buf[32];
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<int>& qs = groups[g];
      const float gx0 = x0 + static_cast<float>(qs.front()) * slot,
                  gx1 = x0 + static_cast<float>(qs.back()) * slot + box_w;
      const float kw = std::max(box_w, std::min(gx1 - gx0, fs * 3.5f)), kx = (gx0 + gx1 - kw) * 0.5f;
      const ImU32 col = head_colour(static_cast<int>(g)), faint = head_colour(static_cast<int>(g), 0.75f);
      for (int h : qs) {
        const float hx = x0 + static_cast<float>(h) * slot;
        dl->AddLine(ImVec2(hx + box_w * 0.5f, p.y + box_h), ImVec2(kx + kw * 0.5f, y_kv), faint, 2.0f);
        dl->AddRectFilled(ImVec2(hx, p.y), ImVec2(hx + box_w, p.y + box_h), col, fs * 0.2f);
        std::snprintf(buf, sizeof buf, "q%d", h);
        centred(ImVec2(hx, p.y), ImVec2(hx + box_w, p.y + box_h), buf);
        if (h == sel)
          dl->AddRect(ImVec2(hx - 2, p.y - 2), ImVec2(hx + box_w + 2, p.y + box_h + 2), pal.highlight, fs * 0.2f, 0,
                      2.5f);
        ImGui::SetCursorScreenPos(ImVec2(hx, p.y));
        ImGui::PushID(h);
        if (ImGui::InvisibleButton("qh", ImVec2(box_w, box_h))) c.ui.head = h;
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("query head %d reads K/V head %d (with %d other query head%s)", h, static_cast<int>(g),
                            t.group - 1, t.group == 2 ? "" : "s");
        ImGui::PopID();
      }
      dl->AddRectFilled(ImVec2(kx, y_kv), ImVec2(kx + kw, y_kv + box_h), col, fs * 0.2f);
      std::snprintf(buf, sizeof buf, "kv%d", static_cast<int>(g));
      centred(ImVec2(kx, y_kv), ImVec2(kx + kw, y_kv + box_h), buf);
      if (static_cast<int>(g) == sel_kv)
        dl->AddRect(ImVec2(kx - 2, y_kv - 2), ImVec2(kx + kw + 2, y_kv + box_h + 2), pal.highlight, fs * 0.2f, 0, 2.5f);
    }
    // Beside the diagram, what it means in words and bytes.
    const float cx = x0 + static_cast<float>(t.query_heads) * slot + fs;
    ImGui::SetCursorScreenPos(ImVec2(cx, p.y));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(cx + caption_w);
    ImGui::PushFont(c.fonts.bold);
    ImGui::Text("grouped-query attention: %d query heads share %d K/V heads", t.query_heads, t.kv_heads);
    ImGui::PopFont();
    ImGui::TextWrapped("%d query heads per K/V head: the cache keeps %d heads, not %d (%d× fewer bytes).", t.group,
                       t.kv_heads, t.query_heads, t.group);
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    mark_rect = ImVec4(x0, p.y, x0 + static_cast<float>(t.query_heads) * slot, y_kv + box_h);  // the diagram
    const float bottom = std::max(y_kv + box_h + fs * 0.6f, ImGui::GetItemRectMax().y + fs * 0.3f);
    ImGui::SetCursorScreenPos(ImVec2(p.x, bottom));
    ImGui::Dummy(ImVec2(1, 1));
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
      std::string tok =
          dv && r < static_cast<int>(dv->k_labels().size()) ? dv->k_labels()[static_cast<size_t>(r)] : "?";
      const int st = r < static_cast<int>(kv.row_step.size()) ? kv.row_step[static_cast<size_t>(r)] : -1;
      labels.push_back(std::to_string(r) + " " + tok +
                       (st == 0 && prefill > 1 ? " ·prefill" : " ·t" + std::to_string(st)));
    }
    std::vector<std::string> src;
    if (const auto enc = s.session->encoder())  // held while its ids are read
      for (int id : enc->src_ids) src.push_back(display_token(s.model->config.src_vocab, id));
    const uint64_t key =
        mix_key(mix_key(s.generation, static_cast<uint64_t>(l)), static_cast<uint64_t>(c.ui.head * 2 + all_heads_));
    const float fs = ImGui::GetFontSize();
    const bool cross = L.cross_k != nullptr || s.model->config.has_encoder();
    const float W = (ImGui::GetContentRegionAvail().x - fs) / 2.0f;
    const float H =
        cross ? (ImGui::GetContentRegionAvail().y - fs * 4) * 0.62f : ImGui::GetContentRegionAvail().y - fs * 2;
    char ck[128], cv[128], which[48] = "";
    // Grouped-query attention: the K/V head the selected query head reads.
    if (kv.table.group > 1 && !all_heads_)
      std::snprintf(which, sizeof which, " of K/V head %d", kv_head_of(s.model->config, c.ui.head));
    if (kv.enabled) {
      std::snprintf(ck, sizeof ck, "self K%s  (%d rows%s)", which, L.self_rows, L.new_rows ? ", +1 this step" : "");
      std::snprintf(cv, sizeof cv, "self V%s  (%d rows)", which, L.self_rows);
    } else {
      std::snprintf(ck, sizeof ck, "self K%s  (all %d rows recomputed)", which, L.self_rows);
      std::snprintf(cv, sizeof cv, "self V%s  (all %d rows recomputed)", which, L.self_rows);
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

  // [SECTION] bytes per layer
  // The "Transformer Architecture" lecture's cache size (KV-Cache for reducing inference
  // redundancy), per decoder layer as of this stage, beside a cache with every query head's own
  // K/V (multi-head attention) and the factor grouping saves.
  void draw_bytes(Ctx& c) {
    const KvCacheView& kv = c.snap.kv;
    const KvCacheTable& t = kv.table;
    heading(c.fonts, "Self-attention cache bytes");
    if (kv.step < 0 || t.layers.empty()) {
      ImGui::TextDisabled("nothing cached yet");
      return;
    }
    if (!kv.enabled) ImGui::TextDisabled("cache off: what it would hold");
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
    // Multi-head attention keeps every head's K/V: the MHA columns would repeat the bytes.
    const bool grouped = t.group > 1;
    if (ImGui::BeginTable("kv-bytes", grouped ? 5 : 3, flags)) {
      ImGui::TableSetupColumn("layer");
      ImGui::TableSetupColumn("tokens");
      ImGui::TableSetupColumn("bytes");
      if (grouped) {
        ImGui::TableSetupColumn("MHA bytes");
        ImGui::TableSetupColumn("saved ×");
      }
      ImGui::TableHeadersRow();
      const int sel = std::clamp(c.ui.kv_layer, 0, static_cast<int>(t.layers.size()) - 1);
      // A long stack shows the selected layer and its neighbours; the total covers every layer.
      const int first = std::clamp(sel - 3, 0, std::max(0, static_cast<int>(t.layers.size()) - 8));
      const int last = std::min(static_cast<int>(t.layers.size()), first + 8);
      // bytes < 0: a row without numbers (the "…" of a long stack).
      const auto row = [&](const char* name, int tokens, int64_t bytes, int64_t mha, double saved, bool strong,
                           bool selected) {
        ImGui::TableNextRow();
        if (selected)
          ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, (palette().highlight & 0x00FFFFFFu) | 0x30000000u);
        if (strong) ImGui::PushFont(c.fonts.bold);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(name);
        if (bytes >= 0) {
          ImGui::TableNextColumn();
          if (tokens >= 0) ImGui::Text("%d", tokens);
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(fmt_bytes(bytes).c_str());
          if (grouped) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(fmt_bytes(mha).c_str());
            ImGui::TableNextColumn();
            if (saved > 0) ImGui::Text("%.3g×", saved);
          }
        }
        if (strong) ImGui::PopFont();
      };
      for (int l = first; l < last; ++l) {
        const KvCacheRow& r = t.layers[static_cast<size_t>(l)];
        row(std::to_string(l).c_str(), r.tokens, r.bytes, r.mha_bytes, r.saved(), false, l == sel);
      }
      if (last - first < static_cast<int>(t.layers.size())) row("…", -1, -1, -1, 0, false, false);
      row("total", -1, t.bytes, t.mha_bytes, t.saved(), true, false);
      ImGui::EndTable();
    }
    char formula[160];
    std::snprintf(formula, sizeof formula, "bytes = 2 (K, V) × %d K/V heads × d_k %d × tokens × %d B%s", t.kv_heads,
                  t.d_k, t.bytes_per_element, t.sequences > 1 ? " × beams" : "");
    disabled_wrapped(formula);
    if (grouped) disabled_wrapped("MHA bytes: the same with all " + std::to_string(t.query_heads) + " query heads");
    ImGui::Spacing();
  }

  // [SECTION] cost per token
  void draw_cost(Ctx& c) {
    const Snapshot& s = c.snap;
    const Config& cfg = s.model->config;
    const CostReport& r = s.cost;
    const Palette& pal = palette();
    heading(c.fonts, "Cost of this step");
    ImGui::SameLine();
    ImGui::TextDisabled("t = %d, n_src = %d", r.t, r.n_src);
    help_marker(
        "t decoder tokens so far, n_src source tokens. Recomputing runs the decoder over all t tokens at "
        "every step (quadratic in total); the cache runs one row and reads the stored K, V (linear).");
    ImGui::Text("with cache     %s", fmt_flops(r.step_cached.total()).c_str());
    ImGui::Text("recomputing    %s", fmt_flops(r.step_uncached.total()).c_str());
    if (r.step_cached.total() > 0)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.ok), "the cache saves %.1f×",
                         static_cast<double>(r.step_uncached.total()) / static_cast<double>(r.step_cached.total()));
    // Wrapped between words only, the amount and its unit joined by a no-break space: ImGui's own
    // wrapping breaks after a '.', which would split "1.0 KiB".
    std::string amount = fmt_bytes(kv_cache_bytes(cfg, 1));
    if (const size_t sp = amount.find(' '); sp != std::string::npos) amount.replace(sp, 1, "\u00a0");
    note_item(text_wrapped_words("Memory grows by " + amount + " per token."));
    // FLOPs per generated token over t, both ways (cost.h's formulas), in the height that is left.
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
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    line_plot("flops", ser, &xs_, ImVec2(avail.x, std::max(ImGui::GetFontSize() * 4, avail.y - 2)), c.fonts,
              "kFLOP per token vs. t", false, "t =");
  }

  Heatmap maps_[4];
  std::vector<std::string> dims_, xs_;
  std::vector<float> cached_, uncached_;
  bool all_heads_ = false;
};

}  // namespace

std::unique_ptr<Panel> make_kv_cache_panel() { return std::make_unique<KvCachePanel>(); }

}  // namespace sf::gui
