// gemm_test.cpp — base/gemm.h against a double-precision product on every edge of its blocking:
// row groups (MR), column panels (NR), depth blocks (of equal size, at most 256 deep with AVX-512 and 512 with
// AVX2), strided and transposed operands,
// bias, accumulation, empty shapes; and the same bits on any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "base/gemm.h"
#include "base/threads.h"

namespace sf {
namespace {

// C = A·B (+ bias) in double, A (m, k) and B (k, n) through their views.
Eigen::MatrixXd reference(Eigen::Index m, Eigen::Index n, Eigen::Index k, MatRef a, MatRef b, const float* bias) {
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(m, n);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      double s = bias ? bias[j] : 0.0;
      for (Eigen::Index l = 0; l < k; ++l) s += static_cast<double>(a.at(i, l)) * b.at(l, j);
      c(i, j) = s;
    }
  return c;
}

// Float error bound for a dot product of k terms of size ≤ 1: k · 2⁻²³, with room.
double bound(Eigen::Index k) { return 4e-7 * static_cast<double>(k + 1); }

TEST(Gemm, MatchesADoubleProductOnEveryEdgeOfTheBlocking) {
  EXPECT_STRNE(gemm_kernel_name(), "");
  // m: 1, one short group, several groups and a tail; n: below a panel, odd, several panels and a
  // tail, and 27 (a last panel wider than one register but short of a panel: 11 columns with AVX2,
  // 27 with AVX-512, read in place masked); k: 1, odd, exactly one depth block and one over (256
  // with AVX-512, 512 with AVX2), several.
  for (int m : {1, 5, 12, 13, 64, 100})
    for (int n : {3, 16, 27, 33, 100})
      for (int k : {1, 7, 256, 257, 512, 513, 600}) {
        const Mat a = Mat::Random(m, k), w = Mat::Random(n, k), bmat = Mat::Random(k, n);
        const RowVec bias = RowVec::Random(n);
        // x Wᵀ + b, as a projection runs it
        Mat c(m, n);
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), c.data(), n, GemmOut::Overwrite, bias.data());
        const Eigen::MatrixXd want = reference(m, n, k, mat_ref(a), mat_ref_t(w), bias.data());
        ASSERT_LE((c.cast<double>() - want).cwiseAbs().maxCoeff(), bound(k)) << m << "x" << n << "x" << k;
        // the same product on the weight packed once
        const PackedB p = pack_b(mat_ref_t(w), k, n);
        Mat cp(m, n);
        gemm(m, mat_ref(a), p, cp.data(), n, GemmOut::Overwrite, bias.data());
        // The same bits, but for a single row: unpacked, that one is a matrix-vector product.
        if (m > 1) {
          ASSERT_TRUE(cp == c) << "packed " << m << "x" << n << "x" << k;
        }
        ASSERT_LE((cp.cast<double>() - want).cwiseAbs().maxCoeff(), bound(k)) << "packed " << m << "x" << n << "x" << k;
        // Aᵀ·B accumulated into C, as a weight gradient: A viewed transposed, B row-major
        const Mat at = Mat::Random(k, m);
        Mat acc = Mat::Random(m, n);
        const Mat before = acc;
        gemm(m, n, k, mat_ref_t(at), mat_ref(bmat), acc.data(), n, GemmOut::Accumulate);
        const Eigen::MatrixXd want_acc =
            before.cast<double>() + reference(m, n, k, mat_ref_t(at), mat_ref(bmat), nullptr);
        ASSERT_LE((acc.cast<double>() - want_acc).cwiseAbs().maxCoeff(), bound(k))
            << "acc " << m << "x" << n << "x" << k;
        // A·B both row-major, as attention's P V_h (a single tile goes straight to the kernel)
        Mat rr(m, n);
        gemm(m, n, k, mat_ref(a), mat_ref(bmat), rr.data(), n, GemmOut::Overwrite, bias.data());
        ASSERT_LE(
            (rr.cast<double>() - reference(m, n, k, mat_ref(a), mat_ref(bmat), bias.data())).cwiseAbs().maxCoeff(),
            bound(k))
            << "row-major " << m << "x" << n << "x" << k;
        // A with neither stride 1 (every other column of a wider matrix): packed whatever the path
        const Mat wide = Mat::Random(m, 2 * k);
        const MatRef strided{wide.data(), 2 * k, 2};
        Mat cs(m, n);
        gemm(m, n, k, strided, mat_ref(bmat), cs.data(), n, GemmOut::Overwrite);
        ASSERT_LE((cs.cast<double>() - reference(m, n, k, strided, mat_ref(bmat), nullptr)).cwiseAbs().maxCoeff(),
                  bound(k))
            << "strided " << m << "x" << n << "x" << k;
      }
}

