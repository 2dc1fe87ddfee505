// inspect_panel.cpp — the Inspect panel's tabs (inspect_panel.h). The panel only draws: the lens,
// attribution, detector scores and rollout are core/analysis's, computed on the panel's worker.
//
// [SECTION] panel and worker
// [SECTION] logit lens
// [SECTION] direct logit attribution
// [SECTION] head detectors
// [SECTION] attention rollout
#include "inspect_panel.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>

#include "analysis/rollout.h"
#include "gfx/style.h"
#include "app.h"
#include "io/atomic_file.h"
#include "widgets.h"

namespace sf::gui {

const char* to_string(InspectTab t) {
  switch (t) {
    case InspectTab::Lens:
      return "lens";
    case InspectTab::Attribution:
      return "attribution";
    case InspectTab::Heads:
      return "heads";
    case InspectTab::Rollout:
      return "rollout";
    case InspectTab::Ablation:
      return "ablation";
    case InspectTab::Patching:
      return "patching";
  }
  return "?";
}

// [SECTION] panel and worker

InspectPanel::InspectPanel() : Panel({"Inspect", "inspect", ImVec4(0.22f, 0.04f, 0.56f, 0.92f)}) {}

void InspectPanel::ensure_worker() {
  if (!worker_) worker_ = std::make_unique<InspectWorker>([] { glfwPostEmptyEvent(); });
}

void InspectPanel::sync(const Snapshot& s) {
  ensure_worker();
  InspectInput in = inspect_input(s);
  if (in.model && !in.same(posted_)) {
    posted_ = in;
    pin_point_ = pin_pos_ = -1;
    last_ticket_ = worker_->post([in](InspectEngine& e) { e.record(in); });
    if (!abl_sel_.empty()) post_ablation();  // the same heads removed from the new input
  }
  if (want_detect_ && want_detect_ != detect_posted_) {
    detect_posted_ = want_detect_;
    const int r = detect_r_;
    const uint64_t seed = static_cast<uint64_t>(detect_seed_);
    auto m = want_detect_;
    last_ticket_ = worker_->post([m, r, seed](InspectEngine& e) { e.detect(m, r, seed); });
  }
}

bool InspectPanel::settled() const {
  if (!worker_) return true;
  return worker_->idle() && worker_->snapshot()->ticket >= last_ticket_;
}

std::shared_ptr<const InspectSnap> InspectPanel::data() const {
  return worker_ ? worker_->snapshot() : std::make_shared<const InspectSnap>();
}

void InspectPanel::pin_lens(int point, int position) {
  pin_point_ = point;
  pin_pos_ = position;
}

void InspectPanel::attribute(int position, int token, int other) {
  ensure_worker();
  attr_pos_ = position;
  last_ticket_ = worker_->post([position, token, other](InspectEngine& e) { e.attribute(position, token, other); });
}

void InspectPanel::detect(int r, uint64_t seed) {
  ensure_worker();
  detect_r_ = r;
  detect_seed_ = static_cast<int>(seed);
  detect_posted_.reset();  // run again with these settings
}

void InspectPanel::open_head(int stack, int layer, int head) {
  head_stack_ = stack;
  head_layer_ = layer;
  head_ = head;
}

void InspectPanel::set_rollout(int stack, int layer) {
  roll_stack_ = stack;
  roll_layer_ = layer;
}

void InspectPanel::post_ablation() {
  ensure_worker();
  const std::vector<AblationTarget> t = abl_sel_;
  const EditMode mode = abl_mode_ == 1 ? EditMode::Mean : EditMode::Zero;
  last_ticket_ = worker_->post([t, mode](InspectEngine& e) { e.ablate(t, mode); });
}

void InspectPanel::set_ablation(std::vector<AblationTarget> targets, EditMode mode) {
  abl_sel_ = std::move(targets);
  abl_mode_ = mode == EditMode::Mean ? 1 : 0;
  post_ablation();
}

void InspectPanel::toggle_ablation(const AblationTarget& t) {
  auto it = std::find(abl_sel_.begin(), abl_sel_.end(), t);
  if (it == abl_sel_.end())
    abl_sel_.push_back(t);
  else
    abl_sel_.erase(it);
  post_ablation();
}

void InspectPanel::run_patch(const PatchRequest& req) {
  ensure_worker();
  // The boxes show what runs (a script's request too).
  const auto put = [](char* dst, size_t n, const std::string& src) { std::snprintf(dst, n, "%s", src.c_str()); };
  put(patch_clean_, sizeof patch_clean_, req.clean);
  put(patch_corrupt_, sizeof patch_corrupt_, req.corrupt);
  put(patch_answer_, sizeof patch_answer_, req.answer);
  put(patch_wrong_, sizeof patch_wrong_, req.wrong);
  patch_what_ = static_cast<int>(req.what);
  if (patch_progress_) patch_progress_->cancel = true;  // a running job stops between runs
  auto progress = std::make_shared<PatchProgress>();
  patch_progress_ = progress;
  patch_ticket_ = last_ticket_ = worker_->post([req, progress](InspectEngine& e) {
    e.run_patching(req, progress);
    glfwPostEmptyEvent();
  });
}

void InspectPanel::cancel_patch() {
  if (patch_progress_) patch_progress_->cancel = true;
}

bool InspectPanel::patch_running() const {
  return worker_ && patch_ticket_ > 0 && worker_->snapshot()->ticket < patch_ticket_;
}

void InspectPanel::open_patch_cell(int layer, int index) {
  ensure_worker();
  last_ticket_ = worker_->post([layer, index](InspectEngine& e) { e.open_patch_cell(layer, index); });
}

void InspectPanel::export_csv(App& app) const {
  std::string text, error;
  const std::string path = app.default_export_path(std::string("inspect-") + to_string(tab_), ".csv");
  if (!csv(text, error)) return app.notify(Message::Error, error);
  if (auto ok = write_file_atomic(path, text); !ok) return app.notify(Message::Error, "export: " + ok.error());
  app.notify(Message::Info, "wrote " + path);
}

const Heatmap* InspectPanel::main_heatmap() const {
  switch (tab_) {
    case InspectTab::Lens:
      return &lens_hm_;
    case InspectTab::Attribution:
      return &attr_hm_;
    case InspectTab::Heads:
      if (head_stack_ >= 0) return &probe_hm_;
      return heads_hm_.empty() ? nullptr : &heads_hm_[static_cast<size_t>(heads_pattern_)];
    case InspectTab::Rollout:
      return &roll_hm_;
    case InspectTab::Ablation:
      return &abl_hm_;
    case InspectTab::Patching:
      return &patch_hm_;
  }
  return nullptr;
}

void InspectPanel::Draw(Ctx& c) {
  if (tab_ == InspectTab::Heads) want_detect_ = c.snap.model;
  sync(c.snap);
  const auto d = data();
  static const char* titles[] = {"Logit lens", "Attribution", "Head detectors", "Rollout", "Ablation", "Patching"};
  int tab = static_cast<int>(tab_);
  if (titled_tabs("inspect_tabs", titles, kInspectTabs, tab, tab_request_ >= 0, "Export CSV",
                  "this tab's grid as CSV (right-click a map for its PNG)"))
    export_csv(c.app);
  tab_ = static_cast<InspectTab>(tab);
  tab_request_ = -1;
  if (tab_ == InspectTab::Heads) want_detect_ = c.snap.model;
  if (tab_ == InspectTab::Patching) return draw_patching(c, *d);
  if (tab_ != InspectTab::Heads && (!d->run || d->run->in.model != c.snap.model)) {
    ImGui::TextDisabled("recording the input in full…");
    return;
  }
  switch (tab_) {
    case InspectTab::Lens:
      return draw_lens(c, *d);
    case InspectTab::Attribution:
      return draw_attribution(c, *d);
    case InspectTab::Heads:
      return draw_heads(c, *d);
    case InspectTab::Rollout:
      return draw_rollout(c, *d);
    case InspectTab::Ablation:
      return draw_ablation(c, *d);
    case InspectTab::Patching:
      return draw_patching(c, *d);
  }
}

// [SECTION] logit lens

void InspectPanel::draw_lens(Ctx& c, const InspectSnap& d) {
  const InspectRun& r = *d.run;
  const float fs = ImGui::GetFontSize();
  if (r.lens.points.empty()) {
    ImGui::TextDisabled("the recording has no residual-stream points");
    return;
  }
  ImGui::TextWrapped("lens = W_U · FinalNorm(x) + b_U at every point of the residual stream. %s", r.readout.c_str());
  const int P = static_cast<int>(r.top.size()), n = static_cast<int>(r.ids.size());
  std::vector<float> v(static_cast<size_t>(P * n));
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < n; ++i) v[static_cast<size_t>(p * n + i)] = r.top[size_t(p)][size_t(i)].probs.front();
  lens_hm_.update(v.data(), P, n, mix_key(d.generation, 17), Colormap::Viridis, 0.0f, 1.0f);
  cols_.clear();
  for (int i = 0; i < n; ++i) cols_.push_back(std::to_string(i) + " " + r.tokens[size_t(i)]);
  HeatmapOpts o;
  o.row_labels = &r.point_names;
  o.col_labels = &cols_;
  o.row_title = "after ↓";
  o.col_title = "position (input token) → · cell: the lens's top next token, shaded by its probability";
  o.square = false;
  o.max_cell = 90;
  o.max_cell_h = 34;
  o.fonts = &c.fonts;
  o.sel_row = pin_point_, o.sel_col = pin_pos_;
  const float follow_h = pin_point_ >= 0 ? fs * 9 : fs * 2;
  o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - follow_h);
  const HeatmapHit hit = heatmap_widget("lens", lens_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  const ImVec2 after = ImGui::GetCursorScreenPos();
  // The top token written in each cell, dark on the bright end of the map.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = (hit.max.x - hit.min.x) / float(n), ch = (hit.max.y - hit.min.y) / float(P);
  ImFont* font = c.fonts.small ? c.fonts.small : ImGui::GetFont();
  const float tfs = std::min(font->FontSize, ch * 0.8f);
  if (tfs >= 7)
    for (int p = 0; p < P; ++p)
      for (int i = 0; i < n; ++i) {
        const LensCell& cell = r.top[size_t(p)][size_t(i)];
        const std::string t = display_token(*r.out_vocab, cell.ids.front());
        const ImVec2 sz = font->CalcTextSizeA(tfs, FLT_MAX, 0, t.c_str());
        if (sz.x > cw - 2) continue;
        const ImVec2 pos(hit.min.x + cw * float(i) + (cw - sz.x) / 2, hit.min.y + ch * float(p) + (ch - sz.y) / 2);
        dl->AddText(font, tfs, pos,
                    cell.probs.front() > 0.6f ? IM_COL32(20, 20, 20, 255) : IM_COL32(250, 250, 250, 255), t.c_str());
      }
  if (hit.hovered) {
    const LensCell& cell = r.top[size_t(hit.row)][size_t(hit.col)];
    ImGui::BeginTooltip();
    ImGui::Text("after %s · position %d ('%s')", r.point_names[size_t(hit.row)].c_str(), hit.col,
                r.tokens[size_t(hit.col)].c_str());
    for (size_t k = 0; k < cell.ids.size(); ++k)
      ImGui::Text("%zu. %-12s p = %.4f", k + 1, display_token(*r.out_vocab, cell.ids[k]).c_str(), cell.probs[k]);
    ImGui::TextDisabled("click: follow this token through the depth");
    ImGui::EndTooltip();
    if (hit.clicked) pin_lens(hit.row, hit.col);
  }
  ImGui::SetCursorScreenPos(after);
  if (pin_point_ >= 0 && pin_point_ < P && pin_pos_ >= 0 && pin_pos_ < n)
    draw_follow(c, r);
  else
    ImGui::TextDisabled("hover a cell for the top 5; click it to follow its token through the depth");
}

