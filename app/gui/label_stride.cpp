#include "label_stride.h"

#include <algorithm>
#include <cmath>

namespace sf::gui {

int label_stride(float cell, float extent) {
  if (cell * 0.92f >= extent) return 1;
  const float need = 2 * extent / std::max(cell, 1e-3f);  // a label, then a label's room free
  for (int k = 1; k < 100000000; k *= 10)
    for (int m : {1, 2, 5})
      if (static_cast<float>(m * k) >= need) return m * k;
  return 500000000;
}

size_t slot_label_step(float slot, float extent, size_t count) {
  const size_t most = std::max<size_t>(1, count);
  if (!(slot > 0)) return most;
  const float steps = std::ceil(extent / slot);
  if (!(steps > 1)) return 1;
  if (!(steps < static_cast<float>(most))) return most;
  return static_cast<size_t>(steps);
}

}  // namespace sf::gui
