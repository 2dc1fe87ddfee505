#include "analysis/head_thumbnail.h"

#include <algorithm>

#include "analysis/layer_stats.h"

namespace sf {

HeadThumbnail head_thumbnail(const Mat& w, const Mat& mask, int side) {
  HeadThumbnail t;
  t.rows = static_cast<int>(w.rows());
  t.cols = static_cast<int>(w.cols());
  t.mean_entropy = row_entropies(w, mask).mean;
  if (w.size() == 0) return t;
  t.max = w.maxCoeff();
  side = std::max(1, side);
  const Eigen::Index br = (w.rows() + side - 1) / side, bc = (w.cols() + side - 1) / side;  // block size
  if (br == 1 && bc == 1) {
    t.map = w;
    return t;
  }
  const Eigen::Index rows = (w.rows() + br - 1) / br, cols = (w.cols() + bc - 1) / bc;
  t.map.resize(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const Eigen::Index r0 = i * br, nr = std::min(br, w.rows() - r0);
    for (Eigen::Index j = 0; j < cols; ++j) {
      const Eigen::Index c0 = j * bc, nc = std::min(bc, w.cols() - c0);
      t.map(i, j) = w.block(r0, c0, nr, nc).maxCoeff();
    }
  }
  return t;
}

}  // namespace sf
