#include "model/embedding.h"

#include <cmath>

namespace sf {

void embed(const Mat& table, const Mat& positions, const std::vector<int>& ids, int batch, int pos0,
           bool use_positional, Mat& x, EmbeddingTrace* tr) {
  const int rows = static_cast<int>(ids.size());
  const int n = batch ? rows / batch : 0;
  const int d = static_cast<int>(table.cols());
  const float scale = std::sqrt(static_cast<float>(d));
  Mat pe = Mat::Zero(rows, d);
  x.resize(rows, d);
  for (int r = 0; r < rows; ++r) {
    x.row(r) = table.row(ids[static_cast<size_t>(r)]) * scale;
    if (use_positional) pe.row(r) = positions.row(pos0 + r % n);
  }
  if (tr) {
    tr->ids = ids;
    tr->positions.resize(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) tr->positions[static_cast<size_t>(r)] = pos0 + r % n;
    tr->scaled = x;
    tr->pe = pe;
  }
  x += pe;
  if (tr && tr->dropout_mask.rows() == x.rows() && tr->dropout_mask.cols() == x.cols())
    x.array() *= tr->dropout_mask.array();
  if (tr) tr->sum = x;
}

void embed_backward(const EmbeddingTrace& tr, const Mat& dx, Mat& dtable, Mat* dpos) {
  const float scale = std::sqrt(static_cast<float>(dtable.cols()));
  const bool drop = tr.dropout_mask.rows() == dx.rows() && tr.dropout_mask.cols() == dx.cols();
  for (Eigen::Index r = 0; r < dx.rows(); ++r) {
    const RowVec d = drop ? RowVec(dx.row(r).cwiseProduct(tr.dropout_mask.row(r))) : RowVec(dx.row(r));
    dtable.row(tr.ids[static_cast<size_t>(r)]) += scale * d;
    if (dpos) dpos->row(tr.positions[static_cast<size_t>(r)]) += d;
  }
}

}  // namespace sf
