// label_stride.h — how densely a heatmap's axis is labelled (GL-free, so the tests reach it).
#pragma once

namespace sf::gui {

// Every how many cells an axis label goes when labels `extent` long along the axis do not fit a
// cell `cell` long: the smallest of 1, 2, 5, 10, 20, 50, … that leaves a label's extent free
// between two labels (1 when a label fits its cell). A 1023 × 1023 map is labelled that way.
int label_stride(float cell, float extent);

}  // namespace sf::gui