void InspectPanel::draw_follow(Ctx& c, const InspectRun& r) {
  const int token = r.top[size_t(pin_point_)][size_t(pin_pos_)].ids.front();
  const uint64_t key = mix_key(mix_key(reinterpret_cast<uintptr_t>(&r), uint64_t(pin_pos_)), uint64_t(token));
  if (key != follow_key_) {
    follow_key_ = key;
    follow_token_ = token;
    follow_prob_.clear();
    follow_rank_.clear();
    for (const Mat& l : r.lens.logits) {
      const TokenRank tr = lens_rank(l, pin_pos_, token);
      follow_prob_.push_back(tr.prob);
      follow_rank_.push_back(float(tr.rank));
    }
  }
  const std::string tok = display_token(*r.out_vocab, follow_token_);
  ImGui::Text("'%s' at position %d through the depth:", tok.c_str(), pin_pos_);
  ImGui::SameLine();
  std::string ranks = "rank";
  for (size_t p = 0; p < follow_rank_.size(); ++p) ranks += " " + std::to_string(int(follow_rank_[p]));
  ImGui::TextDisabled("(%s; 0 = top)", ranks.c_str());
  const float fs = ImGui::GetFontSize();
  std::vector<Series> s = {{&follow_prob_, palette().accent, "probability"}};
  line_plot("follow", s, &r.point_names, ImVec2(ImGui::GetContentRegionAvail().x, fs * 7), c.fonts,
            "lens probability of the token");
}

