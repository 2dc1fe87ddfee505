// label_stride.h — how densely a heatmap's or a plot's axis is labelled (GL-free, so the tests reach it).
#pragma once

#include <cstddef>

namespace sf::gui {

// Every how many cells an axis label goes when labels `extent` long along the axis do not fit a
// cell `cell` long: the smallest of 1, 2, 5, 10, 20, 50, … that leaves a label's extent free
// between two labels (1 when a label fits its cell). A 1023 × 1023 map is labelled that way.
int label_stride(float cell, float extent);

// Every how many of a plot axis's `count` slots, each `slot` long, a label `extent` long (its gap
// included) goes so that no two labels overlap: ceil(extent / slot), at least 1 and at most
// `count`. An axis with no room (slot <= 0: a window narrower than the plot's margins) gets its
// first label only.
size_t slot_label_step(float slot, float extent, size_t count);

}  // namespace sf::gui
