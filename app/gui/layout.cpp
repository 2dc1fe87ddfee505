// layout.cpp — tiling the open panels (layout.h).
#include "layout.h"

#include <algorithm>
#include <cstddef>

namespace sf::gui {

namespace {

// Reading order of the panels below the stepper; a key not listed goes last.
const char* const kOrder[] = {"model",    "attention", "qkv",      "pe",        "masks", "kv",
                              "residual", "compare",   "training", "gradnorms", "output"};

int rank(const std::string& k) {
  for (size_t i = 0; i < sizeof kOrder / sizeof kOrder[0]; ++i)
    if (k == kOrder[i]) return static_cast<int>(i);
  return static_cast<int>(sizeof kOrder / sizeof kOrder[0]);
}

// How much of a row a panel takes relative to the others: the attention map wants more room,
// the pre-LN / post-LN views (two runs side by side and a column of plots) most of the row, the
// model and output lists less.
float weight(const std::string& k) {
  if (k == "attention") return 1.3f;
  if (k == "compare" || k == "training" || k == "gradnorms") return 4.0f;
  if (k == "model" || k == "output") return 0.8f;
  return 1.0f;
}

// Lays `idx` (indices into keys) out in the rectangle (x, y, w, h): one row up to three panels,
// else two rows; widths in proportion to weight().
void fill(const std::vector<std::string>& keys, const std::vector<size_t>& idx, ImVec4 area, std::vector<ImVec4>& out) {
  if (idx.empty()) return;
  const size_t rows = idx.size() <= 3 ? 1 : 2;
  const size_t first = (idx.size() + rows - 1) / rows;
  for (size_t r = 0; r < rows; ++r) {
    const size_t b = r * first, e = std::min(idx.size(), b + first);
    float total = 0;
    for (size_t i = b; i < e; ++i) total += weight(keys[idx[i]]);
    float x = area.x;
    for (size_t i = b; i < e; ++i) {
      const float w = i + 1 == e ? area.x + area.z - x : area.z * weight(keys[idx[i]]) / total;
      out[idx[i]] = ImVec4(x, area.y + area.w * static_cast<float>(r) / static_cast<float>(rows), w,
                           area.w / static_cast<float>(rows));
      x += w;
    }
  }
}

}  // namespace

std::vector<ImVec4> tile_panels(const std::vector<std::string>& keys, bool presentation, bool keep_order) {
  std::vector<ImVec4> out(keys.size(), ImVec4(0, 0, 1, 1));
  std::vector<size_t> top, side, main;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == "stepper")
      top.push_back(i);
    else if (!presentation && !keep_order && (keys[i] == "model" || keys[i] == "output"))
      side.push_back(i);
    else
      main.push_back(i);
  }
  if (!keep_order)
    std::stable_sort(main.begin(), main.end(), [&](size_t a, size_t b) { return rank(keys[a]) < rank(keys[b]); });
  std::stable_sort(side.begin(), side.end(), [&](size_t a, size_t b) { return rank(keys[a]) < rank(keys[b]); });
  // Only the first stepper matters; keys are unique in practice.
  for (size_t i = 1; i < top.size(); ++i) main.push_back(top[i]);
  if (top.size() > 1) top.resize(1);

  // The left column (default layout): Model & input above Output.
  const bool right = !top.empty() || !main.empty();
  const float side_w = side.empty() ? 0.0f : right ? 0.24f : 1.0f;
  float y = 0;
  for (size_t i = 0; i < side.size(); ++i) {
    const float h = side.size() == 1 ? 1.0f : (i == 0 ? 0.55f : 0.45f);
    out[side[i]] = ImVec4(0, y, side_w, h);
    y += h;
  }
  // The stepper across the top of the rest, the other panels below it.
  const float x0 = side_w, w = 1.0f - side_w;
  const float top_h = top.empty() ? 0.0f : main.empty() ? 1.0f : presentation ? 0.38f : 0.40f;
  if (!top.empty()) out[top[0]] = ImVec4(x0, 0, w, top_h);
  fill(keys, main, ImVec4(x0, top_h, w, 1.0f - top_h), out);
  return out;
}

}  // namespace sf::gui