// [SECTION] direct logit attribution

namespace {

// The columns of the attribution grid: every self head, every cross head, the biases, the MLP.
struct AttrColumn {
  PartKind kind;
  Block block;
  int head;
  std::string label;
};

std::vector<AttrColumn> attribution_columns(const Config& cfg) {
  std::vector<AttrColumn> cols;
  for (int h = 0; h < cfg.n_heads; ++h)
    cols.push_back(
        {PartKind::Head, Block::SelfAttention, h, (cfg.has_encoder() ? "self " : "head ") + std::to_string(h)});
  if (cfg.has_encoder())
    for (int h = 0; h < cfg.n_heads; ++h)
      cols.push_back({PartKind::Head, Block::CrossAttention, h, "cross " + std::to_string(h)});
  cols.push_back({PartKind::AttentionBias, Block::SelfAttention, -1, cfg.has_encoder() ? "self bias" : "attn bias"});
  if (cfg.has_encoder()) cols.push_back({PartKind::AttentionBias, Block::CrossAttention, -1, "cross bias"});
  if (cfg.has_ffn()) cols.push_back({PartKind::Mlp, Block::FeedForward, -1, "MLP"});  // none: attention-only
  return cols;
}

// The cell of a layer's row: a head's, an attention bias's or the MLP's part.
double column_value(const Attribution& a, const AttrColumn& col, int layer) {
  switch (col.kind) {
    case PartKind::Head:
      return a.head(layer, col.block, col.head);
    case PartKind::AttentionBias:
      return a.attention_bias(layer, col.block);
    case PartKind::Mlp:
      return a.mlp(layer);
    default:
      return 0;
  }
}

}  // namespace