// A product whose B is small enough to stay in L2 runs every row group against all of B's panels;
// a bigger one runs panel by panel. Each element is summed in the same order either way: the
// product in one piece (B of 600 × 300 floats, walked panel by panel) equals the same product cut
// into column slices of 100 (each B small enough to stay resident), bit for bit, for every way of
// reading A.
TEST(Gemm, SameBitsWhicheverOrderTheBlocksRun) {
  const ScopedThreads t(1);
  const int m = 100, n = 300, k = 600;
  const Mat a = Mat::Random(m, k), at = Mat::Random(k, m), w = Mat::Random(n, k);
  for (const MatRef av : {mat_ref(a), mat_ref_t(at)}) {
    Mat whole(m, n), sliced(m, n);
    gemm(m, n, k, av, mat_ref_t(w), whole.data(), n, GemmOut::Overwrite);
    for (int j0 = 0; j0 < n; j0 += 100)
      gemm(m, 100, k, av, {w.data() + j0 * k, 1, k}, sliced.data() + j0, n, GemmOut::Overwrite);
    EXPECT_TRUE(whole == sliced) << (av.col_stride == 1 ? "row-major A" : "transposed A");
    EXPECT_LE((whole.cast<double>() - reference(m, n, k, av, mat_ref_t(w), nullptr)).cwiseAbs().maxCoeff(), bound(k));
  }
}

// A long A (more rows than one row block, 192) against a B too big to stay in L2 runs blocked by
// rows as well as by panels and depth: the same bits as the product cut into row slices short
// enough for the panel-by-panel order, on any thread count, for a packed B and a row-major B read
// in place (n = 310: its last panel is short, 6 columns with AVX2 and 22 with AVX-512), with bias,
// accumulation and ReLU.
TEST(Gemm, LongABlockedByRowsGivesTheSameBits) {
  const int m = 500, k = 600;
  for (int n : {300, 310}) {
    const Mat a = Mat::Random(m, k), w = Mat::Random(n, k), bmat = Mat::Random(k, n), start = Mat::Random(m, n);
    const RowVec bias = RowVec::Random(n);
    const PackedB p = pack_b(mat_ref_t(w), k, n);
    // (packed, out, epilogue) → C; rows [r0, r0 + rows) only when sliced
    auto product = [&](bool packed, GemmOut out, const Epilogue& ep, Mat& c, int r0, int rows) {
      const MatRef ar{a.data() + r0 * k, k, 1};
      float* const cr = c.data() + r0 * n;
      if (packed)
        gemm(rows, ar, p, cr, n, out, bias.data(), ep);
      else
        gemm(rows, n, k, ar, mat_ref(bmat), cr, n, out, bias.data(), ep);
    };
    for (bool packed : {true, false}) {
      // the double product A·B + bias (packed: B = Wᵀ), once for the four ways of storing it
      const Eigen::MatrixXd product_in_double =
          reference(m, n, k, mat_ref(a), packed ? mat_ref_t(w) : mat_ref(bmat), bias.data());
      for (GemmOut out : {GemmOut::Overwrite, GemmOut::Accumulate})
        for (const Epilogue& ep : {Epilogue{}, Epilogue::relu()}) {
          Mat sliced = start;
          {
            const ScopedThreads t(1);
            for (int r0 = 0; r0 < m; r0 += 100) product(packed, out, ep, sliced, r0, 100);
          }
          for (int threads : {1, 2, 3}) {
            const ScopedThreads t(threads);
            Mat whole = start;
            product(packed, out, ep, whole, 0, m);
            ASSERT_TRUE(whole == sliced) << "n " << n << (packed ? " packed" : " in place") << ", "
                                         << (out == GemmOut::Accumulate ? "accumulated" : "overwritten") << ", "
                                         << threads << " threads";
          }
          Eigen::MatrixXd want = product_in_double;
          if (out == GemmOut::Accumulate) want += start.cast<double>();
          const Eigen::MatrixXd got = sliced.cast<double>();
          const double err = ep.kind == Epilogue::Kind::Relu ? (got - want.cwiseMax(0.0)).cwiseAbs().maxCoeff()
                                                             : (got - want).cwiseAbs().maxCoeff();
          ASSERT_LE(err, bound(k) * 2) << "n " << n;
        }
    }
  }
}

