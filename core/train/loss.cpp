#include "train/loss.h"

#include <cmath>

namespace sf {

LossResult cross_entropy(const Mat& logits, const std::vector<int>& targets, int pad, float smoothing, Mat* dlogits,
                         int normaliser) {
  const Eigen::Index n = logits.rows(), V = logits.cols();
  LossResult r;
  for (int y : targets) r.count += y != pad;
  const int norm = normaliser > 0 ? normaliser : r.count;
  if (dlogits) dlogits->setZero(n, V);
  RowVec p(V);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int y = targets[static_cast<size_t>(i)];
    if (y == pad) continue;
    const float mx = logits.row(i).maxCoeff();
    p = (logits.row(i).array() - mx).exp();
    const double z = p.sum();
    const double lse = mx + std::log(z);
    // −log p_j = lse − logit_j, summed in double for a loss that matches the reference closely.
    const double nll = lse - logits(i, y);
    const double mean_nll = lse - static_cast<double>(logits.row(i).sum()) / static_cast<double>(V);
    r.sum += (1.0 - smoothing) * nll + smoothing * mean_nll;
    Eigen::Index arg;
    logits.row(i).maxCoeff(&arg);
    r.correct += arg == y;
    if (dlogits) {
      auto g = dlogits->row(i);
      g = p / static_cast<float>(z);
      g.array() -= smoothing / static_cast<float>(V);
      g(y) -= 1.0f - smoothing;
      g /= static_cast<float>(norm);
    }
  }
  r.loss = r.count ? r.sum / r.count : 0.0;
  return r;
}

}  // namespace sf
