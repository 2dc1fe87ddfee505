// colormaps.glsl — the colour maps of every heatmap, shared by heatmap.frag (pulled in by the
// loader's `#include`). t is in [0, 1].

// Viridis (perceptually uniform, colour-blind safe, dark = 0): a degree-6 polynomial fit of the
// matplotlib table, max error below 1/255 per channel. For weights and probabilities.
vec3 viridis(float t) {
  const vec3 c0 = vec3(0.2777273272234177, 0.005407344544966578, 0.3340998053353061);
  const vec3 c1 = vec3(0.1050930431085774, 1.404613529898575, 1.384590162594685);
  const vec3 c2 = vec3(-0.3308618287255563, 0.214847559468213, 0.09509516302823659);
  const vec3 c3 = vec3(-4.634230498983486, -5.799100973351585, -19.33244095627987);
  const vec3 c4 = vec3(6.228269936347081, 14.17993336680509, 56.69055260068105);
  const vec3 c5 = vec3(4.776384997670288, -13.74514537774601, -65.35303263337234);
  const vec3 c6 = vec3(-5.435455855934631, 4.645852612178535, 26.3124352495832);
  return clamp(c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6))))), 0.0, 1.0);
}

// Diverging blue - white - red (ColorBrewer RdBu, reversed so that negative is blue): for signed
// values (scores, Q/K/V, positional encodings, residual streams). 0.5 is zero.
vec3 diverging(float t) {
  const vec3 stops[9] = vec3[9](vec3(33.0, 102.0, 172.0), vec3(67.0, 147.0, 195.0), vec3(146.0, 197.0, 222.0),
                                vec3(209.0, 229.0, 240.0), vec3(247.0, 247.0, 247.0), vec3(253.0, 219.0, 199.0),
                                vec3(244.0, 165.0, 130.0), vec3(214.0, 96.0, 77.0), vec3(178.0, 24.0, 43.0));
  float x = clamp(t, 0.0, 1.0) * 8.0;
  int i = int(min(floor(x), 7.0));
  return mix(stops[i], stops[i + 1], x - float(i)) / 255.0;
}

// 0 = viridis, 1 = diverging.
vec3 colormap(int map, float t) { return map == 1 ? diverging(t) : viridis(t); }
