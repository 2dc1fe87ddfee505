// model_input.cpp — "Model & input": pick a shipped model or open a .safetensors file or a
// Hugging Face folder, see its
// configuration, parameter count and costs; type the source (and target for forced decoding);
// tokens as chips with their ids, <unk> highlighted.
//
// [SECTION] model choice and file browser
// [SECTION] configuration and costs
// [SECTION] input and token chips
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "actions.h"
#include "app.h"
#include "paths.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

class ModelPanel : public Panel {
 public:
  ModelPanel() : Panel({"Model & input", "model", ImVec4(0.0f, 0.0f, 0.24f, 0.55f), true, Needs::Nothing}) {}

  void Draw(Ctx& c) override {
    const Snapshot& s = c.snap;
    if (s.generation != seen_gen_) sync_inputs(s);
    draw_model_choice(c);
    ImGui::Separator();
    if (!s.model) {
      ImGui::TextWrapped(
          "No model loaded. Pick a shipped model above or open a .safetensors file or a Hugging Face model folder.");
      return;
    }
    draw_input(c);
    ImGui::Spacing();
    if (ImGui::CollapsingHeader("Configuration", ImGuiTreeNodeFlags_DefaultOpen)) draw_config(c);
    if (ImGui::CollapsingHeader("Cost", ImGuiTreeNodeFlags_DefaultOpen)) draw_cost(c);
  }

 private:
  // [SECTION] model choice and file browser
  void draw_model_choice(Ctx& c) {
    const Snapshot& s = c.snap;
    heading(c.fonts, "Model");
    if (shipped_.empty() || ImGui::GetFrameCount() % 600 == 1) shipped_ = shipped_models();
    const std::string current = s.model ? s.model_name : std::string("(none)");
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 4.5f);
    if (ImGui::BeginCombo("##shipped", current.c_str())) {
      if (shipped_.empty()) ImGui::TextDisabled("no shipped models in assets/models/");
      for (auto& p : shipped_)
        if (ImGui::Selectable(base_name(p).c_str(), p == s.model_path)) act::load_model(c.worker, p);
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    if (ImGui::Button("Open…")) {
      browse_ = !browse_;
      if (browse_ && dir_.empty()) {
        const std::string m = find_resource_dir("assets/models");
        dir_ = m.empty() ? "." : m;
      }
    }
    if (browse_) draw_browser(c);
  }