void InspectPanel::draw_attribution(Ctx& c, const InspectSnap& d) {
  const InspectRun& r = *d.run;
  const Config& cfg = r.in.model->config;
  const float fs = ImGui::GetFontSize();
  if (!r.on_decoder) {
    ImGui::TextWrapped("%s", d.attribution_error.c_str());
    return;
  }
  const int n = static_cast<int>(r.ids.size());
  // The question: position, token, optional second token.
  if (d.attribution && attr_pos_ < 0) attr_pos_ = d.attribution->position;
  attr_pos_ = std::clamp(attr_pos_, 0, n - 1);
  ImGui::SetNextItemWidth(fs * 10);
  std::string cur = std::to_string(attr_pos_) + " " + r.tokens[size_t(attr_pos_)];
  if (ImGui::BeginCombo("position", cur.c_str())) {
    for (int i = 0; i < n; ++i)
      if (ImGui::Selectable((std::to_string(i) + " " + r.tokens[size_t(i)]).c_str(), i == attr_pos_)) attr_pos_ = i;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 7);
  ImGui::InputTextWithHint("token", "top", attr_token_, sizeof attr_token_);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 7);
  ImGui::InputTextWithHint("minus", "(none)", attr_other_, sizeof attr_other_);
  ImGui::SameLine();
  if (ImGui::Button("Attribute")) {
    const int tok =
        attr_token_[0] ? find_token(cfg.tgt_vocab, attr_token_) : r.top.back()[size_t(attr_pos_)].ids.front();
    const int other = attr_other_[0] ? find_token(cfg.tgt_vocab, attr_other_) : -1;
    if (tok < 0 || (attr_other_[0] && other < 0))
      c.app.notify(Message::Error, std::string("attribution: '") + (tok < 0 ? attr_token_ : attr_other_) +
                                       "' is not in the model's output vocabulary");
    else
      attribute(attr_pos_, tok, other);
  }
  if (!d.attribution) {
    ImGui::TextWrapped("%s", d.attribution_error.empty() ? "attributing…" : d.attribution_error.c_str());
    return;
  }
  const Attribution& a = *d.attribution;
  const std::string what = a.other < 0 ? "logit('" + display_token(cfg.tgt_vocab, a.token) + "')"
                                       : "logit('" + display_token(cfg.tgt_vocab, a.token) + "') − logit('" +
                                             display_token(cfg.tgt_vocab, a.other) + "')";
  ImGui::Text("%s at position %d ('%s'): total %.4f = sum of the parts %.4f", what.c_str(), a.position,
              r.tokens[size_t(a.position)].c_str(), a.total, a.sum);
  ImGui::Text("embedding %+.4f   norm biases %+.4f   unembedding bias %+.4f", a.of_kind(PartKind::Embedding),
              a.of_kind(PartKind::NormBias), a.of_kind(PartKind::UnembeddingBias));
  ImGui::TextDisabled("%s", a.note.c_str());
  // The grid: rows = decoder layers, columns = heads, biases, MLP.
  const std::vector<AttrColumn> cols = attribution_columns(cfg);
  const int L = cfg.n_decoder_layers, C = static_cast<int>(cols.size());
  std::vector<float> v(static_cast<size_t>(L * C));
  for (int l = 0; l < L; ++l)
    for (int j = 0; j < C; ++j) v[size_t(l * C + j)] = float(column_value(a, cols[size_t(j)], l));
  float lo, hi;
  symmetric_range(v.data(), v.size(), lo, hi);
  attr_hm_.update(v.data(), L, C, mix_key(d.generation, 29), Colormap::Diverging, lo, hi);
  cols_.clear();
  rows_.clear();
  for (auto& col : cols) cols_.push_back(col.label);
  for (int l = 0; l < L; ++l) rows_.push_back("layer " + std::to_string(l));
  HeatmapOpts o;
  o.row_labels = &rows_;
  o.col_labels = &cols_;
  o.row_title = "layer ↓";
  o.col_title = "direct contribution to the logit (difference) →";
  o.square = false;
  o.max_cell = 90;
  o.max_cell_h = 60;
  o.show_values = true;
  o.fonts = &c.fonts;
  o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - fs * 2.5f);
  const HeatmapHit hit = heatmap_widget("attr", attr_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  if (hit.hovered)
    ImGui::SetTooltip("layer %d · %s: %+.5f of %.4f", hit.row, cols[size_t(hit.col)].label.c_str(),
                      double(v[size_t(hit.row * C + hit.col)]), a.total);
  colour_bar(cbar_, Colormap::Diverging, lo, hi, fs * 12, "contribution");
}

// [SECTION] head detectors

void InspectPanel::draw_heads(Ctx& c, const InspectSnap& d) {
  const float fs = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(fs * 6);
  ImGui::InputInt("tokens r", &detect_r_);
  detect_r_ = std::clamp(detect_r_, 2, 200);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 6);
  ImGui::InputInt("seed", &detect_seed_);
  ImGui::SameLine();
  if (ImGui::Button("Run the probe again")) detect(detect_r_, static_cast<uint64_t>(std::max(0, detect_seed_)));
  if (!d.detection || d.detection_model != c.snap.model) {
    ImGui::TextWrapped("%s", d.detection_error.empty() || d.detection_model != c.snap.model
                                 ? "running the probe…"
                                 : d.detection_error.c_str());
    return;
  }
  const HeadDetection& det = *d.detection;
  ImGui::TextWrapped(
      "probe: %zu random tokens, then the same tokens again. score = Σ A ⊙ P / Σ A for each head's weights A and the "
      "ideal pattern P (1 where that kind of head looks). Click a head to open its attention on the probe.",
      det.tokens.size() / 2);
  heads_hm_.resize(det.stacks.size() * kHeadPatterns);
  const float grid_w = (ImGui::GetContentRegionAvail().x - fs * 3) / kHeadPatterns;
  for (size_t s = 0; s < det.stacks.size(); ++s) {
    const StackScores& st = det.stacks[s];
    heading(c.fonts, st.side == Side::Encoder ? "encoder self-attention" : "decoder self-attention");
    for (int p = 0; p < kHeadPatterns; ++p) {
      const auto& sc = st.score[size_t(p)];
      const int L = static_cast<int>(sc.size()), H = L ? static_cast<int>(sc[0].size()) : 0;
      std::vector<float> v;
      for (auto& row : sc)
        for (double x : row) v.push_back(float(x));
      Heatmap& hm = heads_hm_[s * kHeadPatterns + size_t(p)];
      hm.update(v.data(), L, H, mix_key(d.generation, 100 + s * 8 + size_t(p)), Colormap::Viridis, 0.0f, 1.0f);
      if (p) ImGui::SameLine();
      ImGui::BeginGroup();
      ImGui::TextUnformatted(to_string(static_cast<HeadPattern>(p)));
      rows_ = numbered(L, "L");
      cols_ = numbered(H, "h");
      HeatmapOpts o;
      o.row_labels = &rows_;
      o.col_labels = &cols_;
      o.show_values = true;
      o.max_cell = 48;
      o.fonts = &c.fonts;
      o.max_size = ImVec2(grid_w, fs * 10);
      if (head_stack_ == int(s)) o.sel_row = head_layer_, o.sel_col = head_;
      ImGui::PushID(int(s * kHeadPatterns) + p);
      const HeatmapHit hit = heatmap_widget("scores", hm, o);
      ImGui::PopID();
      if (s == 0 && p == heads_pattern_) heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
      if (hit.hovered) {
        ImGui::SetTooltip("%s · layer %d · head %d: %s score %.3f", st.side == Side::Encoder ? "encoder" : "decoder",
                          hit.row, hit.col, to_string(static_cast<HeadPattern>(p)),
                          sc[size_t(hit.row)][size_t(hit.col)]);
        if (hit.clicked) open_head(int(s), hit.row, hit.col), heads_pattern_ = p;
      }
      ImGui::EndGroup();
    }
  }
  if (head_stack_ >= 0 && head_stack_ < int(det.stacks.size())) draw_head_map(c, det);
}

