#include "gfx/heatmap.h"

#include <algorithm>
#include <cmath>

#include "gfx/screenshot.h"
#include "gfx/shader.h"

namespace sf::gui {

// [SECTION] renderer

DrawnHeatmaps& drawn_heatmaps() {
  static DrawnHeatmaps d;
  return d;
}

HeatmapRenderer& heatmap_renderer() {
  static HeatmapRenderer r;
  return r;
}

bool HeatmapRenderer::init(const std::string& shader_dir, std::string& error) {
  program_ = load_program(shader_dir, "heatmap.vert", "heatmap.frag", error);
  if (!program_) return false;
  u_values_ = glGetUniformLocation(program_, "u_values");
  u_cells_ = glGetUniformLocation(program_, "u_cells");
  u_lo_ = glGetUniformLocation(program_, "u_lo");
  u_hi_ = glGetUniformLocation(program_, "u_hi");
  u_map_ = glGetUniformLocation(program_, "u_map");
  u_cell_px_ = glGetUniformLocation(program_, "u_cell_px");
  glGenVertexArrays(1, &vao_);
  glGenFramebuffers(1, &fbo_);
  return true;
}

void HeatmapRenderer::shutdown() {
  if (program_) glDeleteProgram(program_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  program_ = vao_ = fbo_ = 0;
}

void HeatmapRenderer::colour(GLuint values, GLuint colour, int w, int h, int rows, int cols, Colormap map, float lo,
                             float hi, float cell_px) {
  GLint prev_fbo = 0, prev_prog = 0, prev_vao = 0, prev_tex = 0, prev_active = 0;
  GLint prev_vp[4];
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &prev_fbo);
  glGetIntegerv(GL_CURRENT_PROGRAM, &prev_prog);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &prev_vao);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &prev_active);
  glGetIntegerv(GL_VIEWPORT, prev_vp);
  const GLboolean blend = glIsEnabled(GL_BLEND), scissor = glIsEnabled(GL_SCISSOR_TEST);

  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, colour, 0);
  glViewport(0, 0, w, h);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glUseProgram(program_);
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
  glBindTexture(GL_TEXTURE_2D, values);
  glUniform1i(u_values_, 0);
  glUniform2f(u_cells_, static_cast<float>(cols), static_cast<float>(rows));
  glUniform1f(u_lo_, lo);
  glUniform1f(u_hi_, hi);
  glUniform1i(u_map_, static_cast<int>(map));
  glUniform1f(u_cell_px_, cell_px);
  glBindVertexArray(vao_);
  glDrawArrays(GL_TRIANGLES, 0, 3);

  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(prev_tex));
  glActiveTexture(static_cast<GLenum>(prev_active));
  glBindVertexArray(static_cast<GLuint>(prev_vao));
  glUseProgram(static_cast<GLuint>(prev_prog));
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(prev_fbo));
  glViewport(prev_vp[0], prev_vp[1], prev_vp[2], prev_vp[3]);
  if (blend) glEnable(GL_BLEND);
  if (scissor) glEnable(GL_SCISSOR_TEST);
}

// [SECTION] heatmap

Heatmap::~Heatmap() { release(); }

Heatmap& Heatmap::operator=(Heatmap&& o) noexcept {
  if (this != &o) {
    release();
    values_ = std::move(o.values_);
    rows_ = o.rows_, cols_ = o.cols_, w_ = o.w_, h_ = o.h_, key_ = o.key_;
    map_ = o.map_, lo_ = o.lo_, hi_ = o.hi_;
    tex_values_ = o.tex_values_, colour_ = o.colour_;
    version_ = o.version_;
    o.tex_values_ = o.colour_ = 0;
    o.version_ = 0;
    o.rows_ = o.cols_ = 0;
  }
  return *this;
}

void Heatmap::release() {
  if (tex_values_) glDeleteTextures(1, &tex_values_);
  if (colour_) glDeleteTextures(1, &colour_);
  tex_values_ = colour_ = 0;
}

void Heatmap::update(const float* values, int rows, int cols, uint64_t key, Colormap map, float lo, float hi,
                     int max_px) {
  if (rows <= 0 || cols <= 0) {
    rows_ = cols_ = 0;
    return;
  }
  if (key == key_ && map == map_ && lo == lo_ && hi == hi_ && rows == rows_ && cols == cols_) return;
  const bool resize = rows != rows_ || cols != cols_ || !tex_values_;
  key_ = key, map_ = map, lo_ = lo, hi_ = hi;
  rows_ = rows, cols_ = cols;
  values_.assign(values, values + static_cast<size_t>(rows) * cols);

  const int cell = std::clamp(max_px / std::max(rows, cols), 1, 24);
  const int w = cols * cell, h = rows * cell;
  GLint prev_tex = 0, prev_unpack = 4;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &prev_unpack);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (resize) {
    release();
    glGenTextures(1, &tex_values_);
    glBindTexture(GL_TEXTURE_2D, tex_values_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, cols, rows, 0, GL_RED, GL_FLOAT, values_.data());
  } else {
    glBindTexture(GL_TEXTURE_2D, tex_values_);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, cols, rows, GL_RED, GL_FLOAT, values_.data());
  }
  if (!colour_ || w != w_ || h != h_) {
    if (colour_) glDeleteTextures(1, &colour_);
    glGenTextures(1, &colour_);
    glBindTexture(GL_TEXTURE_2D, colour_);
    // Shrinking (thumbnails) blends neighbouring cells; enlarging keeps cells sharp.
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    w_ = w, h_ = h;
  }
  if (heatmap_renderer().ready()) {
    heatmap_renderer().colour(tex_values_, colour_, w, h, rows, cols, map, lo, hi, static_cast<float>(cell));
  } else {
    // Fallback without shader files: grey levels, masked cells mid-grey with a dark dot pattern.
    std::vector<unsigned char> px(static_cast<size_t>(w) * h * 4);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float v = values_[static_cast<size_t>(y / cell) * cols + x / cell];
        float g = std::isfinite(v) ? std::clamp((v - lo) / (hi > lo ? hi - lo : 1.0f), 0.0f, 1.0f) : 0.5f;
        if (std::isinf(v) && ((x + y) % 6) < 2) g = 0.2f;
        unsigned char* p = &px[(static_cast<size_t>(y) * w + x) * 4];
        p[0] = p[1] = p[2] = static_cast<unsigned char>(g * 255.0f);
        p[3] = 255;
      }
    glBindTexture(GL_TEXTURE_2D, colour_);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  }
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(prev_tex));
  glPixelStorei(GL_UNPACK_ALIGNMENT, prev_unpack);
  static uint64_t colourings = 0;
  version_ = ++colourings;
}

