#include "model/linear.h"

#include <algorithm>

#include "base/threads.h"

namespace sf {

void matmul_transposed(const Mat& x, const Mat& weight, Mat& y) {
  const Eigen::Index out = weight.rows();
  const int T = threads();
  // Split only what Eigen leaves on one core (one row) and is worth a fork: ≥ 256 Ki weights.
  if (T <= 1 || x.rows() != 1 || weight.size() < (Eigen::Index{1} << 18)) {
    y.noalias() = x * weight.transpose();
    return;
  }
  y.resize(x.rows(), out);
  const Eigen::Index block = 16;
  const Eigen::Index per_thread = (out / block + T - 1) / T * block;  // a multiple of 16 rows
#ifdef _OPENMP
#pragma omp parallel for num_threads(T) schedule(static, 1)
#endif
  for (int t = 0; t < T; ++t) {
    const Eigen::Index r0 = std::min(out, t * per_thread);
    const Eigen::Index r1 = t == T - 1 ? out : std::min(out, r0 + per_thread);
    if (r1 > r0) y.middleCols(r0, r1 - r0).noalias() = x * weight.middleRows(r0, r1 - r0).transpose();
  }
}

}  // namespace sf
