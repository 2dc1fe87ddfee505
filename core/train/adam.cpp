#include "train/adam.h"

#include <cmath>

namespace sf {

void Adam::init(const Config& c) {
  allocate(m, c);
  allocate(v, c);
  zero_grads(m, c);
  zero_grads(v, c);
  t = 0;
}

void Adam::step(Weights& params, const Weights& grads, const Config& c, double lr) {
  ++t;
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(t));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  auto P = param_table(params, c);
  auto G = param_table(grads, c);
  auto M = param_table(m, c);
  auto V = param_table(v, c);
  for (size_t i = 0; i < P.size(); ++i) {
    float* p = P[i].data;
    const float* g = G[i].data;
    float* mm = M[i].data;
    float* vv = V[i].data;
    for (int64_t j = 0; j < P[i].numel(); ++j) {
      mm[j] = beta1 * mm[j] + (1.0f - beta1) * g[j];
      vv[j] = beta2 * vv[j] + (1.0f - beta2) * g[j] * g[j];
      p[j] -= step_size * mm[j] / (std::sqrt(vv[j]) * inv_sqrt_bc2 + eps);
    }
  }
}

double grad_norm(const Weights& grads, const Config& c) {
  double s = 0;
  for (const ParamRef& p : param_table(grads, c))
    for (int64_t j = 0; j < p.numel(); ++j) s += static_cast<double>(p.data[j]) * p.data[j];
  return std::sqrt(s);
}

void scale_grads(Weights& grads, const Config& c, float factor) {
  for (ParamRef& p : param_table(grads, c))
    for (int64_t j = 0; j < p.numel(); ++j) p.data[j] *= factor;
}

void zero_grads(Weights& grads, const Config& c) {
  for (ParamRef& p : param_table(grads, c)) std::fill(p.data, p.data + p.numel(), 0.0f);
}

void add_grads(Weights& a, const Weights& b, const Config& c) {
  auto A = param_table(a, c);
  auto B = param_table(b, c);
  for (size_t i = 0; i < A.size(); ++i)
    for (int64_t j = 0; j < A[i].numel(); ++j) A[i].data[j] += B[i].data[j];
}

}  // namespace sf