void InspectPanel::draw_head_map(Ctx& c, const HeadDetection& det) {
  const StackScores& st = det.stacks[size_t(head_stack_)];
  const auto attn =
      st.side == Side::Encoder ? encoder_self_attention(det.trace.encoder) : decoder_self_attention(det.trace.decoder);
  if (head_layer_ >= int(attn.size()) || head_ >= attn[size_t(head_layer_)]->n_heads) return;
  const Mat& w = attn[size_t(head_layer_)]->head_weights(0, head_);  // (n, n)
  probe_hm_.update(
      w.data(), int(w.rows()), int(w.cols()),
      mix_key(reinterpret_cast<uintptr_t>(&det), uint64_t(head_stack_ * 10000 + head_layer_ * 100 + head_)),
      Colormap::Viridis, 0.0f, 1.0f);
  ImGui::Separator();
  ImGui::Text("%s layer %d head %d on the probe", st.side == Side::Encoder ? "encoder" : "decoder", head_layer_, head_);
  ImGui::SameLine();
  std::string scores;
  for (int p = 0; p < kHeadPatterns; ++p) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f", p ? " · " : "", to_string(static_cast<HeadPattern>(p)),
                  st.score[size_t(p)][size_t(head_layer_)][size_t(head_)]);
    scores += buf;
  }
  ImGui::TextDisabled("%s", scores.c_str());
  rows_ = numbered(int(w.rows()));
  cols_ = rows_;
  HeatmapOpts o;
  o.row_labels = &rows_;
  o.col_labels = &cols_;
  o.row_title = "query ↓";
  o.col_title = "key → (the probe's positions)";
  o.fonts = &c.fonts;
  const HeatmapHit hit = heatmap_widget("probe", probe_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  if (hit.hovered) ImGui::SetTooltip("query %d → key %d: weight %.3f", hit.row, hit.col, double(w(hit.row, hit.col)));
}

// [SECTION] attention rollout

void InspectPanel::draw_rollout(Ctx& c, const InspectSnap& d) {
  const InspectRun& r = *d.run;
  const Config& cfg = r.in.model->config;
  const float fs = ImGui::GetFontSize();
  ImGui::TextWrapped("%s", rollout_formula());
  if (!cfg.has_encoder()) roll_stack_ = 1;
  if (!cfg.has_decoder()) roll_stack_ = 0;
  if (cfg.has_encoder() && cfg.has_decoder()) {
    ImGui::RadioButton("encoder", &roll_stack_, 0);
    ImGui::SameLine();
    ImGui::RadioButton("decoder", &roll_stack_, 1);
    ImGui::SameLine();
  }
  const std::vector<Mat>& R = roll_stack_ == 0 ? r.rollout_enc : r.rollout_dec;
  if (R.empty()) {
    ImGui::TextDisabled("no self-attention weights recorded for this stack");
    return;
  }
  const int L = static_cast<int>(R.size());
  if (roll_layer_ < 0 || roll_layer_ >= L) roll_layer_ = L - 1;
  ImGui::SetNextItemWidth(fs * 10);
  ImGui::SliderInt("through layer", &roll_layer_, 0, L - 1);
  const Mat& m = R[size_t(roll_layer_)];  // (n, n)
  roll_hm_.update(m.data(), int(m.rows()), int(m.cols()),
                  mix_key(d.generation, uint64_t(roll_stack_ * 1000 + roll_layer_)), Colormap::Viridis, 0.0f, 1.0f);
  rows_.clear();
  const std::vector<int>& ids = roll_stack_ == 0 ? r.in.input.src_ids : r.in.input.tgt_ids;
  const Vocab& v = roll_stack_ == 0 ? cfg.src_vocab : cfg.tgt_vocab;
  for (int id : ids) rows_.push_back(display_token(v, id));
  HeatmapOpts o;
  o.row_labels = &rows_;
  o.col_labels = &rows_;
  o.row_title = "position ↓";
  o.col_title = "input token it comes from →";
  o.show_values = c.ui.show_values;
  o.max_cell = 90;
  o.fonts = &c.fonts;
  o.max_size = ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - fs * 2);
  const HeatmapHit hit = heatmap_widget("rollout", roll_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  if (hit.hovered)
    ImGui::SetTooltip("R_%d[%d, %d] = %.3f: share of position %d's stream that comes from token %d ('%s')",
                      roll_layer_ + 1, hit.row, hit.col, double(m(hit.row, hit.col)), hit.row, hit.col,
                      rows_[size_t(hit.col)].c_str());
  colour_bar(cbar_, Colormap::Viridis, 0.0f, 1.0f, fs * 10, "share");
}

