// The heatmap's axis labels (gui/label_stride.h): a label per cell when it fits, else a
// "nice" stride that leaves a label's extent free between two labels, so a 1023 × 1023 map's
// labels never run into one band; and a plot axis's label step, also when the plot has no room.
#include <gtest/gtest.h>

#include "label_stride.h"

namespace sf::gui {
namespace {

TEST(HeatmapLabels, EveryCellWhenTheLabelFits) {
  EXPECT_EQ(label_stride(20, 12), 1);
  EXPECT_EQ(label_stride(13.05f, 12), 1);
}

TEST(HeatmapLabels, StrideLeavesALabelsRoomBetweenLabels) {
  for (float extent : {6.5f, 12.0f, 19.5f}) {
    for (float cell : {0.3f, 0.68f, 1.0f, 2.5f, 7.0f, 11.0f}) {
      if (cell * 0.92f >= extent) continue;
      const int k = label_stride(cell, extent);
      EXPECT_GE(static_cast<float>(k) * cell, 2 * extent) << cell << " " << extent;
      // The smallest such stride of 1, 2, 5 × 10^n: the one below it leaves less room.
      int below = 0;
      for (int s : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000})
        if (s < k) below = s;
      if (below > 0) {
        EXPECT_LT(static_cast<float>(below) * cell, 2 * extent) << cell << " " << extent;
      }
      EXPECT_TRUE(k == 1 || k == 2 || k == 5 || k == 10 || k == 20 || k == 50 || k == 100 || k == 200 || k == 500 ||
                  k == 1000)
          << k;
    }
  }
  // 1023 rows in 700 pixels, 13-pixel labels: every 50th row, 21 labels 34 pixels apart.
  const float cell = 700.0f / 1023.0f;
  const int k = label_stride(cell, 13);
  EXPECT_EQ(k, 50);
  EXPECT_EQ((1023 + k - 1) / k, 21);
}

TEST(PlotLabels, AStepOfSlotsThatKeepsLabelsApart) {
  EXPECT_EQ(slot_label_step(30, 12, 10), 1u);     // a label fits its slot
  EXPECT_EQ(slot_label_step(5, 12, 10), 3u);      // 12 / 5 → every third slot
  EXPECT_EQ(slot_label_step(4, 12, 10), 3u);      // exactly three slots
  EXPECT_EQ(slot_label_step(0.5f, 12, 10), 10u);  // no two fit: the first label only
  // A window narrower than the plot's margins gives a slot of no or negative length: the first
  // label only, never a negative count cast to a size.
  EXPECT_EQ(slot_label_step(0, 12, 7), 7u);
  EXPECT_EQ(slot_label_step(-4.5f, 12, 7), 7u);
  EXPECT_EQ(slot_label_step(-4.5f, 12, 0), 1u);
}

}  // namespace
}  // namespace sf::gui
