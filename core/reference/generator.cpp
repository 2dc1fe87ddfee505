#include "reference/generator.h"

#include "reference/feed_forward.h"
#include "reference/half_linear.h"
#include "reference/layer_norm.h"
#include "reference/linear.h"

namespace sf::ref {

Mat generator(const Model& m, const Mat& x) {
  if (const HalfMat* h = m.weights.generator_half(m.config))
    return half_linear(x, *h, m.weights.generator.bias);              // a 16-bit checkpoint's table
  Mat logits = x * m.weights.generator_weight(m.config).transpose();  // (n, V)
  logits.rowwise() += m.weights.generator.bias;                       // zero where the model has no bias (GPT-2)
  return logits;
}

Mat mlm_head(const Model& m, const Mat& x) {
  const MlmHeadWeights& w = m.weights.mlm;
  const Mat h = layer_norm(activation(m.config.activation, linear(x, w.dense)), w.norm);  // (n, d)
  return generator(m, h);                                                                 // (n, V)
}

}  // namespace sf::ref
