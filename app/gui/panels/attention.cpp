// attention.cpp — "Attention": the weights of one layer, head and kind as a heatmap with token
// labels on both axes and a per-row entropy bar; hovering a cell explains it (weight, raw score
// q·k, scaled score, mask, softmax). A model view shows every layer × head as thumbnails (click
// one to open it) and a head view draws BertViz-style lines between the tokens. The rollout view
// shows how much of each position's stream comes from each token through the self-attention
// layers up to the chosen one (Abnar & Zuidema 2020; the numbers are core/analysis/rollout's).
//
// [SECTION] selection bar
// [SECTION] heatmap view
// [SECTION] model view
// [SECTION] head view
// [SECTION] rollout view
#include <algorithm>
#include <cmath>

#include "app.h"
#include "gfx/imgui_math.h"
#include "analysis/layer_stats.h"
#include "analysis/rollout.h"
#include "stepper/cost.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class AttentionPanel : public Panel {
 public:
  AttentionPanel() : Panel({"Attention", "attention", ImVec4(0.24f, 0.40f, 0.42f, 0.60f), true}) {}

  const Heatmap* main_heatmap() const override { return &heat_; }

  void Draw(Ctx& c) override {
    // On a projector height is what the map lacks: the controls go to a column at its right.
    if (c.ui.presentation && c.ui.attn_mode == AttnMode::Heatmap) {
      // The column is as wide as its widest line: the three mode tabs, or the colour bar.
      const ImGuiStyle& st = ImGui::GetStyle();
      float tabs = st.ItemSpacing.x * 2;
      for (const char* t : {"Heatmap", "Model", "Heads"}) tabs += ImGui::CalcTextSize(t).x + st.FramePadding.x * 2;
      const float fs = ImGui::GetFontSize(), side_w = std::max(fs * 11, tabs);
      const float ends_w = ImGui::CalcTextSize("0.00 … 0.00").x + st.ItemSpacing.x * 3;
      ImGui::BeginChild("map", ImVec2(std::max(fs * 8, ImGui::GetContentRegionAvail().x - side_w - fs * 0.5f), 0),
                        false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
      draw_heatmap(c, true);
      ImGui::EndChild();
      ImGui::SameLine();
      ImGui::BeginGroup();
      draw_selection(c, side_w);
      ImGui::Spacing();
      colour_bar(cbar_, Colormap::Viridis, 0.0f, hi_, side_w - ImGui::CalcTextSize("weight").x - ends_w, "weight");
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side_w);
      ImGui::TextDisabled("hatched = masked (−∞); click a cell to pin it for Q, K, V");
      ImGui::PopTextWrapPos();
      ImGui::EndGroup();
      return;
    }
    draw_selection(c);
    ImGui::Separator();
    switch (c.ui.attn_mode) {
      case AttnMode::Heatmap:
        draw_heatmap(c);
        break;
      case AttnMode::Model:
        draw_model_view(c);
        break;
      case AttnMode::Head:
        draw_head_view(c);
        break;
      case AttnMode::Rollout:
        draw_rollout(c);
        break;
    }
  }

 private:
  // [SECTION] selection bar
  // In a row, or (column > 0) one control under another in a column that wide.
  void draw_selection(Ctx& c, float column = 0) {
    UiState& ui = c.ui;
    const Config& m = c.snap.model->config;
    const float fs = ImGui::GetFontSize();
    const bool col = column > 0;
    const auto next = [&](float spacing = -1.0f) {
      if (!col) ImGui::SameLine(0, spacing);
    };
    // Mode tabs.
    const char* modes[] = {"Heatmap", "Model view", "Head view", "Rollout"};
    const char* short_modes[] = {"Heatmap", "Model", "Heads", "Roll"};
    for (int i = 0; i < 4; ++i) {
      if (i) ImGui::SameLine();  // the tabs stay on one line
      const bool on = static_cast<int>(ui.attn_mode) == i;
      if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
      if (ImGui::Button(col ? short_modes[i] : modes[i])) ui.attn_mode = static_cast<AttnMode>(i);
      if (on) ImGui::PopStyleColor();
      if (i == 3 && ImGui::IsItemHovered())
        ImGui::SetTooltip("attention rollout (Abnar & Zuidema 2020): how much of each position comes from each token");
    }
    next(fs * 1.5f);
    ImGui::Checkbox(col ? "follow" : "follow stepper", &ui.follow_stage);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the attention sublayer the stepper is on");

    // Kind, layer, head.
    const std::vector<AttnKind> kinds = attention_kinds(m);
    ImGui::SetNextItemWidth(col ? column : fs * 13);
    if (ImGui::BeginCombo("##kind", to_string(ui.kind))) {
      for (AttnKind k : kinds)
        if (ImGui::Selectable(to_string(k), k == ui.kind)) ui.kind = k, ui.follow_stage = false;
      ImGui::EndCombo();
    }
    const int layers = kind_layers(m, ui.kind);
    ui.layer = std::clamp(ui.layer, 0, std::max(0, layers - 1));
    ui.head = std::clamp(ui.head, 0, kind_heads(m, ui.kind) - 1);
    if (ui.attn_mode != AttnMode::Model) {
      next();
      ImGui::SetNextItemWidth(col ? column - fs * 3.5f : fs * 6);
      if (ImGui::SliderInt("layer", &ui.layer, 0, std::max(0, layers - 1))) ui.follow_stage = false;
      if (ui.attn_mode == AttnMode::Heatmap || (ui.attn_mode == AttnMode::Head && !ui.head_view_all)) {
        next();
        ImGui::SetNextItemWidth(col ? column - fs * 3.5f : fs * 6);
        ImGui::SliderInt("head", &ui.head, 0, kind_heads(m, ui.kind) - 1);
      }
    }
    if (ui.attn_mode == AttnMode::Heatmap || ui.attn_mode == AttnMode::Rollout) {
      next();
      ImGui::Checkbox("values", &ui.show_values);
      ImGui::SameLine();
      ImGui::Checkbox("stretch", &stretch_);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("colour scale from 0 to the largest weight instead of 0 to 1");
    }
    if (ui.attn_mode == AttnMode::Head) {
      ImGui::SameLine();
      ImGui::Checkbox("all heads", &ui.head_view_all);
    }
  }

  const AttnView* selected(Ctx& c) const { return c.snap.attn_view(c.ui.kind, c.ui.layer); }

  void not_yet(Ctx& c) {
    ImGui::Spacing();
    ImGui::TextWrapped("%s, layer %d: not computed yet at this stage.", to_string(c.ui.kind), c.ui.layer);
    ImGui::TextDisabled("Step forward (→) until the stepper reaches it.");
  }

  // [SECTION] heatmap view
  // `side`: the controls, colour bar and hint are in the column beside (presentation mode).
  void draw_heatmap(Ctx& c, bool side = false) {
    UiState& ui = c.ui;
    const AttnView* v = selected(c);
    if (!v) return not_yet(c);
    const AttentionTrace& a = v->trace();
    const Mat& w = v->head(ui.head).weights;
    const Config& m = c.snap.model->config;
    // Once per map (a view's data is shared by the snapshots whose rows did not change) and colour
    // scale, not per frame: the colour scale's top, the texture with masked cells (weight exactly
    // 0) drawn hatched so the mask's shape shows, and the rows' entropies. A frame then costs the
    // same for a 1024 × 1024 map as for a small one.
    const uint64_t key =
        mix_key(mix_key(reinterpret_cast<uintptr_t>(v->data.get()), static_cast<uint64_t>(ui.head)), stretch_ ? 1 : 2);
    if (shown_data_ != v->data || shown_key_ != key) {
      shown_hi_ = stretch_ ? std::max(1e-6f, w.maxCoeff()) : 1.0f;
      Mat shown = w;
      for (Eigen::Index i = 0; i < shown.rows(); ++i)
        for (Eigen::Index j = 0; j < shown.cols(); ++j)
          if (std::isinf(a.masks[0](i, j))) shown(i, j) = a.masks[0](i, j);
      heat_.update(shown.data(), static_cast<int>(shown.rows()), static_cast<int>(shown.cols()), ++heat_uploads_,
                   Colormap::Viridis, 0.0f, shown_hi_);
      entropy_ = row_entropies(w, a.masks[0]);
      shown_data_ = v->data;  // held, so that its address names this map as long as it is shown
      shown_key_ = key;
    }
    const float hi = shown_hi_;
    hi_ = hi;

    // Caption: what this is, with its shape (left out on a projector, where height is scarce).
    if (!ui.presentation) {
      // Grouped-query attention: the K/V head this query head shares with its group.
      if (a.n_kv_heads > 0 && a.n_kv_heads < a.n_heads) {
        const int g = kv_head_of(m, ui.head);
        const std::vector<int> group = query_heads_by_kv_head(m)[static_cast<size_t>(g)];
        ImGui::Text("%s · layer %d · query head %d · K/V head %d (shared by heads %d–%d)", to_string(v->kind), v->layer,
                    ui.head, g, group.front(), group.back());
        ImGui::SameLine();
        ImGui::TextDisabled("weights (%ld × %ld) = softmax(Q_%d K_%dᵀ / √%d + mask)", static_cast<long>(w.rows()),
                            static_cast<long>(w.cols()), ui.head, g, kind_d_k(m, v->kind));
      } else {
        ImGui::Text("%s · layer %d · head %d", to_string(v->kind), v->layer, ui.head);
        ImGui::SameLine();
        ImGui::TextDisabled("weights (%ld × %ld) = softmax(Q_h K_hᵀ / √%d + mask)", static_cast<long>(w.rows()),
                            static_cast<long>(w.cols()), kind_d_k(m, v->kind));
      }
      if (v->new_rows > 0) {
        ImGui::SameLine();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().highlight),
                           v->live ? "● computed now" : "● new row");
      }
    }

    // Heatmap on the left, entropy bars on the right.
    const float fs = ImGui::GetFontSize();
    const float bar_w = fs * 5;
    HeatmapOpts o;
    o.row_labels = &v->q_labels();
    o.col_labels = &v->k_labels();
    o.row_title = "query ↓";
    o.col_title = "key →";
    o.show_values = ui.show_values;
    o.inf_text = "0";
    o.new_row0 = v->new_row0;
    o.new_rows = v->new_rows;
    o.fonts = &c.fonts;
    o.max_size = ImVec2(ImGui::GetContentRegionAvail().x - bar_w,
                        ImGui::GetContentRegionAvail().y - (side ? fs * 0.3f : fs * 1.8f));
    if (ui.cell_pinned) o.sel_row = ui.cell_row, o.sel_col = ui.cell_col;
    const HeatmapHit hit = heatmap_widget("attn", heat_, o);
    heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    const ImVec2 after = ImGui::GetCursorScreenPos();

    // Entropy per row (core/analysis/layer_stats.h, the numbers the compare view shows).
    const RowEntropies& e = entropy_;
    const std::vector<float>&h = e.entropy, &hmax = e.max;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float ch = (hit.max.y - hit.min.y) / static_cast<float>(std::max<Eigen::Index>(1, w.rows()));
    const float x0 = hit.max.x + fs * 0.6f;
    const float full = bar_w - fs * 1.2f;
    dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(x0, hit.min.y - c.fonts.small->FontSize - 3),
                palette().text_dim, "entropy");
    for (size_t i = 0; i < h.size(); ++i) {
      const float y0 = hit.min.y + ch * static_cast<float>(i), y1 = y0 + ch;
      const float frac = hmax[i] > 0 ? std::clamp(h[i] / hmax[i], 0.0f, 1.0f) : 0.0f;
      dl->AddRectFilled(ImVec2(x0, y0 + ch * 0.15f), ImVec2(x0 + full, y1 - ch * 0.15f), IM_COL32(128, 128, 128, 50));
      dl->AddRectFilled(ImVec2(x0, y0 + ch * 0.15f), ImVec2(x0 + full * frac, y1 - ch * 0.15f), palette().accent2);
      if (ImGui::IsMouseHoveringRect(ImVec2(x0, y0), ImVec2(x0 + full, y1)))
        ImGui::SetTooltip(
            "row %zu '%s'\nentropy H = −Σ p·ln p = %.3f nats\nmaximum ln(%d visible keys) = %.3f\n"
            "low: the query looks at few keys; high: it spreads its attention",
            i, v->q_labels()[i].c_str(), h[i], e.visible[i], hmax[i]);
    }
    ImGui::SetCursorScreenPos(after);
    if (!side) {
      colour_bar(cbar_, Colormap::Viridis, 0.0f, hi, fs * 10, "weight");
      ImGui::SameLine(0, fs);
      ImGui::TextDisabled("hatched = masked (−∞)   click a cell to pin it for Q, K, V");
    }

    // Hover: explain the cell; click pins it for the Q, K, V and Masks panels.
    if (hit.hovered) {
      if (!ui.cell_pinned) ui.cell_row = hit.row, ui.cell_col = hit.col;
      if (hit.clicked) {
        const bool same = ui.cell_pinned && ui.cell_row == hit.row && ui.cell_col == hit.col;
        ui.cell_pinned = !same;
        ui.cell_row = hit.row, ui.cell_col = hit.col;
      }
      cell_tooltip(c, *v, hit.row, hit.col);
    }
  }

  void cell_tooltip(Ctx& c, const AttnView& v, int i, int j) {
    const int hd = c.ui.head;
    const AttentionTrace& a = v.trace();
    const HeadMap head = v.head(hd);
    const int dk = kind_d_k(c.snap.model->config, v.kind);
    const float raw = head.raw(i, j), sc = raw * a.scale;  // AttentionTrace::score
    const float mask = a.masks[0](i, j), wt = head.weights(i, j);
    ImGui::BeginTooltip();
    ImGui::PushFont(c.fonts.bold);
    ImGui::Text("query %d '%s'  →  key %d '%s'", i, v.q_labels()[static_cast<size_t>(i)].c_str(), j,
                v.k_labels()[static_cast<size_t>(j)].c_str());
    ImGui::PopFont();
    ImGui::PushFont(c.fonts.mono);
    if (std::isnan(raw)) {
      ImGui::TextUnformatted("not computed: this key did not exist yet when the query ran");
      ImGui::Text("(a cached decoding step only scores the keys it has; the causal mask hides the rest)");
    } else {
      ImGui::Text("raw score   q·k          = %s", fmt_value(raw, 4).c_str());
      ImGui::Text("scaled      q·k / √%-2d     = %s", dk, fmt_value(sc, 4).c_str());
      ImGui::Text("mask                     = %s  %s", fmt_value(mask, 0).c_str(),
                  std::isinf(mask) ? "(masked: future token or <pad>)" : "(visible)");
      ImGui::Text("masked      score + mask = %s", fmt_value(std::isinf(mask) ? mask : sc + mask, 4).c_str());
    }
    ImGui::Text("softmax     weight       = %s", fmt_value(wt, 4).c_str());
    ImGui::PopFont();
    if (!v.q_step().empty() && v.q_step()[static_cast<size_t>(i)] >= 0)
      ImGui::TextDisabled("row computed at decoder step %d", v.q_step()[static_cast<size_t>(i)]);
    ImGui::TextDisabled("the Q, K, V panel writes this out with every number");
    ImGui::EndTooltip();
  }

  // [SECTION] model view
  void draw_model_view(Ctx& c) {
    UiState& ui = c.ui;
    const Config& m = c.snap.model->config;
    const int layers = kind_layers(m, ui.kind);
    const int H = kind_heads(m, ui.kind);
    auto& thumbs = thumbs_[static_cast<int>(ui.kind)];
    if (static_cast<int>(thumbs.size()) != layers * H) {
      thumbs.clear();
      thumbs.resize(static_cast<size_t>(layers * H));
    }
    ImFont* small = c.fonts.small;
    const float sfs = small->FontSize;
    const float label_w = small->CalcTextSizeA(sfs, FLT_MAX, 0, "L00 ").x;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float gap = std::max(3.0f, ImGui::GetFontSize() * 0.25f);
    // Thumbnails up to 6.5 lines of text high: enough to read a pattern (click one for the full
    // map), and small enough that a big model's grid stays cheap to draw; a small model's few
    // maps (at most 16) may take twice that, so a projector shows them large.
    const float cap = ImGui::GetFontSize() * (layers * H <= 16 ? 13.0f : 6.5f);
    const float cell =
        std::clamp(std::min((avail.x - label_w) / H - gap, (avail.y - sfs * 4.0f) / layers - gap), 8.0f, cap);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Palette& pal = palette();
    for (int h = 0; h < H; ++h) {
      const std::string t = "head " + std::to_string(h);
      const std::string ts = "h" + std::to_string(h);
      const char* txt = small->CalcTextSizeA(sfs, FLT_MAX, 0, t.c_str()).x < cell ? t.c_str() : ts.c_str();
      dl->AddText(small, sfs, ImVec2(p.x + label_w + h * (cell + gap), p.y), pal.text_dim, txt);
    }
    const float y0 = p.y + sfs + 4;
    // The thumbnails ready are coloured first, then copied into one atlas texture and drawn from it
    // (one texture for the whole grid). Each is scaled to its own maximum (as BertViz's model
    // view): with many tokens the weights are small and a fixed 0..1 scale would show every map
    // nearly black. Coloured when the thumbnail changes (its address, while the snapshot holds
    // it), not per frame.
    int atlas_w = 0, atlas_h = 0;
    for (int l = 0; l < layers; ++l) {
      const AttnView* v = c.snap.attn_view(ui.kind, l);
      for (int h = 0; v && h < H && h < v->trace().n_heads; ++h) {
        const HeadThumbnail* tp = v->thumb(h);
        if (!tp) continue;
        const Mat& w = tp->map;
        Heatmap& hm = thumbs[static_cast<size_t>(l * H + h)];
        hm.update(w.data(), static_cast<int>(w.rows()), static_cast<int>(w.cols()),
                  mix_key(c.snap.generation, reinterpret_cast<uintptr_t>(tp)), Colormap::Viridis, 0.0f,
                  std::max(1e-6f, tp->max), std::max(64, static_cast<int>(cell)));
        atlas_w = std::max(atlas_w, hm.width_px()), atlas_h = std::max(atlas_h, hm.height_px());
      }
    }
    HeatmapAtlas& atlas = atlas_[static_cast<int>(ui.kind)];
    const bool use_atlas = atlas_w > 0 && atlas.fit(layers * H, atlas_w, atlas_h);
    // Thumbnails are computed on the worker's thumbnail thread, for the views that lack them (on a
    // long input a thumbnail is a whole map computed and shrunk); until then a cell shows "…".
    std::vector<std::shared_ptr<const AttnData>> missing;
    for (int l = 0; l < layers; ++l) {
      const std::string t = "L" + std::to_string(l);
      dl->AddText(small, sfs, ImVec2(p.x, y0 + l * (cell + gap) + cell * 0.5f - sfs * 0.5f), pal.text_dim, t.c_str());
      const AttnView* v = c.snap.attn_view(ui.kind, l);
      for (int h = 0; h < H; ++h) {
        const ImVec2 a(p.x + label_w + h * (cell + gap), y0 + l * (cell + gap)), b(a.x + cell, a.y + cell);
        if (!v) {
          dl->AddRectFilled(a, b, pal.stage_todo);
          continue;
        }
        if (h >= v->trace().n_heads) continue;
        // The map shrunk in core (each cell the largest weight of its block): a long input's 144
        // maps are drawn from thumbnails, never uploaded whole.
        const HeadThumbnail* tp = v->thumb(h);
        if (!tp) {
          if (missing.empty() || missing.back() != v->data) missing.push_back(v->data);
          dl->AddRectFilled(a, b, pal.stage_todo);
          const ImVec2 ts = small->CalcTextSizeA(sfs, FLT_MAX, 0, "…");
          dl->AddText(small, sfs, ImVec2(a.x + (cell - ts.x) * 0.5f, a.y + (cell - ts.y) * 0.5f), pal.text_dim, "…");
          continue;
        }
        const HeadThumbnail& th = *tp;
        const Heatmap& hm = thumbs[static_cast<size_t>(l * H + h)];
        // Keep the map's aspect ratio inside the square.
        const float rw = static_cast<float>(th.cols), rh = static_cast<float>(th.rows);
        const float k = cell / std::max(rw, rh);
        const ImVec2 a2(a.x, a.y), b2(a.x + rw * k, a.y + rh * k);
        ImVec2 uv0, uv1;
        if (use_atlas && atlas.put(l * H + h, hm, uv0, uv1))
          dl->AddImage(atlas.texture(), a2, b2, uv0, uv1);
        else
          dl->AddImage(hm.texture(), a2, b2);
        drawn_heatmaps().note(hm);
        const bool sel = l == ui.layer && h == ui.head;
        if (ImGui::IsMouseHoveringRect(a, b)) {
          dl->AddRect(a2 - ImVec2(2, 2), b2 + ImVec2(2, 2), IM_COL32(255, 255, 255, 255), 0, 0, 2);
          ImGui::SetTooltip("%s · layer %d · head %d\nmean entropy %.3f nats\nclick to open", to_string(ui.kind), l, h,
                            th.mean_entropy);
          if (ImGui::IsMouseClicked(0)) {
            ui.layer = l, ui.head = h;
            ui.attn_mode = AttnMode::Heatmap;
            ui.follow_stage = false;
          }
        }
        if (sel) dl->AddRect(a2 - ImVec2(2, 2), b2 + ImVec2(2, 2), pal.highlight, 0, 0, 2);
        if (v->live) dl->AddRect(a - ImVec2(1, 1), b + ImVec2(1, 1), pal.stage_now, 0, 0, 1);
      }
    }
    if (!missing.empty()) c.worker.want_thumbnails(std::move(missing));
    heat_rect = ImVec4(p.x + label_w, y0, p.x + label_w + H * (cell + gap), y0 + layers * (cell + gap));
    ImGui::Dummy(ImVec2(label_w + H * (cell + gap), sfs + 4 + layers * (cell + gap)));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("rows: layers, columns: heads · %s · each map coloured 0 → its maximum · click to open",
                       to_string(ui.kind));
    ImGui::PopStyleColor();
  }

  // [SECTION] head view
  void draw_head_view(Ctx& c) {
    UiState& ui = c.ui;
    const AttnView* v = selected(c);
    if (!v) return not_yet(c);
    const Config& m = c.snap.model->config;
    const int H = kind_heads(m, ui.kind);
    if (static_cast<int>(head_on_.size()) != H) head_on_.assign(static_cast<size_t>(H), true);
    // Head toggles as coloured squares.
    const float fs = ImGui::GetFontSize();
    for (int h = 0; h < H; ++h) {
      ImGui::PushID(h);
      const bool on = ui.head_view_all ? head_on_[static_cast<size_t>(h)] : h == ui.head;
      ImVec4 col = ImGui::ColorConvertU32ToFloat4(head_colour(h, on ? 1.0f : 0.25f));
      ImGui::PushStyleColor(ImGuiCol_Button, col);
      ImGui::PushStyleColor(ImGuiCol_ButtonHovered, col);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0, 0, 0, 255));
      char lbl[16];
      std::snprintf(lbl, sizeof lbl, "h%d", h);
      if (ImGui::Button(lbl, ImVec2(fs * 2.2f, 0))) {
        if (ui.head_view_all)
          head_on_[static_cast<size_t>(h)] = !head_on_[static_cast<size_t>(h)];
        else
          ui.head = h;
      }
      ImGui::PopStyleColor(3);
      ImGui::PopID();
      ImGui::SameLine();
    }
    ImGui::NewLine();

    std::vector<const Mat*> weights;  // [head] (n_q, n_k)
    for (int h = 0; h < v->trace().n_heads; ++h) weights.push_back(&v->head(h).weights);
    const int nq = static_cast<int>(weights[0]->rows()), nk = static_cast<int>(weights[0]->cols());
    ImFont* f = nq > 24 || nk > 24 ? c.fonts.small : c.fonts.ui;
    const float tfs = f->FontSize;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float row_h = std::min(tfs * 1.6f, (avail.y - tfs) / static_cast<float>(std::max(nq, nk)));
    float lw = 0;
    for (auto& s : v->q_labels()) lw = std::max(lw, f->CalcTextSizeA(tfs, FLT_MAX, 0, s.c_str()).x);
    for (auto& s : v->k_labels()) lw = std::max(lw, f->CalcTextSizeA(tfs, FLT_MAX, 0, s.c_str()).x);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float span = std::min(avail.x - 2 * lw - fs * 2, fs * 22);
    const float xl = p.x + lw + fs * 0.5f, xr = xl + span;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Palette& pal = palette();
    // Which query is hovered: only its lines are drawn.
    int focus = -1;
    for (int i = 0; i < nq; ++i) {
      const float y = p.y + tfs + row_h * (i + 0.5f);
      if (ImGui::IsMouseHoveringRect(ImVec2(p.x, y - row_h * 0.5f), ImVec2(xl, y + row_h * 0.5f))) focus = i;
    }
    dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(p.x, p.y), pal.text_dim, "query");
    dl->AddText(c.fonts.small, c.fonts.small->FontSize, ImVec2(xr + fs * 0.5f, p.y), pal.text_dim, "key");
    for (int i = 0; i < nq; ++i) {
      const float y = p.y + tfs + row_h * (i + 0.5f);
      const std::string& s = v->q_labels()[static_cast<size_t>(i)];
      const float w = f->CalcTextSizeA(tfs, FLT_MAX, 0, s.c_str()).x;
      const bool isnew = i >= v->new_row0 && i < v->new_row0 + v->new_rows;
      dl->AddText(f, tfs, ImVec2(xl - fs * 0.3f - w, y - tfs * 0.5f), focus == i || isnew ? pal.highlight : pal.text,
                  s.c_str());
    }
    for (int j = 0; j < nk; ++j) {
      const float y = p.y + tfs + row_h * (j + 0.5f);
      dl->AddText(f, tfs, ImVec2(xr + fs * 0.3f, y - tfs * 0.5f), pal.text,
                  v->k_labels()[static_cast<size_t>(j)].c_str());
    }
    const float max_th = std::clamp(row_h * 0.3f, 2.0f, 7.0f);
    // Long inputs: every line of every head would be tens of thousands of lines; draw the hovered
    // query only (or the newest row when nothing is hovered).
    const bool dense = static_cast<long>(nq) * nk * (ui.head_view_all ? H : 1) > 20000;
    if (dense && focus < 0) focus = v->new_rows > 0 ? v->new_row0 + v->new_rows - 1 : nq - 1;
    for (int h = 0; h < H; ++h) {
      const bool on = ui.head_view_all ? head_on_[static_cast<size_t>(h)] : h == ui.head;
      if (!on) continue;
      const Mat& w = *weights[static_cast<size_t>(h)];
      for (int i = 0; i < nq; ++i) {
        if (focus >= 0 && i != focus) continue;
        const float y0 = p.y + tfs + row_h * (i + 0.5f);
        for (int j = 0; j < nk; ++j) {
          const float wt = w(i, j);
          if (wt < 0.02f) continue;
          const float y1 = p.y + tfs + row_h * (j + 0.5f);
          const float alpha = std::clamp(0.1f + 0.9f * wt, 0.0f, 1.0f) * (ui.head_view_all ? 0.55f : 0.9f);
          dl->AddLine(ImVec2(xl, y0), ImVec2(xr, y1), head_colour(h, alpha), std::max(1.0f, wt * max_th));
        }
      }
    }
    ImGui::Dummy(ImVec2(xr - p.x + lw + fs, tfs + row_h * std::max(nq, nk)));
    ImGui::TextDisabled(
        dense ? "line thickness = weight · long input: hover a query to see its lines"
              : "line thickness = weight · hover a query to isolate its lines · click h# to toggle heads");
  }

  // [SECTION] rollout view
  // R_l of the self-attention of the chosen kind's stack, through layers 0 … l (the layer slider).
  void draw_rollout(Ctx& c) {
    UiState& ui = c.ui;
    const float fs = ImGui::GetFontSize();
    if (ui.kind == AttnKind::Cross) {
      ImGui::Spacing();
      ImGui::TextWrapped(
          "Rollout follows the self-attention of one stack: cross-attention reads another sequence, so it is "
          "not rolled out.");
      if (ImGui::Button("show the decoder's self-attention")) ui.kind = AttnKind::DecoderSelf, ui.follow_stage = false;
      return;
    }
    const AttnView* top = nullptr;
    for (int l = 0; l <= ui.layer; ++l) {
      top = c.snap.attn_view(ui.kind, l);
      if (!top) return not_yet(c);
    }
    const uint64_t key = mix_key(mix_key(mix_key(c.snap.generation, static_cast<uint64_t>(ui.kind)),
                                         static_cast<uint64_t>(ui.layer) + 1000 * reinterpret_cast<uintptr_t>(top)),
                                 stretch_ ? 1 : 2);
    const bool again = key != rollout_key_;
    if (again) {
      std::vector<std::vector<const Mat*>> layers;  // [layer][head] weights
      for (int l = 0; l <= ui.layer; ++l) {
        const AttnView* v = c.snap.attn_view(ui.kind, l);
        layers.emplace_back();
        for (int h = 0; h < v->trace().n_heads; ++h) layers.back().push_back(&v->head(h).weights);
      }
      const std::vector<Mat> r = attention_rollout(layers);
      rollout_ = r.empty() ? Mat() : r.back();
      rollout_key_ = key;
    }
    if (!ui.presentation) {
      ImGui::Text("%s · rollout through layers 0–%d", to_string(ui.kind), ui.layer);
      ImGui::SameLine();
      ImGui::TextDisabled("(Abnar & Zuidema 2020)");
    }
    ImGui::TextDisabled("%s", rollout_formula());
    if (rollout_.size() == 0) {
      ImGui::TextWrapped(
          "The layers' maps do not cover one whole sequence yet (a decoding step is part-way through the "
          "layers): step on to the end of the step.");
      return;
    }
    if (again || shown_data_) {  // once per rollout, or after the heatmap mode drew its map
      const AttentionTrace& a = top->trace();
      Mat shown = rollout_;  // masked keys drawn hatched, as in the heatmap
      for (Eigen::Index i = 0; i < shown.rows(); ++i)
        for (Eigen::Index j = 0; j < shown.cols(); ++j)
          if (std::isinf(a.masks[0](i, j))) shown(i, j) = a.masks[0](i, j);
      rollout_hi_ = stretch_ ? std::max(1e-6f, rollout_.maxCoeff()) : 1.0f;
      heat_.update(shown.data(), static_cast<int>(shown.rows()), static_cast<int>(shown.cols()), ++heat_uploads_,
                   Colormap::Viridis, 0.0f, rollout_hi_);
      shown_data_.reset();  // heat_ no longer holds the heatmap mode's map
    }
    const float hi = rollout_hi_;
    hi_ = hi;
    HeatmapOpts o;
    o.row_labels = &top->q_labels();
    o.col_labels = &top->k_labels();
    o.row_title = "position ↓";
    o.col_title = "token it draws on →";
    o.show_values = ui.show_values;
    o.inf_text = "0";
    o.fonts = &c.fonts;
    o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - fs * 1.8f);
    const HeatmapHit hit = heatmap_widget("rollout", heat_, o);
    heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
    colour_bar(cbar_, Colormap::Viridis, 0.0f, hi, fs * 10, "share");
    ImGui::SameLine(0, fs);
    ImGui::TextDisabled("each row sums to 1 · ½ of every layer is the residual path (the identity)");
    if (hit.hovered && hit.row >= 0 && hit.col >= 0)
      ImGui::SetTooltip(
          "position %d '%s' after layer %d:\n%.3f of its stream traces back to token %d '%s'\n"
          "(the attention of layers 0–%d, averaged over heads, each mixed ½ : ½ with the residual path)",
          hit.row, top->q_labels()[static_cast<size_t>(hit.row)].c_str(), ui.layer, rollout_(hit.row, hit.col), hit.col,
          top->k_labels()[static_cast<size_t>(hit.col)].c_str(), ui.layer);
  }

  Heatmap heat_, cbar_;
  uint64_t heat_uploads_ = 0;  // heat_'s key: one per upload (heatmap and rollout share it)
  // The map heat_ holds in heatmap mode: its view's data (held) and head and stretch, its colour
  // scale's top and its rows' entropies.
  std::shared_ptr<const AttnData> shown_data_;
  uint64_t shown_key_ = 0;
  float shown_hi_ = 1.0f;
  RowEntropies entropy_;
  Mat rollout_;  // (n, n) R_l of the last rollout drawn
  uint64_t rollout_key_ = 0;
  float rollout_hi_ = 1.0f;
  std::vector<Heatmap> thumbs_[kAttnKinds];
  HeatmapAtlas atlas_[kAttnKinds];  // the thumbnails' copies drawn
  std::vector<bool> head_on_;
  bool stretch_ = false;
  float hi_ = 1.0f;  // the colour scale's top of the last map drawn
};

}  // namespace

std::unique_ptr<Panel> make_attention_panel() { return std::make_unique<AttentionPanel>(); }

}  // namespace sf::gui