// A product whose B stays in cache while every row group passes it (the resident path) asks for
// the next group's A and C ahead once the two hold more than 256 KiB: a training step's 704 × 128
// × 128 projection. Asking changes no value: the same bits as the product cut into 100-row slices
// (too small to ask), for a row-major and a transposed A, overwritten and accumulated, and the
// double product's value.
TEST(Gemm, AskingAheadForRowGroupsGivesTheSameBits) {
  const ScopedThreads t(1);
  const int m = 704, n = 128, k = 128;
  const Mat a = Mat::Random(m, k), at = Mat::Random(k, m), w = Mat::Random(n, k), start = Mat::Random(m, n);
  for (const MatRef av : {mat_ref(a), mat_ref_t(at)})
    for (GemmOut out : {GemmOut::Overwrite, GemmOut::Accumulate}) {
      Mat whole = start, sliced = start;
      gemm(m, n, k, av, mat_ref_t(w), whole.data(), n, out);
      for (int r0 = 0; r0 < m; r0 += 100) {
        const MatRef ar{av.data + r0 * av.row_stride, av.row_stride, av.col_stride};
        gemm(std::min(100, m - r0), n, k, ar, mat_ref_t(w), sliced.data() + r0 * n, n, out);
      }
      const char* what = av.col_stride == 1 ? "row-major A" : "transposed A";
      ASSERT_TRUE(whole == sliced) << what;
      Eigen::MatrixXd want = reference(m, n, k, av, mat_ref_t(w), nullptr);
      if (out == GemmOut::Accumulate) want += start.cast<double>();
      ASSERT_LE((whole.cast<double>() - want).cwiseAbs().maxCoeff(), bound(k) * 2) << what;
    }
}

// Rows are grouped by the kernel's height, a short last group sharing rows with the one before it
// (64 rows: …, 12, 8, 8 with AVX-512): whatever group computes a row, its elements are the same
// sums. Every row count up to 40 and 64 against the same product cut into pairs of rows (each pair
// one group of 2), bit for bit, for a row-major A read in place (up to 40 rows) and packed (64), a transposed A, and a
// ReLU-gated epilogue (its gate read at the group's rows).
TEST(Gemm, AnyRowGroupingGivesTheSameBits) {
  const ScopedThreads t(1);
  const int n = 40, k = 300;
  std::vector<int> rows(40);
  for (int m = 1; m <= 40; ++m) rows[static_cast<size_t>(m - 1)] = m;
  rows.push_back(64);
  for (int m : rows) {
    const Mat a = Mat::Random(m, k), at = Mat::Random(k, m), w = Mat::Random(n, k), gate = Mat::Random(m, n);
    const PackedB p = pack_b(mat_ref_t(w), k, n);
    for (const MatRef av : {mat_ref(a), mat_ref_t(at)})
      for (const Epilogue& ep : {Epilogue{}, Epilogue{Epilogue::Kind::ReluGate, gate.data(), n}}) {
        Mat whole(m, n), pairs(m, n);
        gemm(m, av, p, whole.data(), n, GemmOut::Overwrite, nullptr, ep);
        for (int r0 = 0; r0 < m; r0 += 2) {
          const int r = std::min(2, m - r0);
          const MatRef ar{av.data + r0 * av.row_stride, av.row_stride, av.col_stride};
          const Epilogue ep_r = ep.gate ? Epilogue{Epilogue::Kind::ReluGate, gate.data() + r0 * n, n} : ep;
          gemm(r, ar, p, pairs.data() + r0 * n, n, GemmOut::Overwrite, nullptr, ep_r);
        }
        ASSERT_TRUE(whole == pairs) << m << " rows, " << (av.col_stride == 1 ? "row-major A" : "transposed A")
                                    << (ep.gate ? ", gated" : "");
      }
  }
}

