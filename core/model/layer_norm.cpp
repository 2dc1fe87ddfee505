#include "model/layer_norm.h"

#include <cmath>

#include "base/phase_timer.h"
#include "base/threads.h"

namespace sf {

namespace {

// Rows [t0, t1) of RMSNorm: x̂ = x / √(mean(x²) + ε) · γ.
void rms_norm_rows(const Mat& x, const LayerNormWeights& w, Eigen::Index t0, Eigen::Index t1, Mat& out,
                   LayerNormTrace* tr) {
  const Eigen::Index d = x.cols();
  for (Eigen::Index t = t0; t < t1; ++t) {
    const float ms = x.row(t).squaredNorm() / static_cast<float>(d);  // mean(x²)
    const float rstd = 1.0f / std::sqrt(ms + w.eps);
    out.row(t) = ((x.row(t).array() * rstd) * w.weight.array()).matrix();
    if (tr) tr->rms(t) = std::sqrt(ms);
  }
}

// Rows [t0, t1) of LayerNorm: (x − μ) / √(σ² + ε) · γ + β.
void layer_norm_rows(const Mat& x, const LayerNormWeights& w, Eigen::Index t0, Eigen::Index t1, Mat& out,
                     LayerNormTrace* tr) {
  for (Eigen::Index t = t0; t < t1; ++t) {
    const float mu = x.row(t).mean();
    const float var = (x.row(t).array() - mu).square().mean();
    const float rstd = 1.0f / std::sqrt(var + w.eps);
    out.row(t) = ((x.row(t).array() - mu) * rstd * w.weight.array() + w.bias.array()).matrix();
    if (tr) {
      tr->mean(t) = mu;
      tr->var(t) = var;
    }
  }
}

}  // namespace

void layer_norm_forward(const Mat& x, const LayerNormWeights& w, Mat& out, LayerNormTrace* tr) {
  const ScopedPhase phase(Phase::LayerNorm);
  const Eigen::Index n = x.rows(), d = x.cols();
  const bool rms = w.kind == NormKind::RMSNorm;
  out.resize(n, d);
  if (tr && rms) tr->rms.resize(n);
  if (tr && !rms) {
    tr->mean.resize(n);
    tr->var.resize(n);
  }
  // Each row is normalised alone: a long input's rows split between the cores give the same bits.
  split_pass(n, d, 1, [&](int64_t t0, int64_t t1) {
    if (rms)
      rms_norm_rows(x, w, t0, t1, out, tr);
    else
      layer_norm_rows(x, w, t0, t1, out, tr);
  });
  if (tr && tr->kind != Recording::Training) tr->out = out;
}

namespace {

// One row of the backward in one pass: x̂ = (x − μ)·rstd, ∂ℓ/∂x̂ = dy ⊙ γ, and the parameter
// grads γ' += dy ⊙ x̂, β' += dy (as separate Eigen statements, four passes over the row).
void row_grads(const float* x, const float* dy, const float* __restrict gain, float mu, float rstd, Eigen::Index d,
               float* __restrict xhat, float* __restrict dxhat, float* __restrict gw, float* __restrict gb) {
  for (Eigen::Index j = 0; j < d; ++j) {
    xhat[j] = (x[j] - mu) * rstd;
    dxhat[j] = dy[j] * gain[j];
    gw[j] += dy[j] * xhat[j];
    gb[j] += dy[j];
  }
}

}  // namespace

void layer_norm_backward(const Mat& x, const LayerNormWeights& w, const LayerNormTrace& tr, const Mat& dy,
                         LayerNormWeights& g, Mat& dx, const Mat* skip) {
  const ScopedPhase phase(Phase::LayerNormBackward);
  const Eigen::Index n = x.rows(), d = x.cols();
  dx.resize(n, d);
  RowVec xhat(d), dxhat(d);  // (d) one row's x̂ and ∂ℓ/∂x̂
  for (Eigen::Index t = 0; t < n; ++t) {
    const float rstd = 1.0f / std::sqrt(tr.var(t) + w.eps);
    row_grads(x.data() + t * d, dy.data() + t * d, w.weight.data(), tr.mean(t), rstd, d, xhat.data(), dxhat.data(),
              g.weight.data(), g.bias.data());
    const float mean_dxhat = dxhat.mean();
    const float mean_dxhat_xhat = dxhat.cwiseProduct(xhat).mean();
    dx.row(t) = rstd * (dxhat.array() - mean_dxhat - xhat.array() * mean_dxhat_xhat);
    if (skip) dx.row(t) += skip->row(t);  // (the row in L1 still)
  }
}

}  // namespace sf
