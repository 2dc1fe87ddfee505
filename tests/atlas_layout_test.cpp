// The heatmap atlas's slots (gui/gfx/atlas_layout.h): every slot with its border inside the
// texture, no two slots overlapping, and texture coordinates that cover exactly the image.
#include <gtest/gtest.h>

#include <vector>

#include "gfx/atlas_layout.h"

namespace sf::gui {
namespace {

TEST(AtlasLayout, NearlySquareGrid) {
  const AtlasLayout a = atlas_layout(144, 93, 93);
  EXPECT_EQ(a.cols, 12);
  EXPECT_EQ(a.rows, 12);
  EXPECT_EQ(a.width(), 12 * 95);
  EXPECT_EQ(a.height(), 12 * 95);
  const AtlasLayout b = atlas_layout(10, 20, 8);
  EXPECT_EQ(b.cols, 4);
  EXPECT_EQ(b.rows, 3);
  EXPECT_EQ(b.width(), 4 * 22);
  EXPECT_EQ(b.height(), 3 * 10);
  const AtlasLayout one = atlas_layout(1, 5, 7);
  EXPECT_EQ(one.width(), 7);
  EXPECT_EQ(one.height(), 9);
}

TEST(AtlasLayout, SlotsAndBordersInsideWithoutOverlap) {
  for (int slots : {1, 2, 3, 7, 16, 17, 144}) {
    const AtlasLayout a = atlas_layout(slots, 9, 5);
    std::vector<int> owner(static_cast<size_t>(a.width() * a.height()), -1);
    for (int i = 0; i < slots; ++i)
      for (int y = a.y(i) - 1; y <= a.y(i) + a.h; ++y)
        for (int x = a.x(i) - 1; x <= a.x(i) + a.w; ++x) {
          ASSERT_GE(x, 0);
          ASSERT_GE(y, 0);
          ASSERT_LT(x, a.width());
          ASSERT_LT(y, a.height());
          int& o = owner[static_cast<size_t>(y * a.width() + x)];
          EXPECT_EQ(o, -1) << "slots " << o << " and " << i << " overlap at " << x << "," << y;
          o = i;
        }
  }
}

TEST(AtlasLayout, TextureCoordinatesCoverTheImage) {
  const AtlasLayout a = atlas_layout(6, 10, 4);  // 3 × 2 slots of 12 × 6 texels: 36 × 12
  float uv[4];
  a.uv(4, 10, 4, uv);  // second row, second column: image from texel (13, 7) to (23, 11)
  EXPECT_FLOAT_EQ(uv[0], 13.0f / 36.0f);
  EXPECT_FLOAT_EQ(uv[1], 7.0f / 12.0f);
  EXPECT_FLOAT_EQ(uv[2], 23.0f / 36.0f);
  EXPECT_FLOAT_EQ(uv[3], 11.0f / 12.0f);
  a.uv(0, 6, 3, uv);  // a smaller image keeps the slot's first texel
  EXPECT_FLOAT_EQ(uv[0], 1.0f / 36.0f);
  EXPECT_FLOAT_EQ(uv[1], 1.0f / 12.0f);
  EXPECT_FLOAT_EQ(uv[2], 7.0f / 36.0f);
  EXPECT_FLOAT_EQ(uv[3], 4.0f / 12.0f);
}

}  // namespace
}  // namespace sf::gui