// An attention head's products are a few tiles, which go straight to the kernel with both operands
// read in place; a longer product of the same columns packs B's panels. A row's sums are the same
// either way: the head-sized products (11 or 23 rows; 11, 27 or 32 columns; depth 32) equal the same
// rows of a 100-row product, bit for bit, for a row-major and a transposed A, with bias and
// accumulation.
TEST(Gemm, FewTilesEqualTheRowsOfALongerProduct) {
  const ScopedThreads t(1);
  const int k = 32, rows = 100;
  for (int n : {11, 27, 32}) {
    const Mat a = Mat::Random(rows, k), at = Mat::Random(k, rows), bmat = Mat::Random(k, n),
              start = Mat::Random(rows, n);
    const RowVec bias = RowVec::Random(n);
    for (const MatRef av : {mat_ref(a), mat_ref_t(at)})
      for (GemmOut out : {GemmOut::Overwrite, GemmOut::Accumulate}) {
        Mat whole = start;
        gemm(rows, n, k, av, mat_ref(bmat), whole.data(), n, out, bias.data());
        for (int m : {11, 23}) {
          Mat few = start.topRows(m);
          gemm(m, n, k, av, mat_ref(bmat), few.data(), n, out, bias.data());
          ASSERT_TRUE(few == whole.topRows(m))
              << m << " x " << n << (av.col_stride == 1 ? ", row-major A" : ", transposed A");
        }
      }
  }
}

// An attention head's query blocks each read the leading keys of K_hᵀ and V_h packed once
// (pack_b_into, its buffer reused): a product with the leading k rows and n columns of a packed B
// equals the product with that block of B unpacked, bit for bit, for prefixes that end inside a
// panel and inside a depth block, after the buffer held a bigger matrix.
TEST(Gemm, LeadingBlockOfAPackedBEqualsTheBlockUnpacked) {
  const ScopedThreads t(1);
  const int m = 48, k = 700, n = 300;
  const Mat a = Mat::Random(m, k), bmat = Mat::Random(k, n), big = Mat::Random(900, 400);
  PackedB p;
  pack_b_into(mat_ref(big), 900, 400, p);
  pack_b_into(mat_ref(bmat), k, n, p);
  for (int kk : {1, 64, 300, 513, 700})
    for (int nn : {5, 11, 16, 100, 300}) {
      Mat packed(m, nn), unpacked(m, nn);
      gemm(m, nn, kk, mat_ref(a), p, packed.data(), nn, GemmOut::Overwrite);
      gemm(m, nn, kk, mat_ref(a), {bmat.data(), n, 1}, unpacked.data(), nn, GemmOut::Overwrite);
      ASSERT_TRUE(packed == unpacked) << "k " << kk << ", n " << nn;
      ASSERT_LE((packed.cast<double>() - reference(m, nn, kk, mat_ref(a), {bmat.data(), n, 1}, nullptr))
                    .cwiseAbs()
                    .maxCoeff(),
                bound(kk))
          << "k " << kk << ", n " << nn;
    }
}

