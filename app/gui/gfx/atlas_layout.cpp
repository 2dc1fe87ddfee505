#include "gfx/atlas_layout.h"

#include <algorithm>
#include <cmath>

namespace sf::gui {

AtlasLayout atlas_layout(int slots, int w, int h) {
  AtlasLayout a;
  a.slots = std::max(slots, 0), a.w = std::max(w, 1), a.h = std::max(h, 1);
  a.cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(a.slots)))));
  a.rows = std::max(1, (a.slots + a.cols - 1) / a.cols);
  return a;
}

void AtlasLayout::uv(int i, int iw, int ih, float out[4]) const {
  const float tw = static_cast<float>(width()), th = static_cast<float>(height());
  out[0] = static_cast<float>(x(i)) / tw;
  out[1] = static_cast<float>(y(i)) / th;
  out[2] = static_cast<float>(x(i) + iw) / tw;
  out[3] = static_cast<float>(y(i) + ih) / th;
}

}  // namespace sf::gui
