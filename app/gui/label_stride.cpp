#include "label_stride.h"

#include <algorithm>

namespace sf::gui {

int label_stride(float cell, float extent) {
  if (cell * 0.92f >= extent) return 1;
  const float need = 2 * extent / std::max(cell, 1e-3f);  // a label, then a label's room free
  for (int k = 1; k < 100000000; k *= 10)
    for (int m : {1, 2, 5})
      if (static_cast<float>(m * k) >= need) return m * k;
  return 500000000;
}

}  // namespace sf::gui