  void draw_browser(Ctx& c) {
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 4.5f);
    ImGui::InputText("##path", path_, sizeof path_);
    ImGui::SameLine();
    if (ImGui::Button("Load") && path_[0]) {
      act::load_model(c.worker, path_);
    }
    if (dir_ != listed_) list_dir();
    ImGui::TextDisabled("%s", dir_.c_str());
    ImGui::BeginChild("files", ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 6), true);
    for (auto& [name, is_dir] : entries_) {
      // A Hugging Face folder (config.json + model.safetensors) is a model: select it, double-click loads.
      const bool hf = is_dir && name != ".." && is_model_dir(dir_ + "/" + name);
      const std::string label = (hf ? "◆ " : is_dir ? "▸ " : "  ") + name + (hf ? "  (Hugging Face model)" : "");
      if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
        if (hf) {
          std::snprintf(path_, sizeof path_, "%s/%s", dir_.c_str(), name.c_str());
          if (ImGui::IsMouseDoubleClicked(0)) act::load_model(c.worker, path_);
        } else if (is_dir) {
          dir_ = name == ".." ? parent(dir_) : dir_ + "/" + name;
        } else {
          std::snprintf(path_, sizeof path_, "%s/%s", dir_.c_str(), name.c_str());
          if (ImGui::IsMouseDoubleClicked(0)) act::load_model(c.worker, path_);
        }
      }
    }
    ImGui::EndChild();
  }

  static std::string parent(const std::string& d) {
    char buf[4096];
    if (realpath((d + "/..").c_str(), buf)) return buf;
    return d;
  }

  void list_dir() {
    listed_ = dir_;
    entries_.clear();
    entries_.push_back({"..", true});
    if (DIR* d = opendir(dir_.c_str())) {
      std::vector<std::pair<std::string, bool>> items;
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n == "." || n == ".." || n[0] == '.') continue;
        struct stat st;
        const bool is_dir = stat((dir_ + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir || (n.size() > 12 && n.compare(n.size() - 12, 12, ".safetensors") == 0))
          items.push_back({n, is_dir});
      }
      closedir(d);
      std::sort(items.begin(), items.end(),
                [](auto& a, auto& b) { return a.second != b.second ? a.second : a.first < b.first; });
      entries_.insert(entries_.end(), items.begin(), items.end());
    }
  }

  // [SECTION] configuration and costs
  void draw_config(Ctx& c) {
    const Config& m = c.snap.model->config;
    if (begin_key_table("config", "d_model / d_ff")) {
      // Where the model came from (io/hf_model: a Hugging Face folder, or a stepformer file).
      const ModelSource& src = c.snap.model->source;
      table_row("family", src.is_hub() ? src.family + (src.architecture.empty() ? "" : " (" + src.architecture + ")")
                                       : std::string("stepformer model"));
      table_row(src.is_hub() ? "folder" : "file", src.path.empty() ? c.snap.model_path : src.path);
      table_row("weights", src.matrices != WeightStorage::F32 ? src.stored_dtype + " on disk, " + src.held()
                           : src.converted
                               ? src.stored_dtype + " on disk, converted from " + src.stored_dtype + " to F32"
                               : src.stored_dtype);
      table_row("tokenizer", src.tokenizer);
      table_row("architecture", to_string(m.arch));
      table_row("layers", !m.has_decoder()  ? std::to_string(m.n_encoder_layers) + " encoder (no decoder)"
                          : m.has_encoder() ? std::to_string(m.n_encoder_layers) + " encoder + " +
                                                  std::to_string(m.n_decoder_layers) + " decoder"
                                            : std::to_string(m.n_decoder_layers) + " decoder");
      const int heads = m.has_decoder() ? m.n_heads : m.encoder_heads();
      table_row("heads", std::to_string(heads) +
                             "   (d_k = " + std::to_string(m.has_decoder() ? m.d_k() : m.encoder_d_k()) + ")" +
                             (m.kv_heads() != m.n_heads ? ", " + std::to_string(m.kv_heads()) + " K/V heads" : ""));
      if (m.has_decoder() && m.has_encoder() && m.encoder_heads() != m.n_heads)
        table_row("encoder heads", std::to_string(m.encoder_heads()));
      if (m.mlm_head) table_row("output", "masked-LM head (tied to the embeddings)");
      table_row("d_model / d_ff", std::to_string(m.d_model) + " / " +
                                      (m.has_ffn() ? std::to_string(m.d_ff) : "none (attention-only layers)"));
      table_row("LayerNorm",
                m.norm == NormPlacement::Pre ? "pre-LN:  x + Sublayer(LN(x))" : "post-LN:  LN(x + Sublayer(x))");
      table_row("positions", std::string(to_string(m.positional)) + ", max_len " + std::to_string(m.max_len));
      if (m.has_ffn()) table_row("activation", to_string(m.activation));
      if (m.has_cross_attention())
        table_row("vocabulary",
                  std::to_string(m.src_vocab.size()) + " source, " + std::to_string(m.tgt_vocab.size()) + " target");
      else
        table_row("vocabulary", std::to_string(m.tgt_vocab.size()));
      table_row("parameters", fmt_count(c.snap.n_params));
      ImGui::EndTable();
    }
    if (ImGui::TreeNode("Parameters by component")) {
      for (auto& p : c.snap.cost.params) ImGui::Text("%-34s %s", p.component.c_str(), fmt_count(p.count).c_str());
      ImGui::TreePop();
    }
  }

  void draw_cost(Ctx& c) {
    const CostReport& r = c.snap.cost;
    if (!c.snap.session) return;
    ImGui::TextWrapped("At this step (n_src = %d, decoder input t = %d, %d sequence%s):", r.n_src, r.t, r.sequences,
                       r.sequences == 1 ? "" : "s");
    if (begin_key_table("cost", "teacher-forced forward")) {
      table_row("step, with KV cache", fmt_flops(r.step_cached.total()));
      table_row("step, recomputing", fmt_flops(r.step_uncached.total()));
      table_row("teacher-forced forward", fmt_flops(r.forward.total()));
      table_row("cross K/V (once)", fmt_flops(r.cross_setup_flops));
      table_row("KV cache (self)", fmt_bytes(r.kv_self_bytes));
      table_row("cross K/V kept", fmt_bytes(r.kv_cross_bytes));
      table_row("attention maps", fmt_bytes(r.attn_map_bytes));
      table_row("weights", fmt_bytes(r.weight_bytes));
      ImGui::EndTable();
    }
    help_marker(
        "FLOPs count matrix products only: (n×k)·(k×m) costs 2·n·k·m (the \"Transformer Architecture\" lecture's "
        "convention).");
  }

  // [SECTION] input and token chips
  void sync_inputs(const Snapshot& s) {
    // Follow the worker's input unless the user is editing it.
    if (!ImGui::IsAnyItemActive()) {
      std::snprintf(src_, sizeof src_, "%s", s.src_text.c_str());
      std::snprintf(tgt_, sizeof tgt_, "%s", s.tgt_text.c_str());
    }
    seen_gen_ = s.generation;
  }

  void draw_input(Ctx& c) {
    const Snapshot& s = c.snap;
    const Config& m = s.model->config;
    const int mask = mask_token(m.src_vocab);
    heading(c.fonts, !m.has_decoder() ? "Input" : m.has_encoder() ? "Source" : "Prompt");
    if (!m.has_decoder() && mask >= 0)
      ImGui::TextDisabled("write %s where the model should predict a token", display_token(m.src_vocab, mask).c_str());
    ImGui::SetNextItemWidth(-1);
    bool apply = ImGui::InputText("##src", src_, sizeof src_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (m.has_decoder()) {  // an encoder-only model takes no target
      ImGui::TextDisabled("Target (optional; used by 'forced' decoding)");
      ImGui::SetNextItemWidth(-1);
      apply |= ImGui::InputText("##tgt", tgt_, sizeof tgt_, ImGuiInputTextFlags_EnterReturnsTrue);
    } else {
      tgt_[0] = 0;
    }
    if (ImGui::Button("Run (Enter)")) apply = true;
    ImGui::SameLine();
    if (ImGui::Button("Example")) {
      c.worker.post([](Engine& e) { e.next_example(); });
    }
    if (m.has_encoder()) {
      ImGui::SameLine();
      if (ImGui::Button("+ <pad>")) c.worker.post([](Engine& e) { e.append_padding(); });
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("append two <pad> tokens (one when only one fits max_len) to see the padding mask at work");
    }
    if (apply) act::set_input(c.worker, src_, tgt_);
    if (!s.input_error.empty()) text_coloured_wrapped(palette().error, ("✖ " + s.input_error).c_str());
    if (!s.session) return;
    const Session& se = *s.session;
    const PreparedInput& in = se.input();

    ImGui::Spacing();
    const Vocab& sv = m.has_encoder() ? m.src_vocab : m.tgt_vocab;
    const auto chips = [&](const Tokenized& t, const Vocab& v) {
      const std::vector<std::string> labels = display_tokens_visible(v, t.ids);
      for (size_t i = 0; i < t.ids.size(); ++i) {
        const bool unk = std::find(t.unknown.begin(), t.unknown.end(), static_cast<int>(i)) != t.unknown.end();
        const int id = t.ids[i];
        const bool special = v.is_special(id);
        token_chip(c.fonts, unk ? t.pieces[i] + "→<unk>" : labels[i], id,
                   unk                              ? ChipKind::Unknown
                   : id == mask && !m.has_decoder() ? ChipKind::Chosen
                   : special                        ? ChipKind::Special
                                                    : ChipKind::Normal);
      }
      ImGui::NewLine();
    };
    ImGui::TextDisabled("%s tokens (%zu):",
                        !m.has_decoder()  ? "input"
                        : m.has_encoder() ? "source"
                                          : "prompt",
                        in.src.ids.size());
    chips(in.src, sv);
    if (!m.has_encoder() && m.tgt_vocab.framing()) {  // what the tokenizer files put around the prompt, and why
      const Framing& f = *m.tgt_vocab.framing();
      for (int id : f.before) {
        token_chip(c.fonts, display_token(m.tgt_vocab, id), id, ChipKind::Special);
        ImGui::SameLine();
        ImGui::TextDisabled("before the prompt");
      }
      for (int id : f.after) {
        token_chip(c.fonts, display_token(m.tgt_vocab, id), id, ChipKind::Special);
        ImGui::SameLine();
        ImGui::TextDisabled("after the prompt");
      }
      for (const std::string& why : f.reasons) text_coloured_wrapped(palette().text_dim, why.c_str());
    }
    if (!m.has_decoder()) {  // encoder-only: nothing is decoded; the Output panel has the predictions
      for (auto& w : se.warnings()) text_coloured_wrapped(palette().warn, ("⚠ " + w).c_str());
      return;
    }
    if (!in.tgt.ids.empty()) {
      ImGui::TextDisabled("target tokens (%zu):", in.tgt.ids.size());
      chips(in.tgt, m.tgt_vocab);
    }
    ImGui::TextDisabled("decoder output so far:");
    const std::vector<int> out = se.tokens();
    if (out.empty()) ImGui::TextDisabled("  (nothing decoded yet)");
    const std::vector<std::string> out_labels = display_tokens_visible(m.tgt_vocab, out);
    for (size_t i = 0; i < out.size(); ++i) {
      const int id = out[i];
      token_chip(c.fonts, out_labels[i], id, id == m.tgt_vocab.eos() ? ChipKind::Special : ChipKind::Chosen,
                 i + 1 == out.size());
    }
    ImGui::NewLine();
    for (auto& w : se.warnings()) text_coloured_wrapped(palette().warn, ("⚠ " + w).c_str());
  }

  std::vector<std::string> shipped_;
  bool browse_ = false;
  std::string dir_, listed_;
  std::vector<std::pair<std::string, bool>> entries_;
  char path_[1024] = {0};
  char src_[1024] = {0};
  char tgt_[1024] = {0};
  uint64_t seen_gen_ = 0;
};

}  // namespace

std::unique_ptr<Panel> make_model_panel() { return std::make_unique<ModelPanel>(); }

}  // namespace sf::gui