// Depth blocks split k evenly (576 = 3 × 192); every element's FMA chain runs over k in order
// across them, so a product equals the same product run as two calls that cut k anywhere, the
// second accumulating onto the first, bit for bit: for a weight read in place and packed.
TEST(Gemm, AnyDepthBlockingGivesTheSameBits) {
  const ScopedThreads t(1);
  const int m = 30, n = 70;
  for (int k : {300, 576, 600, 896})
    for (int cut : {1, 100, 256, 257}) {
      const Mat a = Mat::Random(m, k), w = Mat::Random(n, k);
      const RowVec bias = RowVec::Random(n);
      Mat whole(m, n), twice(m, n);
      gemm(m, n, k, mat_ref(a), mat_ref_t(w), whole.data(), n, GemmOut::Overwrite, bias.data());
      gemm(m, n, cut, {a.data(), k, 1}, {w.data(), 1, k}, twice.data(), n, GemmOut::Overwrite, bias.data());
      gemm(m, n, k - cut, {a.data() + cut, k, 1}, {w.data() + cut, 1, k}, twice.data(), n, GemmOut::Accumulate);
      ASSERT_TRUE(whole == twice) << "k " << k << " cut at " << cut;
      const PackedB p = pack_b(mat_ref_t(w), k, n);
      Mat packed(m, n);
      gemm(m, mat_ref(a), p, packed.data(), n, GemmOut::Overwrite, bias.data());
      ASSERT_TRUE(packed == whole) << "packed, k " << k;
    }
}

// A fused epilogue gives the bits of the product followed by its pass: ReLU (fc1 and its
// activation) and ReLU's backward gate (dh = dy W2, kept where the ReLU's output is > 0), on one
// tile, short groups and panels, several depth blocks (it must act once, on the last), a single
// row (Eigen's matrix-vector product), k = 0, and both loop orders; packed B too.
TEST(Gemm, FusedEpilogueEqualsTheSeparatePass) {
  const ScopedThreads t(1);
  for (int m : {1, 5, 12, 30})
    for (int n : {7, 16, 40, 300})
      for (int k : {0, 9, 256, 600}) {
        const Mat a = Mat::Random(m, k), w = Mat::Random(n, k);
        RowVec bias = RowVec::Random(n);
        bias[0] = -100.0f;  // column 0 below zero whatever the draw: the ReLU clamps something
        Mat gate = Mat::Random(m, n);
        gate(0, 0) = 0.0f;  // the gate's boundary: 0 is closed, like ReLU's derivative at 0
        Mat plain(m, n);
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), plain.data(), n, GemmOut::Overwrite, bias.data());
        const Mat relu = plain.cwiseMax(0.0f);
        const Mat gated = (gate.array() > 0.0f).select(plain, 0.0f);
        ASSERT_GT((relu.array() == 0.0f).count(), 0) << "a ReLU that clamps nothing tests nothing";

        Mat fused(m, n);
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), fused.data(), n, GemmOut::Overwrite, bias.data(), Epilogue::relu());
        ASSERT_TRUE(fused == relu) << "relu " << m << "x" << n << "x" << k;
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), fused.data(), n, GemmOut::Overwrite, bias.data(),
             Epilogue::relu_gate(gate));
        ASSERT_TRUE(fused == gated) << "gate " << m << "x" << n << "x" << k;
        if (m > 1) {  // (one row unpacked is Eigen's matrix-vector product: other bits)
          const PackedB p = pack_b(mat_ref_t(w), k, n);
          gemm(m, mat_ref(a), p, fused.data(), n, GemmOut::Overwrite, bias.data(), Epilogue::relu());
          ASSERT_TRUE(fused == relu) << "packed relu " << m << "x" << n << "x" << k;
        }
        // Accumulate: the epilogue acts on the sum, C + A·B.
        Mat acc = gate, sum = gate;
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), sum.data(), n, GemmOut::Accumulate);
        gemm(m, n, k, mat_ref(a), mat_ref_t(w), acc.data(), n, GemmOut::Accumulate, nullptr, Epilogue::relu());
        ASSERT_TRUE(acc == sum.cwiseMax(0.0f)) << "accumulated relu " << m << "x" << n << "x" << k;
      }
}

