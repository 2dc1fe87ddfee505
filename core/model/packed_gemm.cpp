#include "model/packed_gemm.h"

#include <algorithm>

#include "base/threads.h"

namespace sf {

namespace {

// Eigen 3.4's sequential matrix product (products/GeneralMatrixMatrix.h) with the lhs (the weight)
// packed ahead of time: the same packing routines, kernel and block sizes it would use itself.
// Computed as yᵀ (out, n) = W (out, in) · xᵀ (in, n), all three in Eigen's column-major view of
// our row-major storage.
using Index = Eigen::Index;
using Traits = Eigen::internal::gebp_traits<float, float>;
using LhsMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::RowMajor>;
using RhsMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::ColMajor>;
using ResMapper = Eigen::internal::blas_data_mapper<float, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
using PackLhs = Eigen::internal::gemm_pack_lhs<float, Index, LhsMapper, Traits::mr, Traits::LhsProgress,
                                               Traits::LhsPacket4Packing, Eigen::RowMajor>;
using PackRhs = Eigen::internal::gemm_pack_rhs<float, Index, RhsMapper, Traits::nr, Eigen::ColMajor>;
using Gebp = Eigen::internal::gebp_kernel<float, float, Index, ResMapper, Traits::mr, Traits::nr, false, false>;

constexpr Index kAlign = 16;      // floats: every block starts on 64 bytes, as the kernel loads them
constexpr Index kMaxRows = 240;   // rows per block (5 panels of 48 with AVX-512): work to share out

Index blocks(Index size, Index block) { return (size + block - 1) / block; }

}  // namespace

PackedWeight pack_weight(const Mat& w) {
  PackedWeight p;
  p.rows = w.rows();
  p.cols = w.cols();
  Index kc = p.cols, mc = p.rows, nc = 64;  // the heuristic for a product with 64 token rows
  Eigen::internal::computeProductBlockingSizes<float, float>(kc, mc, nc, Index{1});
  p.kc = std::max<Index>(kc, 1);
  p.mc = std::max<Index>(std::min(mc, kMaxRows), 1);
  const Index nk = blocks(p.cols, p.kc), ni = blocks(p.rows, p.mc);
  Index total = 0;
  for (Index ib = 0; ib < ni; ++ib) {
    const Index m = std::min(p.mc, p.rows - ib * p.mc);
    for (Index kb = 0; kb < nk; ++kb) {
      p.offset.push_back(total);
      total += blocks(m * std::min(p.kc, p.cols - kb * p.kc), kAlign) * kAlign;
    }
  }
  p.data.resize(std::max<Index>(total, 1));
  const LhsMapper lhs(w.data(), p.cols);  // W row-major: row stride = in
  PackLhs pack;
  for (Index ib = 0; ib < ni; ++ib)
    for (Index kb = 0; kb < nk; ++kb)
      pack(p.data.data() + p.offset[static_cast<size_t>(ib * nk + kb)], lhs.getSubMapper(ib * p.mc, kb * p.kc),
           std::min(p.kc, p.cols - kb * p.kc), std::min(p.mc, p.rows - ib * p.mc));
  return p;
}

void packed_product(const Mat& x, const PackedWeight& w, Mat& y) {
  const Index n = x.rows();
  y.setZero(n, w.rows);  // the kernel accumulates
  if (n == 0) return;
  const Index nk = blocks(w.cols, w.kc), ni = blocks(w.rows, w.mc);
  // xᵀ packed whole, depth block after depth block (kc · n floats each, 64-byte aligned), so that
  // the cores then share the row blocks of W in one parallel region (one fork, one barrier).
  const Index stride = blocks(w.kc * n, kAlign) * kAlign;
  thread_local Eigen::VectorXf block_b;
  if (block_b.size() < nk * stride) block_b.resize(nk * stride);
  float* const b = block_b.data();
  const RhsMapper rhs(x.data(), x.cols());  // xᵀ (in, n) column-major: column j is row j of x
  const ResMapper res(y.data(), w.rows);    // yᵀ (out, n) column-major: y row-major (n, out)
  PackRhs pack;
  for (Index kb = 0; kb < nk; ++kb)
    pack(b + kb * stride, rhs.getSubMapper(kb * w.kc, 0), std::min(w.kc, w.cols - kb * w.kc), n);
  const int T = static_cast<int>(std::min<Index>(threads(), ni));
#ifdef _OPENMP
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
#endif
  for (Index ib = 0; ib < ni; ++ib) {
    Gebp gebp;
    const Index i2 = ib * w.mc;
    for (Index kb = 0; kb < nk; ++kb)
      gebp(res.getSubMapper(i2, 0), w.data.data() + w.offset[static_cast<size_t>(ib * nk + kb)], b + kb * stride,
           std::min(w.mc, w.rows - i2), std::min(w.kc, w.cols - kb * w.kc), n, 1.0f);
  }
}

}  // namespace sf
