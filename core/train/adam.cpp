#include "train/adam.h"

#include <algorithm>
#include <cmath>

#include "base/phase_timer.h"
#include "base/threads.h"

namespace sf {

void Adam::init(const Config& c) {
  allocate(m, c);
  allocate(v, c);
  zero_grads(m, c);
  zero_grads(v, c);
  t = 0;
}

namespace {

// Squares are summed in float over blocks of kBlock floats (Eigen's vectorised reduction; relative
// error ~1e-6), and the blocks' sums in double: a float sum over a whole tensor would lose digits,
// a double one per element would not vectorise. The sum of the shards' gradients is made a block
// at a time too, so that it stays in registers and L1 between its three uses.
constexpr int64_t kBlock = 512;

double block_squares(const float* x, int64_t n) {
  return Eigen::Map<const Eigen::ArrayXf>(x, static_cast<Eigen::Index>(n)).square().sum();
}

// The shards' gradient tables, and tensor i's block [j0, j0 + n) of their sum: in place when there
// is one shard, else summed into `out` (kBlock floats) in shard order.
struct Parts {
  std::vector<std::vector<ParamRef>> tables;

  bool keep_matrices;  // the next backward writes over them

  Parts(const GradientSum& g, const Config& c) : keep_matrices(g.matrices_overwritten) {
    for (Weights* w : g.parts) tables.push_back(param_table(*w, c));
  }
  // Zeroes tensor i's block [j0, j0 + n) of every part, once the update has read it (but for a
  // matrix the next backward writes over).
  void clear(size_t i, int64_t j0, int64_t n) const {
    if (keep_matrices && tables[0][i].kind == ParamRef::Matrix) return;
    for (const auto& t : tables) std::fill(t[i].data + j0, t[i].data + j0 + n, 0.0f);
  }
  const float* block(size_t i, int64_t j0, int64_t n, float* __restrict out) const {
    if (tables.size() == 1) return tables[0][i].data + j0;
    const float* __restrict a = tables[0][i].data + j0;
    const float* __restrict b = tables[1][i].data + j0;
    for (int64_t j = 0; j < n; ++j) out[j] = a[j] + b[j];
    for (size_t s = 2; s < tables.size(); ++s) {
      const float* __restrict x = tables[s][i].data + j0;
      for (int64_t j = 0; j < n; ++j) out[j] += x[j];
    }
    return out;
  }
};

// n elements of one tensor's update. The four arrays do not fit in L2 together, so each is read
// once. `restrict`: they never overlap, which lets the compiler vectorise the loop.
void adam_update(float* __restrict p, const float* __restrict g, float* __restrict mm, float* __restrict vv, int64_t n,
                 float scale, float beta1, float beta2, float eps, float step_size, float inv_sqrt_bc2) {
  for (int64_t j = 0; j < n; ++j) {
    const float gj = g[j] * scale;  // exact for scale 1
    mm[j] = beta1 * mm[j] + (1.0f - beta1) * gj;
    vv[j] = beta2 * vv[j] + (1.0f - beta2) * gj * gj;
    p[j] -= step_size * mm[j] / (std::sqrt(vv[j]) * inv_sqrt_bc2 + eps);
  }
}

// f(i) for every tensor index i < count, shared between n_threads cores (tensors are independent:
// the result does not depend on the count).
template <typename F>
void for_each_tensor(size_t count, [[maybe_unused]] int n_threads, F f) {  // unused without OpenMP (fuzz build)
  RegionErrors errors;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(n_threads, 1)) if (n_threads > 1)
#endif
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i)
    errors.run([&] {
      const ScopedPhase phase(Phase::Adam);  // (the other cores' share too)
      f(static_cast<size_t>(i));
    });
  errors.rethrow();
}

}  // namespace

std::vector<double> Adam::step(Weights& params, const GradientSum& grads, const Config& c, double lr, int n_threads) {
  ++t;
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(t));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const auto P = param_table(params, c);
  const auto M = param_table(m, c);
  const auto V = param_table(v, c);
  const Parts G(grads, c);
  std::vector<double> squares(P.size(), 0.0);
  // Tensors are independent: the cores share them, each element updated as on one core.
  for_each_tensor(P.size(), n_threads, [&](size_t k) {
    alignas(64) float sum[kBlock];
    double sq = 0;
    for (int64_t j0 = 0; j0 < P[k].numel(); j0 += kBlock) {
      const int64_t n = std::min(kBlock, P[k].numel() - j0);
      const float* g = G.block(k, j0, n, sum);
      sq += block_squares(g, n);
      adam_update(P[k].data + j0, g, M[k].data + j0, V[k].data + j0, n, grads.scale, beta1, beta2, eps, step_size,
                  inv_sqrt_bc2);
      G.clear(k, j0, n);  // (its lines are in L1 still)
    }
    squares[k] = sq;
  });
  return squares;
}

std::vector<double> squared_norms(const GradientSum& grads, const Config& c, int n_threads) {
  const Parts G(grads, c);
  std::vector<double> out(G.tables.empty() ? 0 : G.tables[0].size());
  for_each_tensor(out.size(), n_threads, [&](size_t k) {
    alignas(64) float sum[kBlock];
    const int64_t numel = G.tables[0][k].numel();
    double sq = 0;
    for (int64_t j0 = 0; j0 < numel; j0 += kBlock) {
      const int64_t n = std::min(kBlock, numel - j0);
      sq += block_squares(G.block(k, j0, n, sum), n);
    }
    out[k] = sq;
  });
  return out;
}

void zero_grads(Weights& grads, const Config& c) {
  for (ParamRef& p : param_table(grads, c)) std::fill(p.data, p.data + p.numel(), 0.0f);
}

}  // namespace sf