bool Heatmap::write_png(const std::string& path, std::string& error) const {
  if (!colour_ || w_ == 0) {
    error = "nothing to export: the heatmap is empty";
    return false;
  }
  std::vector<unsigned char> px(static_cast<size_t>(w_) * h_ * 4);
  GLint prev_tex = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
  glBindTexture(GL_TEXTURE_2D, colour_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(prev_tex));
  // Texture row 0 is the matrix's first row, which is also the top of the PNG: no flip.
  return write_png_rgba(path, px.data(), w_, h_, error);
}

// [SECTION] atlas

HeatmapAtlas::~HeatmapAtlas() {
  if (tex_) glDeleteTextures(1, &tex_);
  if (read_fbo_) glDeleteFramebuffers(1, &read_fbo_);
  if (draw_fbo_) glDeleteFramebuffers(1, &draw_fbo_);
}

bool HeatmapAtlas::fit(int slots, int w, int h) {
  if (tex_ && slots == layout_.slots && w <= layout_.w && h <= layout_.h) return true;
  const AtlasLayout a = atlas_layout(slots, std::max(w, layout_.w), std::max(h, layout_.h));
  GLint max_side = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_side);
  if (slots <= 0 || a.width() > max_side || a.height() > max_side) return false;
  GLint prev_tex = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
  if (!tex_) glGenTextures(1, &tex_);
  glBindTexture(GL_TEXTURE_2D, tex_);
  // As each heatmap's own texture: shrinking blends neighbouring cells, enlarging keeps them sharp.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, a.width(), a.height(), 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(prev_tex));
  if (!read_fbo_) glGenFramebuffers(1, &read_fbo_);
  if (!draw_fbo_) glGenFramebuffers(1, &draw_fbo_);
  layout_ = a;
  held_.assign(static_cast<size_t>(slots), 0);  // every slot is copied in again
  return true;
}

bool HeatmapAtlas::put(int i, const Heatmap& hm, ImVec2& uv0, ImVec2& uv1) {
  const int w = hm.width_px(), h = hm.height_px();
  if (!tex_ || i < 0 || i >= layout_.slots || hm.empty() || !hm.colour_texture() || w <= 0 || h <= 0 || w > layout_.w ||
      h > layout_.h)
    return false;
  float uv[4];
  layout_.uv(i, w, h, uv);
  uv0 = ImVec2(uv[0], uv[1]), uv1 = ImVec2(uv[2], uv[3]);
  if (held_[static_cast<size_t>(i)] == hm.version()) return true;
  GLint prev_read = 0, prev_draw = 0;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_read);
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &prev_draw);
  const GLboolean scissor = glIsEnabled(GL_SCISSOR_TEST);
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo_);
  glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, hm.colour_texture(), 0);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, draw_fbo_);
  glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex_, 0);
  const int x = layout_.x(i), y = layout_.y(i);
  // Source rectangle (x0, y0, x1, y1) of the image to its place at (dx, dy), texel for texel.
  const auto copy = [&](int x0, int y0, int x1, int y1, int dx, int dy) {
    glBlitFramebuffer(x0, y0, x1, y1, dx, dy, dx + (x1 - x0), dy + (y1 - y0), GL_COLOR_BUFFER_BIT, GL_NEAREST);
  };
  copy(0, 0, w, h, x, y);
  // The border: edges and corners repeated.
  copy(0, 0, 1, h, x - 1, y);
  copy(w - 1, 0, w, h, x + w, y);
  copy(0, 0, w, 1, x, y - 1);
  copy(0, h - 1, w, h, x, y + h);
  copy(0, 0, 1, 1, x - 1, y - 1);
  copy(w - 1, 0, w, 1, x + w, y - 1);
  copy(0, h - 1, 1, h, x - 1, y + h);
  copy(w - 1, h - 1, w, h, x + w, y + h);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(prev_read));
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, static_cast<GLuint>(prev_draw));
  if (scissor) glEnable(GL_SCISSOR_TEST);
  held_[static_cast<size_t>(i)] = hm.version();
  return true;
}

// [SECTION] ranges

void finite_range(const float* v, size_t n, float& lo, float& hi) {
  lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(v[i])) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
  if (lo > hi) lo = 0, hi = 1;
  if (lo == hi) hi = lo + 1e-6f;
}

void symmetric_range(const float* v, size_t n, float& lo, float& hi) {
  float a = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(v[i])) a = std::max(a, std::fabs(v[i]));
  if (a == 0) a = 1;
  lo = -a, hi = a;
}

}  // namespace sf::gui