// [SECTION] ablation

namespace {

// The columns of the ablation grid: every self-attention head, every cross-attention head (an
// encoder-decoder's decoder), the whole MLP.
std::vector<AblationTarget> ablation_columns(const Config& cfg, int layer) {
  std::vector<AblationTarget> cols;
  const int heads = cfg.has_decoder() ? cfg.n_heads : cfg.encoder_heads();
  for (int h = 0; h < heads; ++h) cols.push_back({SiteKind::SelfAttention, layer, h});
  if (cfg.has_cross_attention())
    for (int h = 0; h < cfg.n_heads; ++h) cols.push_back({SiteKind::CrossAttention, layer, h});
  if (cfg.d_ff > 0) cols.push_back({SiteKind::Mlp, layer, -1});
  return cols;
}

std::string column_label(const Config& cfg, const AblationTarget& t) {
  if (t.kind == SiteKind::Mlp) return "MLP";
  if (t.kind == SiteKind::CrossAttention) return "cross " + std::to_string(t.head);
  return (cfg.has_cross_attention() ? "self " : "h") + std::to_string(t.head);
}

// Top-5 lists side by side: one column per list, each row "token  p" with a bar.
void top_lists(const Vocab& v, const std::vector<std::pair<std::string, const std::vector<TokenProb>*>>& lists,
               int highlight) {
  const float fs = ImGui::GetFontSize();
  if (!ImGui::BeginTable("tops", int(lists.size()), ImGuiTableFlags_SizingStretchSame | ImGuiTableFlags_BordersInnerV))
    return;
  for (auto& l : lists) ImGui::TableSetupColumn(l.first.c_str());
  ImGui::TableHeadersRow();
  size_t rows = 0;
  for (auto& l : lists) rows = std::max(rows, l.second->size());
  for (size_t k = 0; k < rows; ++k) {
    ImGui::TableNextRow();
    for (size_t j = 0; j < lists.size(); ++j) {
      ImGui::TableSetColumnIndex(int(j));
      if (k >= lists[j].second->size()) continue;
      const TokenProb& t = (*lists[j].second)[k];
      char label[160];
      std::snprintf(label, sizeof label, "%zu. %s  %.4f", k + 1, display_token(v, t.id).c_str(), double(t.prob));
      if (t.id == highlight) ImGui::PushStyleColor(ImGuiCol_PlotHistogram, palette().accent2);
      ImGui::ProgressBar(t.prob, ImVec2(-1, fs * 1.3f), label);
      if (t.id == highlight) ImGui::PopStyleColor();
    }
  }
  ImGui::EndTable();
}

}  // namespace

