// qkv.cpp — "Q, K, V": the query, key and value vectors of the chosen head as heat strips, and for
// the hovered (or pinned) attention cell the whole computation written out with the recorded
// numbers: q·k, ÷ √d_k, + mask, softmax over the row.
//
// [SECTION] Q, K, V matrices
// [SECTION] one cell, step by step
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/worked_attention.h"
#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class QkvPanel : public Panel {
 public:
  QkvPanel() : Panel({"Q, K, V", "qkv", ImVec4(0.66f, 0.40f, 0.34f, 0.60f), true}) {}

  const Heatmap* main_heatmap() const override { return &q_; }

  void Draw(Ctx& c) override {
    const AttnView* v = selected_attention(c);
    if (!v) {
      ImGui::TextDisabled("not computed yet at this stage");
      return;
    }
    if (ImGui::BeginTabBar("qkvtabs")) {
      if (ImGui::BeginTabItem("One cell, step by step")) {
        draw_cell(c, *v);
        ImGui::EndTabItem();
      }
      if (ImGui::BeginTabItem("Q, K, V of the head")) {
        draw_matrices(c, *v);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
  }

 private:
  // [SECTION] Q, K, V matrices
  void draw_matrices(Ctx& c, const AttnView& v) {
    const int dk = kind_d_k(c.snap.model->config, v.kind), h = c.ui.head;
    const AttentionTrace& a = v.trace();
    const int kvh = a.kv_head(h);  // grouped-query attention: the K/V head this query head reads
    const Mat q = a.q.middleCols(h * dk, dk), k = a.k.middleCols(kvh * dk, dk), val = a.v.middleCols(kvh * dk, dk);
    float lo = 0, hi = 0, l2, h2;
    symmetric_range(q.data(), static_cast<size_t>(q.size()), lo, hi);
    symmetric_range(k.data(), static_cast<size_t>(k.size()), l2, h2);
    hi = std::max(hi, h2);
    symmetric_range(val.data(), static_cast<size_t>(val.size()), l2, h2);
    hi = std::max(hi, h2);
    lo = -hi;
    const uint64_t key = mix_key(mix_key(c.snap.generation, reinterpret_cast<uintptr_t>(&v)), static_cast<uint64_t>(h));
    q_.update(q.data(), static_cast<int>(q.rows()), dk, key, Colormap::Diverging, lo, hi);
    k_.update(k.data(), static_cast<int>(k.rows()), dk, key, Colormap::Diverging, lo, hi);
    v_.update(val.data(), static_cast<int>(val.rows()), dk, key, Colormap::Diverging, lo, hi);
    const std::vector<std::string> dims = numbered(dk);
    const float fs = ImGui::GetFontSize();
    const float w = (ImGui::GetContentRegionAvail().x - fs) / 3.0f;
    const float hgt = ImGui::GetContentRegionAvail().y - fs * 4;
    const auto one = [&](const char* id, const char* title, Heatmap& hm, const std::vector<std::string>& rows,
                         int sel) {
      ImGui::BeginGroup();
      ImGui::TextUnformatted(title);
      HeatmapOpts o;
      o.row_labels = &rows;
      o.col_labels = &dims;
      o.max_size = ImVec2(w, hgt);
      o.square = true;
      o.max_cell = 40;
      o.fonts = &c.fonts;
      o.sel_row = sel;
      o.sel_col = -1;
      const HeatmapHit hit = heatmap_widget(id, hm, o);
      if (&hm == &q_) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
      if (hit.hovered)
        ImGui::SetTooltip("%s[%d '%s'][%d] = %s", title, hit.row, rows[static_cast<size_t>(hit.row)].c_str(), hit.col,
                          fmt_value(hm.at(hit.row, hit.col), 4).c_str());
      ImGui::EndGroup();
    };
    char tq[64], tk[64], tv[64];
    const bool grouped = a.n_kv_heads > 0 && a.n_kv_heads < a.n_heads;
    std::snprintf(tq, sizeof tq, "Q_%d (%ld × %d)", h, static_cast<long>(q.rows()), dk);
    std::snprintf(tk, sizeof tk, "K_%d (%ld × %d)%s", kvh, static_cast<long>(k.rows()), dk, grouped ? " shared" : "");
    std::snprintf(tv, sizeof tv, "V_%d (%ld × %d)%s", kvh, static_cast<long>(val.rows()), dk, grouped ? " shared" : "");
    one("q", tq, q_, v.q_labels(), c.ui.cell_row);
    ImGui::SameLine();
    one("k", tk, k_, v.k_labels(), c.ui.cell_col);
    ImGui::SameLine();
    one("v", tv, v_, v.k_labels(), c.ui.cell_col);
    colour_bar(bar_, Colormap::Diverging, lo, hi, fs * 10, "value");
    if (grouped)
      ImGui::TextDisabled(
          "query head %d: columns %d..%d of Q (%d heads); it reads K/V head %d: columns %d..%d of K and V, which have "
          "%d heads (grouped-query attention: %d query heads share each)",
          h, h * dk, (h + 1) * dk - 1, a.n_heads, kvh, kvh * dk, (kvh + 1) * dk - 1, a.n_kv_heads,
          a.n_heads / a.n_kv_heads);
    else
      ImGui::TextDisabled("head %d uses columns %d..%d of Q, K, V (d_k = %d)", h, h * dk, (h + 1) * dk - 1, dk);
  }

  // [SECTION] one cell, step by step
  void strip(Ctx& c, const char* id, Heatmap& hm, const float* data, int n, uint64_t key, float lo, float hi,
             const std::vector<std::string>* cols, const char* label, int sel = -1) {
    const float fs = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::PushFont(c.fonts.mono);
    ImGui::TextUnformatted(label);
    ImGui::PopFont();
    ImGui::SameLine(fs * 6.5f);
    hm.update(data, 1, n, key, Colormap::Diverging, lo, hi);
    HeatmapOpts o;
    o.col_labels = cols;
    o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, fs * 4.2f);
    o.square = false;
    o.max_cell = 64;
    o.max_cell_h = fs * 1.5f;
    o.min_cell = 4;
    o.show_values = true;
    o.fonts = &c.fonts;
    o.sel_col = sel;
    o.sel_row = sel >= 0 ? 0 : -1;
    const HeatmapHit hit = heatmap_widget(id, hm, o);
    strip_rect_ = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    if (hit.hovered) ImGui::SetTooltip("%s[%d] = %s", label, hit.col, fmt_value(hm.at(0, hit.col), 5).c_str());
  }

  void draw_cell(Ctx& c, const AttnView& v) {
    const int h = c.ui.head;
    const AttentionTrace& a = v.trace();
    const HeadMap head = v.head(h);
    const int nq = static_cast<int>(a.masks[0].rows()), nk = static_cast<int>(a.masks[0].cols());
    int i = c.ui.cell_row, j = c.ui.cell_col;
    if (i < 0 || j < 0 || i >= nq || j >= nk) {
      // Nothing hovered: explain the newest row's strongest key.
      i = v.new_rows > 0 ? v.new_row0 + v.new_rows - 1 : nq - 1;
      head.weights.row(i).maxCoeff(&j);
      char b[160];
      std::snprintf(b, sizeof b, "hover or click a cell of the Attention heatmap; showing row %d's strongest key", i);
      text_coloured_wrapped(palette().text_dim, b);
    } else {
      text_coloured_wrapped(palette().text_dim,
                            c.ui.cell_pinned ? "pinned cell (click it again in Attention to unpin)" : "hovered cell");
    }
    const Palette& pal = palette();
    ImGui::PushFont(c.fonts.bold);
    ImGui::Text("query %d '%s'  →  key %d '%s'", i, v.q_labels()[static_cast<size_t>(i)].c_str(), j,
                v.k_labels()[static_cast<size_t>(j)].c_str());
    ImGui::PopFont();
    if (a.n_kv_heads > 0 && a.n_kv_heads < a.n_heads) {  // grouped-query attention
      ImGui::SameLine();
      ImGui::TextDisabled("  q from query head %d, k from the K/V head %d it shares", h, a.kv_head(h));
    }

    // The arithmetic is core's (analysis/worked_attention.h); the panel writes it out.
    const AttentionCell cell = attention_cell(a, head.raw, head.weights, h, i, j);
    const int dk = cell.d_k;
    float lo, hi;
    std::vector<float> all = cell.q;
    all.insert(all.end(), cell.k.begin(), cell.k.end());
    symmetric_range(all.data(), all.size(), lo, hi);
    const std::vector<std::string> dims = numbered(dk);
    const uint64_t key =
        mix_key(mix_key(mix_key(c.snap.generation, reinterpret_cast<uintptr_t>(&v)), static_cast<uint64_t>(h)),
                static_cast<uint64_t>(i * 100003 + j));
    strip(c, "qi", qs_, cell.q.data(), dk, key, lo, hi, &dims, "q_i");
    heat_rect = strip_rect_;
    strip(c, "kj", ks_, cell.k.data(), dk, key, lo, hi, &dims, "k_j");
    float plo, phi;
    symmetric_range(cell.prod.data(), cell.prod.size(), plo, phi);
    strip(c, "qk", ps_, cell.prod.data(), dk, key, plo, phi, &dims, "q_i⊙k_j");

    const float raw = cell.raw, sc = cell.scaled, w = cell.weight;
    ImGui::Spacing();
    // The arithmetic, one line per step, in a monospace font made smaller when the widest line
    // would not fit the panel (a wrapped number would break after its decimal point) or the
    // lines would not fit its height.
    struct Line {
      std::string text;
      ImU32 colour;
    };
    std::vector<Line> lines;
    const auto line = [&](ImU32 col, const std::string& t) { lines.push_back({t, col}); };
    char b[256];
    // 1. the dot product, term by term (first terms, then the total)
    std::string terms;
    for (int t = 0; t < std::min(dk, 2); ++t)
      terms += (t ? " + " : "") + std::string("(") + fmt_value(cell.q[static_cast<size_t>(t)], 2) + ")(" +
               fmt_value(cell.k[static_cast<size_t>(t)], 2) + ")";
    if (dk > 2) terms += " + …";
    std::snprintf(b, sizeof b, "1. q·k = Σ_c q[c]·k[c]   (c = 0 … %d)", dk - 1);
    line(pal.text, b);
    line(pal.text, "       = " + terms + " = " + fmt_value(cell.dot, 4));
    bool done = !cell.computed;
    if (!done) {
      line(pal.text_dim, "   recorded raw score: " + fmt_value(raw, 4));
      std::snprintf(b, sizeof b, "2. ÷ √d_k = %s / √%d = %s / %.3f = %s", fmt_value(raw, 4).c_str(), dk,
                    fmt_value(raw, 4).c_str(), static_cast<double>(cell.sqrt_dk), fmt_value(sc, 4).c_str());
      line(pal.text, b);
      if (cell.masked) {
        line(pal.error, "3. + mask = " + fmt_value(sc, 4) + " + (−∞) = −∞   (masked key)");
        line(pal.text, "4. softmax: exp(−∞) = 0, so the weight is exactly " + fmt_value(w, 4));
        done = true;
      } else {
        line(pal.text, "3. + mask = " + fmt_value(sc, 4) + " + 0 = " + fmt_value(sc, 4) + "   (visible key)");
      }
    }
    if (!done) {
      // 4. softmax over the row: the scores of every visible key, max subtracted.
      std::snprintf(b, sizeof b, "4. softmax over the %d visible keys of row %d,", cell.visible, i);
      line(pal.text, b);
      line(pal.text, "   m = max_j s_j = " + fmt_value(cell.row_max, 4) + ":");
      line(pal.text, "   exp(" + fmt_value(sc, 3) + " − " + fmt_value(cell.row_max, 3) + ") / Σ_j exp(s_j − m)");
      line(pal.text, "   = " + fmt_value(cell.exp_cell, 4) + " / " + fmt_value(cell.exp_sum, 4) + " = " +
                         fmt_value(cell.softmax, 4));
      line(pal.text_dim, "   recorded weight: " + fmt_value(w, 4));
    }
    ImGui::PushFont(c.fonts.mono);
    float widest = 0;
    for (const Line& l : lines) widest = std::max(widest, ImGui::CalcTextSize(l.text.c_str()).x);
    // Also smaller when the lines would run past the bottom (the softmax's result is the last).
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float tall = static_cast<float>(lines.size()) * ImGui::GetTextLineHeightWithSpacing();
    const float fit =
        std::clamp(std::min(avail.x / std::max(1.0f, widest), avail.y / std::max(1.0f, tall)), 0.6f, 1.0f);
    ImGui::SetWindowFontScale(fit);
    for (const Line& l : lines) {
      ImGui::PushStyleColor(ImGuiCol_Text, l.colour);
      ImGui::TextUnformatted(l.text.c_str());
      note_item("arithmetic " + l.text);
      ImGui::PopStyleColor();
    }
    ImGui::SetWindowFontScale(1.0f);
    ImGui::PopFont();
    if (std::isnan(raw)) {
      text_coloured_wrapped(
          pal.warn,
          "This key did not exist when the query ran (a cached decoding step scores only the keys in "
          "the cache): in a full run the causal mask would set it to −∞ and its weight to exactly 0.");
      return;
    }
    if (done) return;

    // The whole row of masked scores and weights, with this cell marked.
    const std::vector<float>& masked = cell.row;
    const RowVec wrow = head.weights.row(i);
    ImGui::Spacing();
    float slo, shi;
    symmetric_range(masked.data(), masked.size(), slo, shi);
    strip(c, "row", rs_, masked.data(), nk, key, slo, shi, &v.k_labels(), "s_i + mask", j);
    ImGui::AlignTextToFramePadding();
    ImGui::PushFont(c.fonts.mono);
    ImGui::TextUnformatted("weights");
    ImGui::PopFont();
    ImGui::SameLine(ImGui::GetFontSize() * 6.5f);
    ws_.update(wrow.data(), 1, nk, key, Colormap::Viridis, 0.0f, 1.0f);
    HeatmapOpts o;
    o.col_labels = &v.k_labels();
    o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4.2f);
    o.square = false;
    o.max_cell = 64;
    o.max_cell_h = ImGui::GetFontSize() * 1.5f;
    o.min_cell = 4;
    o.show_values = true;
    o.fonts = &c.fonts;
    o.sel_row = 0;
    o.sel_col = j;
    heatmap_widget("wrow", ws_, o);
  }

  Heatmap q_, k_, v_, bar_, qs_, ks_, ps_, rs_, ws_;
  ImVec4 strip_rect_{0, 0, 0, 0};
};

}  // namespace

std::unique_ptr<Panel> make_qkv_panel() { return std::make_unique<QkvPanel>(); }

}  // namespace sf::gui
