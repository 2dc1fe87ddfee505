#include "model/packed_gemm.h"

#include "base/phase_timer.h"

namespace sf {

PackedWeight pack_weight(const Mat& w) { return {pack_b(mat_ref_t(w), w.cols(), w.rows())}; }

Mat unpacked(const PackedWeight& w) {
  Mat out(w.wt.n, w.wt.k);
  unpack_bt_rows(w.wt, 0, w.wt.n, out.data());
  return out;
}

void packed_product(const Mat& x, const PackedWeight& w, Mat& y, const RowVec* bias, const Epilogue& ep) {
  const ScopedPhase phase(Phase::ProjectionForward);
  y.resize(x.rows(), w.wt.n);
  gemm(x.rows(), mat_ref(x), w.wt, y.data(), w.wt.n, GemmOut::Overwrite, bias ? bias->data() : nullptr, ep);
}

}  // namespace sf
