// atlas_layout.h — where equal slots lie in one texture (GL-free, so the tests reach it).
#pragma once

namespace sf::gui {

// A grid of `slots` slots, each holding an image of up to w × h texels inside a 1-texel border
// (the image's edge repeated, so that filtering at the image's edge reads what clamp-to-edge
// would), as close to square as the count allows.
struct AtlasLayout {
  int slots = 0, w = 0, h = 0, cols = 0, rows = 0;

  int width() const { return cols * (w + 2); }
  int height() const { return rows * (h + 2); }
  // The first texel of slot i's image (inside its border).
  int x(int i) const { return (i % cols) * (w + 2) + 1; }
  int y(int i) const { return (i / cols) * (h + 2) + 1; }
  // The texture coordinates of an iw × ih image in slot i: uv[0..1] its first corner, uv[2..3] the
  // opposite one.
  void uv(int i, int iw, int ih, float uv[4]) const;
};

AtlasLayout atlas_layout(int slots, int w, int h);

}  // namespace sf::gui