void InspectPanel::ablation_controls(const std::string& selected) {
  int mode = abl_mode_;
  ImGui::RadioButton("zero", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("mean", &mode, 1);
  ImGui::SameLine();
  if (mode != abl_mode_) {
    abl_mode_ = mode;
    if (!abl_sel_.empty()) post_ablation();
  }
  if (ImGui::Button("Clear") && !abl_sel_.empty()) {
    abl_sel_.clear();
    post_ablation();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("ablated: %s", selected.empty() ? "nothing (click the grid)" : selected.c_str());
}

// The grid: rows = layers of the stack the model predicts from, columns = heads and the MLP;
// "off" written in the removed cells.
void InspectPanel::draw_ablation_grid(Ctx& c, const Config& cfg) {
  const float fs = ImGui::GetFontSize();
  const int L = cfg.has_decoder() ? cfg.n_decoder_layers : cfg.n_encoder_layers;
  const std::vector<AblationTarget> cols0 = ablation_columns(cfg, 0);
  const int C = static_cast<int>(cols0.size());
  std::vector<float> val(static_cast<size_t>(L * C), 0.0f);
  for (int l = 0; l < L; ++l) {
    const std::vector<AblationTarget> cols = ablation_columns(cfg, l);
    for (int j = 0; j < C; ++j)
      if (std::find(abl_sel_.begin(), abl_sel_.end(), cols[size_t(j)]) != abl_sel_.end()) val[size_t(l * C + j)] = 1;
  }
  uint64_t key = 1469598103934665603ull;
  for (float x : val) key = mix_key(key, x > 0 ? 1 : 2);
  abl_hm_.update(val.data(), L, C, mix_key(key, uint64_t(L * 1000 + C)), Colormap::Viridis, 0.0f, 1.0f);
  cols_.clear();
  for (const AblationTarget& t : cols0) cols_.push_back(column_label(cfg, t));
  rows_ = numbered(L, "layer ");
  HeatmapOpts o;
  o.row_labels = &rows_;
  o.col_labels = &cols_;
  o.row_title = cfg.has_decoder() ? "decoder layer ↓" : "encoder layer ↓";
  o.col_title = "click to remove (bright) or restore →";
  o.square = false;
  o.max_cell = 70;
  o.max_cell_h = 34;
  o.fonts = &c.fonts;
  o.max_size = ImVec2(ImGui::GetContentRegionAvail().x,
                      std::max(std::min(ImGui::GetContentRegionAvail().y * 0.45f, fs * 18), float(L) * fs * 1.8f));
  const HeatmapHit hit = heatmap_widget("ablation", abl_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  const ImVec2 after = ImGui::GetCursorScreenPos();
  {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float cw = (hit.max.x - hit.min.x) / float(C), ch = (hit.max.y - hit.min.y) / float(L);
    ImFont* font = c.fonts.small ? c.fonts.small : ImGui::GetFont();
    const float tfs = std::min(font->FontSize, ch * 0.8f);
    const ImVec2 sz = font->CalcTextSizeA(tfs, FLT_MAX, 0, "off");
    if (sz.x < cw - 2)
      for (int l = 0; l < L; ++l)
        for (int j = 0; j < C; ++j)
          if (val[size_t(l * C + j)] > 0)
            dl->AddText(
                font, tfs,
                ImVec2(hit.min.x + cw * float(j) + (cw - sz.x) / 2, hit.min.y + ch * float(l) + (ch - sz.y) / 2),
                IM_COL32(20, 20, 20, 255), "off");
  }
  if (hit.hovered) {
    const AblationTarget t = ablation_columns(cfg, hit.row)[size_t(hit.col)];
    ImGui::SetTooltip("%s %s: click to %s", target_label(t).c_str(), t.kind == SiteKind::Mlp ? "the MLP" : "a head",
                      val[size_t(hit.row * C + hit.col)] > 0 ? "restore" : "remove");
    if (hit.clicked) toggle_ablation(t);
  }
  ImGui::SetCursorScreenPos(after);
}

void InspectPanel::draw_ablation(Ctx& c, const InspectSnap& d) {
  const InspectRun& r = *d.run;
  const Config& cfg = r.in.model->config;
  const Vocab& v = output_vocab(cfg);
  if (!cfg.has_decoder() && !cfg.mlm_head) {
    ImGui::TextDisabled("this encoder has no masked-LM head: there is no output distribution to compare");
    return;
  }
  ImGui::TextWrapped(
      "Click heads (or an MLP) to remove them; the run re-executes on the same input. A head is removed in the "
      "concatenated head outputs, before W_o; an MLP in its output. zero: set to 0 · mean: each column set to its "
      "mean over this run's positions.");
  std::string sel;
  for (const AblationTarget& t : abl_sel_) sel += (sel.empty() ? "" : ",") + target_label(t);
  ablation_controls(sel);
  draw_ablation_grid(c, cfg);
  if (abl_sel_.empty()) {
    ImGui::TextDisabled("nothing removed: the output is the model's own");
    return;
  }
  if (!d.ablation || d.ablation_run != d.run) {
    ImGui::TextDisabled("%s", d.ablation_error.empty() ? "running the ablated model…" : d.ablation_error.c_str());
    return;
  }
  const AblationResult& a = *d.ablation;
  const std::vector<int>& ids = r.ids;
  const std::string at = a.position < int(ids.size()) ? r.tokens[size_t(a.position)] : std::string("?");
  ImGui::Text("at position %d ('%s'):  KL(clean ‖ ablated) = %.4f nats", a.position, at.c_str(), a.kl);
  ImGui::SameLine();
  const std::string from = display_token(v, a.clean_top), to = display_token(v, a.ablated_top);
  if (a.top_changed())
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().warn), "·  top token '%s' → '%s' (changed)",
                       from.c_str(), to.c_str());
  else
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().ok), "·  top token '%s' kept", from.c_str());
  top_lists(v, {{"clean run", &a.clean_top_k}, {"ablated (" + sel + ", " + to_string(a.mode) + ")", &a.ablated_top_k}},
            a.clean_top);
}

// [SECTION] activation patching

void InspectPanel::patch_form(Ctx& c, const Config& cfg, bool running) {
  const float fs = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(fs * 16);
  ImGui::InputTextWithHint("clean", cfg.has_encoder() && cfg.has_decoder() ? "source" : "prompt", patch_clean_,
                           sizeof patch_clean_);
  same_line_if_fits(labelled_width(fs * 16, "corrupted"));
  ImGui::SetNextItemWidth(fs * 16);
  ImGui::InputTextWithHint("corrupted", "same number of tokens", patch_corrupt_, sizeof patch_corrupt_);
  ImGui::SetNextItemWidth(fs * 6);
  ImGui::InputText("answer", patch_answer_, sizeof patch_answer_);
  same_line_if_fits(labelled_width(fs * 6, "wrong"));
  ImGui::SetNextItemWidth(fs * 6);
  ImGui::InputText("wrong", patch_wrong_, sizeof patch_wrong_);
  static const char* whats[] = {"resid", "attn", "cross", "mlp", "heads", "cross-heads"};
  same_line_if_fits(labelled_width(fs * 7, "patch"));
  ImGui::SetNextItemWidth(fs * 7);
  ImGui::Combo("patch", &patch_what_, whats, 6);
  const float pad = ImGui::GetStyle().FramePadding.x * 2;
  same_line_if_fits(ImGui::CalcTextSize(running ? "Cancel" : "Run").x + pad);
  if (running) {
    if (ImGui::Button("Cancel")) cancel_patch();
    note_item("Cancel");
    same_line_if_fits(fs * 14);
    const int done = patch_progress_ ? patch_progress_->done.load() : 0;
    const int total = patch_progress_ ? patch_progress_->total.load() : 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d / %d patched runs", done, total);
    ImGui::ProgressBar(total > 0 ? float(done) / float(total) : 0.0f, ImVec2(fs * 14, 0), buf);
  } else if (ImGui::Button("Run")) {
    PatchRequest req;
    req.model = c.snap.model;
    req.clean = patch_clean_;
    req.corrupt = patch_corrupt_;
    req.answer = patch_answer_;
    req.wrong = patch_wrong_;
    req.what = static_cast<PatchWhat>(patch_what_);
    run_patch(req);
  }
}