TEST(Gemm, WritesOnlyItsBlockOfALargerMatrix) {
  // C is the 20 × 40 block at (3, 5) of a 30 × 64 matrix: ldc 64; nothing around it changes.
  const Mat a = Mat::Random(20, 70), b = Mat::Random(70, 40);
  Mat big = Mat::Constant(30, 64, 7.0f);
  gemm(20, 40, 70, mat_ref(a), mat_ref(b), big.data() + 3 * 64 + 5, 64, GemmOut::Overwrite);
  const Mat want = a * b;
  EXPECT_LE((big.block(3, 5, 20, 40) - want).cwiseAbs().maxCoeff(), 1e-4f);
  Mat around = big;
  around.block(3, 5, 20, 40).setConstant(7.0f);
  EXPECT_TRUE((around.array() == 7.0f).all());
}

// Every element moved, strides respected, nothing outside the block written: rows below, at
// and past the 8- and 16-row blocks, columns below and past 8.
TEST(Gemm, TransposeCopyMovesEveryElement) {
  for (Eigen::Index rows : {0, 1, 7, 8, 9, 15, 16, 17, 24, 33, 40})
    for (Eigen::Index cols : {0, 1, 7, 8, 9, 16, 21}) {
      const Eigen::Index ss = cols + 3, ds = rows + 5;
      std::vector<float> src(static_cast<size_t>(rows * ss + 1));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
      std::vector<float> dst(static_cast<size_t>(std::max<Eigen::Index>(cols, 1) * ds), -1.0f);
      transpose_copy(src.data(), ss, rows, cols, dst.data(), ds);
      for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < ds; ++i)
          EXPECT_EQ(dst[static_cast<size_t>(j * ds + i)], i < rows ? src[static_cast<size_t>(i * ss + j)] : -1.0f)
              << rows << " x " << cols << " at (" << i << ", " << j << ")";
    }
}

TEST(Gemm, EmptyShapes) {
  const Mat a = Mat::Random(4, 3), b = Mat::Random(3, 5);
  const RowVec bias = RowVec::LinSpaced(5, 1, 5);
  Mat c = Mat::Constant(4, 5, 2.0f);
  gemm(4, 5, 0, mat_ref(a), mat_ref(b), c.data(), 5, GemmOut::Accumulate, bias.data());  // k = 0: C += bias
  EXPECT_FLOAT_EQ(c(3, 4), 7.0f);
  gemm(4, 5, 0, mat_ref(a), mat_ref(b), c.data(), 5, GemmOut::Overwrite);  // C = 0
  EXPECT_EQ(c.cwiseAbs().maxCoeff(), 0.0f);
  gemm(0, 5, 3, mat_ref(a), mat_ref(b), c.data(), 5, GemmOut::Overwrite);  // m = 0: nothing to write
  gemm(4, 0, 3, mat_ref(a), mat_ref(b), c.data(), 5, GemmOut::Overwrite);
  EXPECT_EQ(c.cwiseAbs().maxCoeff(), 0.0f);
}

TEST(Gemm, SameBitsOnAnyThreadCount) {
  const Mat a = Mat::Random(64, 512), w = Mat::Random(2048, 512);
  const RowVec bias = RowVec::Random(2048);
  const PackedB p = pack_b(mat_ref_t(w), 512, 2048);
  Mat one(64, 2048), one_packed(64, 2048);
  {
    const ScopedThreads t(1);
    gemm(64, 2048, 512, mat_ref(a), mat_ref_t(w), one.data(), 2048, GemmOut::Overwrite, bias.data());
    gemm(64, mat_ref(a), p, one_packed.data(), 2048, GemmOut::Overwrite, bias.data());
  }
  EXPECT_TRUE(one == one_packed);
  for (int n : {2, 3, 8}) {
    const ScopedThreads t(n);
    Mat got(64, 2048), got_packed(64, 2048);
    gemm(64, 2048, 512, mat_ref(a), mat_ref_t(w), got.data(), 2048, GemmOut::Overwrite, bias.data());
    gemm(64, mat_ref(a), p, got_packed.data(), 2048, GemmOut::Overwrite, bias.data());
    EXPECT_TRUE(got == one) << n << " threads";
    EXPECT_TRUE(got_packed == one) << n << " threads, packed";
  }
  EXPECT_GT(one.cwiseAbs().maxCoeff(), 1.0f);
}

}  // namespace
}  // namespace sf
