// heatmap.h — a matrix of floats shown as an image: the values go to the GPU as a GL_R32F texture
// and a fragment shader (shaders/heatmap.frag) colours them into an RGBA texture that ImGui draws
// as one image. One quad per map instead of one rectangle per cell (platform.md: ~0.8 ms vs ~9 ms
// for a 128×128 map under llvmpipe).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gfx/atlas_layout.h"
#include "gfx/gl.h"
#include "imgui.h"

namespace sf::gui {

enum class Colormap { Viridis = 0, Diverging = 1 };

// The one shader program and framebuffer every heatmap is coloured with. Without the shader files
// heatmaps fall back to grey levels coloured on the CPU (and the app says so).
class HeatmapRenderer {
 public:
  bool init(const std::string& shader_dir, std::string& error);
  void shutdown();
  bool ready() const { return program_ != 0; }

  // Renders values (R32F) into colour (RGBA8, w × h px) with the colour map.
  void colour(GLuint values, GLuint colour, int w, int h, int rows, int cols, Colormap map, float lo, float hi,
              float cell_px);

 private:
  GLuint program_ = 0, vao_ = 0, fbo_ = 0;
  GLint u_values_ = -1, u_cells_ = -1, u_lo_ = -1, u_hi_ = -1, u_map_ = -1, u_cell_px_ = -1;
};

HeatmapRenderer& heatmap_renderer();

class Heatmap {
 public:
  Heatmap() = default;
  ~Heatmap();
  Heatmap(const Heatmap&) = delete;
  Heatmap& operator=(const Heatmap&) = delete;
  Heatmap(Heatmap&& o) noexcept { *this = std::move(o); }
  Heatmap& operator=(Heatmap&& o) noexcept;

  // Sets the values (rows × cols, row-major; row 0 drawn at the top). Uploads and re-colours only
  // when `key` or the colouring changes: callers pass a key that changes with the data (e.g. the
  // snapshot generation mixed with the selection). `max_px` bounds the coloured texture's side;
  // cells get up to 24 px each so that separators and the −inf hatching stay visible.
  void update(const float* values, int rows, int cols, uint64_t key, Colormap map, float lo, float hi,
              int max_px = 512);

  bool empty() const { return rows_ == 0 || cols_ == 0; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  float at(int r, int c) const { return values_[static_cast<size_t>(r) * cols_ + c]; }
  float lo() const { return lo_; }
  float hi() const { return hi_; }
  Colormap map() const { return map_; }
  ImTextureID texture() const { return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(colour_)); }
  int width_px() const { return w_; }
  int height_px() const { return h_; }

  // Writes the coloured texture (one image pixel per texture pixel) to a PNG.
  bool write_png(const std::string& path, std::string& error) const;

  // Changes whenever the coloured texture does (unique across heatmaps; 0: never coloured).
  uint64_t version() const { return version_; }
  GLuint colour_texture() const { return colour_; }

 private:
  void release();
  uint64_t version_ = 0;
  std::vector<float> values_;
  int rows_ = 0, cols_ = 0, w_ = 0, h_ = 0;
  uint64_t key_ = ~0ULL;
  Colormap map_ = Colormap::Viridis;
  float lo_ = 0, hi_ = 1;
  GLuint tex_values_ = 0, colour_ = 0;
};

// Many heatmaps of one size in one texture (atlas_layout.h), copied in when they change: a grid of
// thumbnails is then drawn with one texture. Under a software rasteriser (Mesa llvmpipe) every
// change of texture between draws costs more than drawing a small image.
class HeatmapAtlas {
 public:
  HeatmapAtlas() = default;
  ~HeatmapAtlas();
  HeatmapAtlas(const HeatmapAtlas&) = delete;
  HeatmapAtlas& operator=(const HeatmapAtlas&) = delete;

  // Makes room for `slots` images of up to w × h texels (keeping what it holds when they fit);
  // false when they do not fit one texture.
  bool fit(int slots, int w, int h);
  // Copies heatmap hm into slot i unless the slot already holds its current colours; uv0, uv1:
  // where it lies in texture(). False when it does not fit (empty, or larger than a slot).
  bool put(int i, const Heatmap& hm, ImVec2& uv0, ImVec2& uv1);
  ImTextureID texture() const { return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex_)); }

 private:
  AtlasLayout layout_;
  GLuint tex_ = 0, read_fbo_ = 0, draw_fbo_ = 0;
  std::vector<uint64_t> held_;  // [slot] the version of the heatmap copied in
};

// The heatmaps drawn since the last reset, counted where they are drawn: what a --bench-frames
// run reports it measured.
struct DrawnHeatmaps {
  int64_t maps = 0;
  std::map<std::pair<int, int>, int64_t> shapes;  // (rows, cols) → maps of that shape
  void note(const Heatmap& hm) {
    ++maps;
    ++shapes[{hm.rows(), hm.cols()}];
  }
};
DrawnHeatmaps& drawn_heatmaps();

// Mixes values into a cache key (FNV-1a style).
inline uint64_t mix_key(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h;
}

// Finite min/max of values (ignoring ±inf and NaN); {0, 1} when none is finite.
void finite_range(const float* v, size_t n, float& lo, float& hi);
// Symmetric range [−a, a] with a = max |finite value| (for diverging maps).
void symmetric_range(const float* v, size_t n, float& lo, float& hi);

}  // namespace sf::gui
