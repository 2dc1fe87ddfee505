#version 330 core
// heatmap.vert — one triangle that covers the target; v_uv runs 0..1 across it (v = 0 at the
// first row of the value texture, which ImGui shows at the top).
out vec2 v_uv;
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  v_uv = p;
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
