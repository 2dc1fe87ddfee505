#include "reference/half_linear.h"

#include <cmath>

namespace sf::ref {

float half_value(uint16_t h, WeightStorage s) {
  const bool bf16 = s == WeightStorage::BF16;
  const int mant_bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
  const int sign = h >> 15;
  const int e = (h >> mant_bits) & ((1 << (15 - mant_bits)) - 1);
  const int m = h & ((1 << mant_bits) - 1);
  const double frac = static_cast<double>(m) / (1 << mant_bits);
  const double v = e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1.0 + frac, e - bias);
  return static_cast<float>(sign ? -v : v);
}

Mat widen(const HalfMat& w) {
  Mat out(w.rows, w.cols);
  for (Eigen::Index r = 0; r < w.rows; ++r)
    for (Eigen::Index c = 0; c < w.cols; ++c) out(r, c) = half_value(w.at(r, c), w.storage);
  return out;
}

Mat half_linear(const Mat& x, const HalfMat& w, const RowVec& b) {
  Mat y = x * widen(w).transpose();  // (n, out)
  y.rowwise() += b;                  // + b on every token
  return y;
}

Mat weight(const Linear& l) {
  if (l.storage() != WeightStorage::F32) return widen(l.half);  // each value as its format defines it
  return float_weight(l);                                       // its rows, or read back from its panels
}

Mat target_table(const Weights& w) { return w.tgt_embed_half.empty() ? w.tgt_embed : widen(w.tgt_embed_half); }

Mat target_table_if_half(const Weights& w) { return w.tgt_embed_half.empty() ? Mat() : widen(w.tgt_embed_half); }

Mat generator_weight(const Model& m) {
  const HalfMat* h = m.weights.generator_half(m.config);
  return h ? widen(*h) : m.weights.generator_weight(m.config);
}

}  // namespace sf::ref
