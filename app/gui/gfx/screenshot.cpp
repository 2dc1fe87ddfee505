#include "gfx/screenshot.h"

#include <cstdio>
#include <vector>

#include <stb_image_write.h>

#include "gfx/gl.h"
#include "io/atomic_file.h"

namespace sf::gui {

bool write_png_rgba(const std::string& path, const unsigned char* rgba, int w, int h, std::string& error) {
  // Unfiltered rows: for UI pictures (flat colours) they come out ~10% smaller than stb's
  // per-row filter choice, and the GUI tests read them back with the Python standard library
  // alone (no PNG filter arithmetic in Python).
  stbi_write_force_png_filter = 0;
  // Encoded in memory, then written like every other file (temporary file, fsync, rename).
  std::string png;
  const auto append = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, w, h, 4, rgba, w * 4)) {
    error = "cannot encode '" + path + "' as PNG";
    return false;
  }
  if (auto ok = write_file_atomic(path, png); !ok) {
    error = ok.error();
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
    std::copy(px.begin() + static_cast<std::ptrdiff_t>(r * row),
              px.begin() + static_cast<std::ptrdiff_t>((r + 1) * row),
              flipped.begin() + static_cast<std::ptrdiff_t>((h - 1 - r) * row));
  }
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // the window is opaque
  return write_png_rgba(path, flipped.data(), w, h, error);
}

}  // namespace sf::gui
