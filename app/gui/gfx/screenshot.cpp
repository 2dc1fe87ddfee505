#include "gfx/screenshot.h"

#include <cstdio>
#include <vector>

#include <stb_image_write.h>

#include "gfx/gl.h"

namespace sf::gui {

bool write_png_rgba(const std::string& path, const unsigned char* rgba, int w, int h, std::string& error) {
  // Unfiltered rows: for UI pictures (flat colours) they come out ~10% smaller than stb's
  // per-row filter choice, and the GUI tests read them back with the Python standard library
  // alone (no PNG filter arithmetic in Python).
  stbi_write_force_png_filter = 0;
  const std::string tmp = path + ".tmp";
  if (!stbi_write_png(tmp.c_str(), w, h, 4, rgba, w * 4)) {
    error = "cannot write '" + path + "' (missing folder or no permission)";
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + tmp + "' to '" + path + "'";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool save_framebuffer_png(const std::string& path, int x, int y, int w, int h, int fb_height, std::string& error) {
  if (w <= 0 || h <= 0) {
    error = "nothing to capture (empty rectangle)";
    return false;
  }
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 4), flipped(px.size());
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, fb_height - (y + h), w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  const size_t row = static_cast<size_t>(w) * 4;
  for (int r = 0; r < h; ++r) {
    std::copy(px.begin() + static_cast<std::ptrdiff_t>(r * row), px.begin() + static_cast<std::ptrdiff_t>((r + 1) * row),
              flipped.begin() + static_cast<std::ptrdiff_t>((h - 1 - r) * row));
  }
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // the window is opaque
  return write_png_rgba(path, flipped.data(), w, h, error);
}

}  // namespace sf::gui
