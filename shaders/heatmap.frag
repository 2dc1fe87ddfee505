#version 330 core
// heatmap.frag — colours a matrix of floats (an R32F texture, one texel per cell) into the
// heatmap's RGBA texture. Values are mapped linearly from [u_lo, u_hi] onto the colour map.
// −inf (a masked score) is drawn hatched grey; NaN, which the explorer uses for "never computed"
// (a key that did not exist yet at that decoding step), flat dark grey. Neither can pass for a
// colour of the map.
#include "colormaps.glsl"

uniform sampler2D u_values;  // (rows, cols) as a cols × rows R32F texture
uniform vec2 u_cells;        // (cols, rows)
uniform float u_lo;
uniform float u_hi;
uniform int u_map;           // 0 viridis, 1 diverging
uniform float u_cell_px;     // pixels per cell in the target
in vec2 v_uv;
out vec4 frag;

void main() {
  vec2 p = v_uv * u_cells;
  ivec2 cell = ivec2(min(floor(p), u_cells - 1.0));
  float v = texelFetch(u_values, cell, 0).r;
  vec3 col;
  if (isnan(v)) {
    col = vec3(0.22);
  } else if (isinf(v) && v < 0.0) {
    float stripe = mod(gl_FragCoord.x + gl_FragCoord.y, 6.0);
    col = stripe < 2.0 ? vec3(0.62) : vec3(0.30);
  } else {
    float t = (u_hi > u_lo) ? (v - u_lo) / (u_hi - u_lo) : 0.5;
    col = colormap(u_map, t);
  }
  // Thin separators between cells once they are large enough to tell apart.
  if (u_cell_px >= 8.0) {
    vec2 f = fract(p) * u_cell_px;
    if (f.x < 1.0 || f.y < 1.0) col *= 0.72;
  }
  frag = vec4(col, 1.0);
}
