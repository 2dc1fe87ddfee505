#include "model/layer_norm.h"

#include <cmath>

namespace sf {

void layer_norm_forward(const Mat& x, const LayerNormWeights& w, Mat& out, LayerNormTrace* tr) {
  const Eigen::Index n = x.rows(), d = x.cols();
  out.resize(n, d);
  if (tr) {
    tr->mean.resize(n);
    tr->var.resize(n);
  }
  for (Eigen::Index t = 0; t < n; ++t) {
    const float mu = x.row(t).mean();
    const float var = (x.row(t).array() - mu).square().mean();
    const float rstd = 1.0f / std::sqrt(var + w.eps);
    out.row(t) = ((x.row(t).array() - mu) * rstd * w.weight.array() + w.bias.array()).matrix();
    if (tr) {
      tr->mean(t) = mu;
      tr->var(t) = var;
    }
  }
  if (tr && !tr->lean) tr->out = out;
}

void layer_norm_backward(const Mat& x, const LayerNormWeights& w, const LayerNormTrace& tr, const Mat& dy,
                         LayerNormWeights& g, Mat& dx) {
  const Eigen::Index n = x.rows(), d = x.cols();
  dx.resize(n, d);
  RowVec xhat(d), dxhat(d);
  for (Eigen::Index t = 0; t < n; ++t) {
    const float rstd = 1.0f / std::sqrt(tr.var(t) + w.eps);
    xhat = (x.row(t).array() - tr.mean(t)) * rstd;
    dxhat = dy.row(t).cwiseProduct(w.weight);
    g.weight += dy.row(t).cwiseProduct(xhat);
    g.bias += dy.row(t);
    const float mean_dxhat = dxhat.mean();
    const float mean_dxhat_xhat = dxhat.cwiseProduct(xhat).mean();
    dx.row(t) = rstd * (dxhat.array() - mean_dxhat - xhat.array() * mean_dxhat_xhat);
  }
}

}  // namespace sf
