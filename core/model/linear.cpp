#include "model/linear.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "base/gemm.h"
#include "base/matvec.h"
#include "base/phase_timer.h"
#include "base/split_governor.h"
#include "base/threads.h"
#include "model/packed_gemm.h"

namespace sf {
namespace {

// Split a one-row product only where it is worth a fork: ≥ 256 Ki weights.
bool worth_splitting(int T, int64_t weights) { return T > 1 && weights >= (int64_t{1} << 18); }

// The calling thread's governor: the explorer's worker, the CLI's main thread and each test
// thread decide for their own products.
thread_local SplitGovernor t_governor;
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A one-row product y (1, out) = x Wᵀ split between T threads by rows of W: kernel(r0, r1) writes
// outputs [r0, r1). Every thread but the last takes a multiple of `block` rows (16: whole cache
// lines of y; a packed weight's panel width: whole panels); each output's sum does not depend on
// the rows a call covers. An exception a kernel throws is rethrown here, after the region. The
// governor learns how long the region took against the time the calling thread spent on its own
// rows, and how long the threads had been idle before it.
template <typename Kernel>
void split_rows(Eigen::Index out, int T, Eigen::Index block, const Kernel& kernel) {
  RegionErrors errors;
  const auto t0 = std::chrono::steady_clock::now();
  double first_share = 0;
  for_each_share(out, T, block, [&](int t, int64_t r0, int64_t r1) {
    if (r1 > r0) errors.run([&] { kernel(r0, r1); });
    if (t == 0) first_share = seconds_since(t0);
  });
  t_governor.record_split(t0, std::chrono::steady_clock::now(), first_share, T);
  errors.rethrow();
}

// kernel(0, out) for a one-row product over `weights` entries: on this thread, or split by
// split_rows where a fork is worth it and the governor lets it.
template <typename Kernel>
void run_rows(Eigen::Index out, int64_t weights, Eigen::Index block, const Kernel& kernel) {
  const int T = threads();
  if (!worth_splitting(T, weights) || !t_governor.should_split())
    kernel(0, out);
  else
    split_rows(out, T, block, kernel);
}

// A one-row product y (1, out) = x Wᵀ (+ bias, then the epilogue) for a weight of `out` rows and
// `weights` entries: kernel(r0, r1) writes outputs [r0, r1).
template <typename Kernel>
void one_row_product(Eigen::Index out, int64_t weights, Mat& y, const RowVec* bias, const Epilogue& ep,
                     const Kernel& kernel, Eigen::Index block = 16) {
  y.resize(1, out);
  run_rows(out, weights, block, kernel);
  if (bias) y += *bias;
  apply_epilogue(ep, y.rows(), y.cols(), y.data(), y.cols());
}

}  // namespace

void matmul_transposed(const Mat& x, const Mat& weight, Mat& y, const RowVec* bias, const Epilogue& ep) {
  const ScopedPhase phase(Phase::ProjectionForward);
  const Eigen::Index out = weight.rows();
  if (x.rows() != 1) {
    y.resize(x.rows(), out);
    gemm(x.rows(), out, weight.cols(), mat_ref(x), mat_ref_t(weight), y.data(), out, GemmOut::Overwrite,
         bias ? bias->data() : nullptr, ep);
    return;
  }
  one_row_product(out, weight.size(), y, bias, ep,
                  [&](Eigen::Index r0, Eigen::Index r1) { matvec(x.data(), weight, r0, r1, y.data()); });
}

void matmul_transposed(const Mat& x, const HalfMat& weight, Mat& y, const RowVec* bias, const Epilogue& ep) {
  const Eigen::Index out = weight.rows;
  if (x.rows() != 1) {
    y.resize(x.rows(), out);
    gemm(x.rows(), mat_ref(x), weight, y.data(), out, GemmOut::Overwrite, bias ? bias->data() : nullptr, ep);
    return;
  }
  one_row_product(
      out, weight.size(), y, bias, ep,
      [&](Eigen::Index r0, Eigen::Index r1) { matvec_half(x.data(), weight, r0, r1, y.data()); },
      weight.in_panels() ? weight.panel : 16);
}

void matmul_transposed(const Mat& x, const PackedWeight& weight, Mat& y, const RowVec* bias, const Epilogue& ep) {
  if (x.rows() != 1) {
    packed_product(x, weight, y, bias, ep);
    return;
  }
  const ScopedPhase phase(Phase::ProjectionForward);
  const PackedB& b = weight.wt;
  one_row_product(
      b.n, b.n * b.k, y, bias, ep,
      [&](Eigen::Index r0, Eigen::Index r1) { matvec_packed(x.data(), b, r0, r1, y.data()); }, packed_panel_width());
}

namespace {

// Outputs [r0, r1) of one row's x Wᵀ (no bias) on the storage linear_forward reads for one row.
void one_row_range(const float* x, const Linear& l, Eigen::Index r0, Eigen::Index r1, float* y) {
  if (l.storage() != WeightStorage::F32)
    matvec_half(x, l.half, r0, r1, y);
  else if (l.packed_only())
    matvec_packed(x, l.packed->wt, r0, r1, y);
  else
    matvec(x, l.weight, r0, r1, y);
}

Eigen::Index out_features(const Linear& l) {
  if (l.storage() != WeightStorage::F32) return l.half.rows;
  return l.packed_only() ? l.packed->wt.n : l.weight.rows();
}

// One row through every part: their outputs, concatenated, split between the cores as one
// product's rows (whole panels when a part runs on its packing).
void one_row_parts(const Mat& x, std::initializer_list<LinearOut> parts) {
  const ScopedPhase phase(Phase::ProjectionForward);
  Eigen::Index total = 0;
  int64_t weights = 0;
  bool packed = false;
  for (const LinearOut& p : parts) {
    const Eigen::Index out = out_features(*p.l);
    p.y->resize(1, out);
    total += out;
    weights += int64_t{out} * x.cols();
    packed = packed || (p.l->storage() == WeightStorage::F32 && p.l->packed_only()) || p.l->half.in_panels();
  }
  // rows [r0, r1) of the concatenation, part by part
  const auto kernel = [&](Eigen::Index r0, Eigen::Index r1) {
    Eigen::Index o = 0;
    for (const LinearOut& p : parts) {
      const Eigen::Index out = p.y->cols(), a = std::max(r0, o), b = std::min(r1, o + out);
      if (a < b) one_row_range(x.data(), *p.l, a - o, b - o, p.y->data());
      o += out;
    }
  };
  run_rows(total, weights, packed ? packed_panel_width() : 16, kernel);
  for (const LinearOut& p : parts) *p.y += p.l->bias;
}

}  // namespace

bool small_splits_pay() { return !t_governor.backing_off(); }

void linear_forward(const Mat& x, const Linear& l, Mat& y, const Epilogue& ep) {
  if (x.rows() == 1) {
    one_row_parts(x, {{&l, &y}});
    apply_epilogue(ep, 1, y.cols(), y.data(), y.cols());
    return;
  }
  if (l.storage() != WeightStorage::F32) {
    matmul_transposed(x, l.half, y, &l.bias, ep);
    return;
  }
  if (l.packed) {
    matmul_transposed(x, *l.packed, y, &l.bias, ep);
    return;
  }
  linear_forward(x, l.weight, l.bias, y, ep);
}

void linear_forward_same_input(const Mat& x, std::initializer_list<LinearOut> parts) {
  if (x.rows() == 1) {
    one_row_parts(x, parts);
    return;
  }
  bool packed = true;
  for (const LinearOut& p : parts) packed = packed && p.l->storage() == WeightStorage::F32 && p.l->packed;
  if (!packed) {
    for (const LinearOut& p : parts) linear_forward(x, *p.l, *p.y);
    return;
  }
  const ScopedPhase phase(Phase::ProjectionForward);
  std::vector<PackedTarget> targets;
  for (const LinearOut& p : parts) {
    const PackedB& b = p.l->packed->wt;
    p.y->resize(x.rows(), b.n);
    targets.push_back({&b, p.y->data(), b.n, p.l->bias.data()});
  }
  gemm_same_a(x.rows(), mat_ref(x), targets.data(), targets.size());
}

void linear_backward(const Mat& x, const Mat& weight, const Mat& dy, Mat& dweight, RowVec& dbias, Mat* dx,
                     GemmOut dx_out, const Epilogue& dx_ep, GemmOut dw_out) {
  const Eigen::Index n = x.rows(), in = x.cols(), out = dy.cols();
  {
    const ScopedPhase phase(Phase::WeightGradient);
    gemm(out, in, n, mat_ref_t(dy), mat_ref(x), dweight.data(), in, dw_out);  // dyᵀ (out, n) · x (n, in)
  }
  // Σ over rows a row at a time, vectorised along the row (Eigen's colwise sum of a row-major
  // matrix walks each column down with a stride). The same order: rows 0, 1, … per column.
  {
    const ScopedPhase phase(Phase::BiasGradient);
    RowVec sum = RowVec::Zero(out);  // (out)
    for (Eigen::Index i = 0; i < n; ++i) sum += dy.row(i);
    dbias += sum;
  }
  if (dx) {
    const ScopedPhase phase(Phase::InputGradient);
    if (dx_out == GemmOut::Overwrite) dx->resize(n, in);
    gemm(n, in, out, mat_ref(dy), mat_ref(weight), dx->data(), in, dx_out, nullptr,
         dx_ep);  // dy (n, out) · W (out, in)
  }
}

}  // namespace sf
