#include "model/packed_gemm.h"

namespace sf {

PackedWeight pack_weight(const Mat& w) {
  PackedWeight p;
  p.rows = w.rows();
  p.cols = w.cols();
  p.wt = pack_b(ref_t(w), w.cols(), w.rows());
  return p;
}

void packed_product(const Mat& x, const PackedWeight& w, Mat& y, const RowVec* bias) {
  y.resize(x.rows(), w.rows);
  gemm(x.rows(), ref(x), w.wt, y.data(), w.rows, GemmOut::Overwrite, bias ? bias->data() : nullptr);
}

}  // namespace sf
