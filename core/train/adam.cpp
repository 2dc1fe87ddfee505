#include "train/adam.h"

#include <algorithm>
#include <cmath>

namespace sf {

void Adam::init(const Config& c) {
  allocate(m, c);
  allocate(v, c);
  zero_grads(m, c);
  zero_grads(v, c);
  t = 0;
}

namespace {

// One tensor's update, fused in one pass: the four arrays do not fit in L2 together, so each is
// read once. `restrict`: they never overlap, which lets the compiler vectorise the loop.
void adam_update(float* __restrict p, const float* __restrict g, float* __restrict mm, float* __restrict vv,
                 int64_t n, float beta1, float beta2, float eps, float step_size, float inv_sqrt_bc2) {
  for (int64_t j = 0; j < n; ++j) {
    mm[j] = beta1 * mm[j] + (1.0f - beta1) * g[j];
    vv[j] = beta2 * vv[j] + (1.0f - beta2) * g[j] * g[j];
    p[j] -= step_size * mm[j] / (std::sqrt(vv[j]) * inv_sqrt_bc2 + eps);
  }
}

// f(i) for every tensor index i < count, shared between n_threads cores (tensors are independent:
// the result does not depend on the count).
template <typename F>
void for_each_tensor(size_t count, int n_threads, F f) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(n_threads, 1)) if (n_threads > 1)
#endif
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) f(static_cast<size_t>(i));
}

}  // namespace

void Adam::step(Weights& params, const Weights& grads, const Config& c, double lr, int n_threads) {
  ++t;
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(t));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const auto P = param_table(params, c);
  const auto G = param_table(grads, c);
  const auto M = param_table(m, c);
  const auto V = param_table(v, c);
  // Tensors are independent: the cores share them, each element updated as on one core.
  for_each_tensor(P.size(), n_threads, [&](size_t k) {
    adam_update(P[k].data, G[k].data, M[k].data, V[k].data, P[k].numel(), beta1, beta2, eps, step_size, inv_sqrt_bc2);
  });
}

double squared_norm(const float* data, int64_t n) {
  // Float partial sums over blocks of 512 (Eigen's vectorised reduction; relative error ~1e-6),
  // added in double: a float sum over a whole tensor would lose digits, a double one per element
  // would not vectorise.
  double s = 0;
  for (int64_t i = 0; i < n; i += 512) {
    const Eigen::Index len = static_cast<Eigen::Index>(std::min<int64_t>(512, n - i));
    s += Eigen::Map<const Eigen::ArrayXf>(data + i, len).square().sum();
  }
  return s;
}

std::vector<double> squared_norms(const Weights& grads, const Config& c, int n_threads) {
  const std::vector<ParamRef> table = param_table(grads, c);
  std::vector<double> out(table.size());
  for_each_tensor(table.size(), n_threads, [&](size_t i) { out[i] = squared_norm(table[i].data, table[i].numel()); });
  return out;
}

double grad_norm(const Weights& grads, const Config& c) {
  double s = 0;
  for (double v : squared_norms(grads, c)) s += v;
  return std::sqrt(s);
}

void scale_grads(Weights& grads, const Config& c, float factor) {
  for (ParamRef& p : param_table(grads, c))
    for (int64_t j = 0; j < p.numel(); ++j) p.data[j] *= factor;
}

void zero_grads(Weights& grads, const Config& c) {
  for (ParamRef& p : param_table(grads, c)) std::fill(p.data, p.data + p.numel(), 0.0f);
}

void add_grads(Weights& a, const Weights& b, const Config& c, int n_threads) {
  const auto A = param_table(a, c);
  const auto B = param_table(b, c);
  for_each_tensor(A.size(), n_threads, [&](size_t i) {
    float* __restrict a_data = A[i].data;
    const float* __restrict b_data = B[i].data;
    for (int64_t j = 0; j < A[i].numel(); ++j) a_data[j] += b_data[j];
  });
}

}  // namespace sf
