// bench_report.h — what a --bench-frames run measured, in words: the model and input the frames
// showed and the heatmaps they drew.
#pragma once

#include <string>

#include "gfx/heatmap.h"
#include "snapshot.h"

namespace sf::gui {

// "copy-preln.safetensors (encoder-decoder, 2+2 layers, 4 heads, d_model 64) on 9 source tokens;
// 48 heatmaps per frame: 24 of 9x9, 24 of 10x9". `drawn` counts the maps over `frames` frames.
std::string describe_bench(const Snapshot& s, const DrawnHeatmaps& drawn, int frames);

}  // namespace sf::gui
