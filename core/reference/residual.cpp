#include "reference/residual.h"

#include "reference/layer_norm.h"

namespace sf::ref {

Mat post_ln(const Mat& x, const LayerNormWeights& ln, const Sublayer& f) { return layer_norm(x + f(x), ln); }

Mat pre_ln(const Mat& x, const LayerNormWeights& ln, const Sublayer& f) { return x + f(layer_norm(x, ln)); }

Mat sublayer_connection(NormPlacement p, const Mat& x, const LayerNormWeights& ln, const Sublayer& f) {
  return p == NormPlacement::Pre ? pre_ln(x, ln, f) : post_ln(x, ln, f);
}

Mat stack_output(NormPlacement p, const Mat& x, const LayerNormWeights& final_ln) {
  return p == NormPlacement::Pre ? layer_norm(x, final_ln) : x;
}

}  // namespace sf::ref
