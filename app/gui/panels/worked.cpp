// worked.cpp — "Worked example": one query attending over a few keys typed in as vectors (the
// `worked` command), every step of the arithmetic in a table: q·k_j, ÷ √d_k, exp(s − max), the
// softmax and the weighted sum of the values. The numbers come from core/analysis/worked_attention.h.
#include <cstdio>
#include <string>

#include "app.h"
#include "ui.h"
#include "widgets.h"

namespace sf::gui {

namespace {

std::string num(float x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", static_cast<double>(x));
  return b;
}

// "(1, 0)", or for long vectors "(1.75, 1.75, …, 1.75)  64 components".
std::string vec(const std::vector<float>& v) {
  std::string s = "(";
  if (v.size() <= 6) {
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
    return s + ")";
  }
  s += num(v[0]) + ", " + num(v[1]) + ", …, " + num(v.back()) + ")  " + std::to_string(v.size()) + " components";
  return s;
}

class WorkedPanel : public Panel {
 public:
  WorkedPanel() : Panel({"Worked example", "worked", ImVec4(0.12f, 0.10f, 0.60f, 0.60f), false, Needs::Nothing}) {}

  void Draw(Ctx& c) override {
    const auto w = c.ui.worked;
    if (!w) {
      ImGui::TextWrapped(
          "Type a query, keys and values in as vectors with the script command\n"
          "  worked q=1*64 k1=1.75*64 k2=1.5*64 v1=1,0 v2=0,1 words=Thinking,Machines\n"
          "(x*n repeats x n times) to see every step of softmax(q·kᵀ/√d_k)·V.");
      return;
    }
    const WorkedAttention& r = w->r;
    const Palette& pal = palette();
    const size_t n = r.dots.size();
    const auto name = [&](size_t j) {
      const std::string k = "k" + std::to_string(j + 1);
      return j < w->words.size() ? w->words[j] + " (" + k + ")" : k;
    };
    heading(c.fonts, ("query " + (w->words.empty() ? std::string("q") : "q of \"" + w->words[0] + "\"") +
                      "    d_k = " + std::to_string(r.d_k) + ",  √d_k = " + num(r.sqrt_dk))
                         .c_str());
    ImGui::PushFont(c.fonts.mono);
    ImGui::TextUnformatted(("q = " + vec(w->q)).c_str());
    ImGui::PopFont();
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("worked", static_cast<int>(n) + 1, flags)) return;
    ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthStretch, 1.3f);
    for (size_t j = 0; j < n; ++j) ImGui::TableSetupColumn(name(j).c_str(), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    const auto row = [&](const char* label, auto cell, bool strong = false) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(label);
      for (size_t j = 0; j < n; ++j) {
        ImGui::TableNextColumn();
        ImGui::PushFont(strong ? c.fonts.bold : c.fonts.mono);
        if (strong) ImGui::PushStyleColor(ImGuiCol_Text, pal.accent);
        ImGui::TextUnformatted(cell(j).c_str());
        if (strong) ImGui::PopStyleColor();
        ImGui::PopFont();
      }
    };
    row("key k_j", [&](size_t j) { return vec(w->k[j]); });
    row("value v_j", [&](size_t j) { return vec(w->v[j]); });
    row(
        "1  score q·k_j = Σ q[c]·k_j[c]", [&](size_t j) { return num(r.dots[j]); }, true);
    row(("2  ÷ √d_k = ÷ " + num(r.sqrt_dk)).c_str(), [&](size_t j) { return num(r.scaled[j]); }, true);
    row(("3  exp(s − max),  max = " + num(r.max)).c_str(), [&](size_t j) { return num(r.exps[j]); });
    row(("4  softmax = exp / " + num(r.sum)).c_str(), [&](size_t j) { return num(r.weights[j]); }, true);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("   weight");
    for (size_t j = 0; j < n; ++j) {
      ImGui::TableNextColumn();
      ImGui::ProgressBar(r.weights[j], ImVec2(-1, 0), "");
    }
    ImGui::EndTable();
    // 5: the output, the weighted sum of the values.
    std::string sum;
    for (size_t j = 0; j < n; ++j) sum += (j ? " + " : "") + num(r.weights[j]) + "·v" + std::to_string(j + 1);
    ImGui::Spacing();
    ImGui::TextUnformatted("5  output z = Σ_j softmax_j · v_j");
    ImGui::PushFont(c.fonts.bold);
    ImGui::PushStyleColor(ImGuiCol_Text, pal.accent);
    ImGui::TextWrapped("z = %s = %s", sum.c_str(), vec(r.out).c_str());
    ImGui::PopStyleColor();
    ImGui::PopFont();
  }
};

}  // namespace

std::unique_ptr<Panel> make_worked_panel() { return std::make_unique<WorkedPanel>(); }

}  // namespace sf::gui