void InspectPanel::draw_patch_grid(Ctx& c, const InspectSnap& d, const Config& cfg) {
  const float fs = ImGui::GetFontSize();
  const PatchView& pv = *d.patch;
  const PatchResult& pr = pv.result;
  const Vocab& v = output_vocab(cfg);
  ImGui::Text("patched: %s · logit('%s') − logit('%s') at position %d: clean %.4f, corrupted %.4f", to_string(pr.what),
              display_token(v, pv.inputs.answer).c_str(), display_token(v, pv.inputs.wrong).c_str(), pr.position,
              pr.clean_ld, pr.corrupt_ld);
  const int R = pr.rows(), C = pr.cols();
  std::vector<float> val;
  for (const auto& row : pr.recovered)
    for (double x : row) val.push_back(float(x));
  float lo, hi;
  symmetric_range(val.data(), val.size(), lo, hi);
  lo = std::min(lo, -1.0f), hi = std::max(hi, 1.0f);
  patch_hm_.update(val.data(), R, C, mix_key(d.generation, uint64_t(reinterpret_cast<uintptr_t>(&pv))),
                   Colormap::Diverging, lo, hi);
  HeatmapOpts o;
  o.row_labels = &pv.row_labels;
  o.col_labels = &pv.col_labels;
  o.row_title = "layer ↓";
  o.col_title = per_head(pr.what) ? "head → (every position)" : "position (corrupted token) →";
  o.square = false;
  o.max_cell = 80;
  o.max_cell_h = 40;
  o.show_values = true;
  o.fonts = &c.fonts;
  o.sel_row = pv.cell_layer, o.sel_col = pv.cell_index;
  // Rows at least two text lines high (the panel scrolls when the top-5 lists do not fit under it).
  o.max_size = ImVec2(ImGui::GetContentRegionAvail().x - fs * 1,
                      std::max(ImGui::GetContentRegionAvail().y - fs * 11, float(R) * fs * 2.2f));
  const HeatmapHit hit = heatmap_widget("patching", patch_hm_, o);
  heat_rect = ImVec4(hit.min.x, hit.min.y, hit.max.x, hit.max.y);
  if (hit.hovered) {
    ImGui::SetTooltip("layer %d · %s %s: recovered %.4f\nclick: open this patched run's output", hit.row,
                      per_head(pr.what) ? "head" : "position", pv.col_labels[size_t(hit.col)].c_str(),
                      double(val[size_t(hit.row * C + hit.col)]));
    if (hit.clicked) open_patch_cell(hit.row, hit.col);
  }
  colour_bar(cbar_, Colormap::Diverging, lo, hi, fs * 12, "recovered");
  if (pv.cell_layer < 0) {
    top_lists(v, {{"clean run", &pv.clean_top}, {"corrupted run", &pv.corrupt_top}}, pv.inputs.answer);
    return;
  }
  const double rec = pr.recovered[size_t(pv.cell_layer)][size_t(pv.cell_index)];
  ImGui::Text("patched run: layer %d %s %s: ld %.4f, recovered %.4f", pv.cell_layer,
              per_head(pr.what) ? "head" : "position", pv.col_labels[size_t(pv.cell_index)].c_str(), pv.cell_ld, rec);
  top_lists(v, {{"clean run", &pv.clean_top}, {"corrupted run", &pv.corrupt_top}, {"patched run", &pv.cell_top}},
            pv.inputs.answer);
}

void InspectPanel::draw_patching(Ctx& c, const InspectSnap& d) {
  if (!c.snap.model) {
    ImGui::TextDisabled("load a model first");
    return;
  }
  const Config& cfg = c.snap.model->config;
  ImGui::TextWrapped(
      "The corrupted prompt run again with one activation of the clean run put back: recovered = (ld(patched) − "
      "ld(corrupted)) / (ld(clean) − ld(corrupted)), ld = logit(answer) − logit(wrong) at the last position. "
      "0 = corrupted, 1 = clean.");
  const bool running = patch_running();
  patch_form(c, cfg, running);
  if (!running && !d.patch_error.empty() && d.patch && d.patch->request.model == c.snap.model) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().error), "%s", d.patch_error.c_str());
    note_item("message " + d.patch_error);
  }
  if (!d.patch || d.patch->request.model != c.snap.model) {
    if (!running && !d.patch_error.empty()) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().error), "%s", d.patch_error.c_str());
      note_item("message " + d.patch_error);
    } else if (!running)
      ImGui::TextDisabled("type two prompts of the same number of tokens, the answer and a wrong token, then Run");
    return;
  }
  draw_patch_grid(c, d, cfg);
}

std::unique_ptr<Panel> make_inspect_panel() { return std::make_unique<InspectPanel>(); }

}  // namespace sf::gui
