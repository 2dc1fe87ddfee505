#include "base/gemm.h"

#include <algorithm>
#include <array>
#include <utility>

#if defined(__AVX__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/prefetch.h"
#include "base/threads.h"

namespace sf {

namespace {

using Index = Eigen::Index;

// One SIMD register of W floats and the handful of operations the micro-kernel needs.
#if defined(__AVX512F__)
struct Vec {
  using R = __m512;
  static constexpr int W = 16;
  static constexpr int MR = 12;  // 12 rows × 2 registers = 24 accumulators of 32 zmm
  static const char* name() { return "avx512"; }
  static R zero() { return _mm512_setzero_ps(); }
  static R bcast(const float* p) { return _mm512_set1_ps(*p); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R relu(R v) { return _mm512_max_ps(zero(), v); }  // Eigen's cwiseMax(0) order: max(-0, 0) = -0
  static R gated(R v, R g) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(g, zero(), _CMP_GT_OQ), v); }
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static R load_part(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }  // n < W
  static R load_n(const float* p, int n) { return n == W ? load(p) : load_part(p, n); }
  static void store_n(float* p, R v, int n) {
    if (n == W)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, mask(n), v);
  }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Vec {
  using R = __m256;
  static constexpr int W = 8;
  static constexpr int MR = 6;  // 6 rows × 2 registers = 12 accumulators of 16 ymm
  static const char* name() { return "avx2"; }
  static R zero() { return _mm256_setzero_ps(); }
  static R bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R relu(R v) { return _mm256_max_ps(zero(), v); }
  static R gated(R v, R g) { return _mm256_and_ps(v, _mm256_cmp_ps(g, zero(), _CMP_GT_OQ)); }
  static __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static R load_part(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }  // n < W
  static R load_n(const float* p, int n) { return n == W ? load(p) : load_part(p, n); }
  static void store_n(float* p, R v, int n) {
    if (n == W)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, mask(n), v);
  }
};
#else
struct Vec {  // portable: the compiler vectorises what it can
  struct R {
    float v[8];
  };
  static constexpr int W = 8;
  static constexpr int MR = 4;
  static const char* name() { return "portable"; }
  static R zero() { return R{}; }
  static R bcast(const float* p) {
    R r;
    for (float& x : r.v) x = *p;
    return r;
  }
  static R load(const float* p) { return load_n(p, W); }
  static R fma(R a, R b, R c) {
    for (int i = 0; i < W; ++i) c.v[i] += a.v[i] * b.v[i];
    return c;
  }
  static R add(R a, R b) {
    for (int i = 0; i < W; ++i) a.v[i] += b.v[i];
    return a;
  }
  static R relu(R v) {
    for (float& x : v.v) x = 0.0f > x ? 0.0f : x;
    return v;
  }
  static R gated(R v, R g) {
    for (int i = 0; i < W; ++i) v.v[i] = g.v[i] > 0.0f ? v.v[i] : 0.0f;
    return v;
  }
  static R load_n(const float* p, int n) {
    R r{};
    for (int i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  static R load_part(const float* p, int n) { return load_n(p, n); }
  static void store_n(float* p, R v, int n) {
    for (int i = 0; i < n; ++i) p[i] = v.v[i];
  }
};
#endif

constexpr int MR = Vec::MR;
constexpr int NR = 2 * Vec::W;
// Whether a panel's step of NR floats fills two cache lines or more (AVX-512, not AVX2): how B's
// panels are read, how a row block streams them, and how far A is read in place depend on it.
constexpr bool kTwoLineSteps = NR * sizeof(float) >= 128;
// Depth per block: a packed B block (KC × NR floats, 32 KiB: 256 deep with AVX-512, 512 with
// AVX2) stays in L1 while the row groups of A stream past it. A deeper block loads and stores each
// tile of C fewer times: on Zen 3 (AVX2) 512 rather than 256 ran 64 × 512 × 2048 at 95.8 GFLOP/s
// against 92.7, 128 × 3072 × 768 at 90.6 against 88.2.
constexpr Index KC = 8192 / NR;

Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// The columns a tile holds of its panel's NR: at most W (one register per row), all NR, or
// between (two registers, B's second half loaded masked to its nc − W columns, so that a partial
// panel is read in place: K_hᵀ over 11 keys with AVX2's W of 8).
enum class Cols : uint8_t { One, Two, Part };
Cols cols_of(Index nc) { return nc <= Vec::W ? Cols::One : nc == NR ? Cols::Two : Cols::Part; }

// C[0..R) × [0..nc) (row stride ldc) = (load_c ? C : 0) + (bias ? bias : 0) + Σ_k a[k][r]·b[k][c],
// over kc steps of a packed row group a (kc × MR) and a packed panel b (kc × NR). The sum runs
// k = 0, 1, … as one FMA chain per element, starting from the loaded C (plus bias).
//
// A is read with its rows consecutive (a_stride = 0: a[k·a_kstep + r], packed with a_kstep = MR or
// a transposed view read in place) or straight from a row-major A (row r at a + r·a_stride, its
// k-th float at [k]): a product on few rows (a forward over one sentence) would otherwise spend a
// quarter of its time packing them. B's row k is at b + k·b_stride (NR packed, or a row-major B's
// row stride).
//
// Prefetch: B is a weight packed ahead of time, which a forward streams from memory (the base
// model's 176 MB do not stay in cache): ask for the panel rows kPrefetchRows ahead (5 KiB with AVX-512, 2.5 with AVX2;
// 80 rows ran no faster on Zen 3), which the hardware prefetcher alone fetches too late. A panel packed just before is
// in L1 already: no prefetch there (it cost time in training).
constexpr Index kPrefetchRows = 40;
//
// That alone leaves the first row group of every depth block waiting on memory: it reads the
// block at the kernel's pace (128 bytes per 24 FMAs, more than one core streams), while the other
// groups find it in L1. So each tile of a packed B also asks for its share of the next block (the
// floats that follow this one: the next depth block, or the next panel's first) into L2, one row
// (NR floats) every `every` steps from `next`: spread over all the block's tiles, the weight is
// read from memory at a fraction of the kernel's pace and arrives before it is needed. On a
// Xeon (Emerald Rapids) a (64, 512) · (512, 2048) product on a weight not in cache ran at 133
// GFLOP/s without it, 161 with it: the rate of the same product with the weight in cache.
//
// C (Cols): a panel of more than W columns keeps two accumulators per row; a panel of at most W
// (an attention head's scores over ≤ 16 keys, a small vocabulary) runs on one, and skips the FMAs
// its empty half would waste. A panel short of NR loads B's rows masked to its nc columns, so it
// is read in place even at the end of B.
//
// ek: the epilogue on the tile's final values (its last depth block; None before), the gate's
// tile at `gate` (row stride gate_ld) for ReluGate.
template <int R, bool Prefetch, Cols C>
void micro_kernel(Index kc, const float* a, Index a_stride, Index a_kstep, const float* b, Index b_stride, float* c,
                  Index ldc, int nc, bool load_c, const float* bias, Epilogue::Kind ek, const float* gate,
                  Index gate_ld, const float* next, Index every) {
  constexpr bool Two = C != Cols::One;
  typename Vec::R acc0[R], acc1[R];
  const int n0 = std::min(nc, Vec::W), n1 = std::max(0, nc - Vec::W);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    acc0[r] = load_c ? Vec::load_n(c + r * ldc, n0) : Vec::zero();
    if (Two) acc1[r] = load_c ? Vec::load_n(c + r * ldc + Vec::W, n1) : Vec::zero();
  }
  if (bias) {
    const typename Vec::R b0 = Vec::load_n(bias, n0), b1 = Two ? Vec::load_n(bias + Vec::W, n1) : Vec::zero();
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      acc0[r] = Vec::add(acc0[r], b0);
      if (Two) acc1[r] = Vec::add(acc1[r], b1);
    }
  }
  // One step k: B's row, then every row r of the group, A's value for (r, k) at a_rk(r).
  auto step = [&](const float* b_row, auto a_rk) {
    if (Prefetch) {
      __builtin_prefetch(b_row + kPrefetchRows * NR);
      __builtin_prefetch(b_row + kPrefetchRows * NR + NR / 2);
    }
    const typename Vec::R b0 = Two ? Vec::load(b_row) : Vec::load_n(b_row, n0),
                          b1 = C == Cols::Two    ? Vec::load(b_row + Vec::W)
                               : C == Cols::Part ? Vec::load_part(b_row + Vec::W, n1)
                                                 : Vec::zero();
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const typename Vec::R ar = Vec::bcast(a_rk(r));
      acc0[r] = Vec::fma(ar, b0, acc0[r]);
      if (Two) acc1[r] = Vec::fma(ar, b1, acc1[r]);
    }
  };
  Index countdown = every;
  auto ask_next = [&] {  // the next block's share, a row every `every` steps
    if (!Prefetch || !next || --countdown > 0) return;
    prefetch_bytes(next, NR * int64_t{sizeof(float)});
    next += NR;
    countdown = every;
  };
  if (a_stride == 0) {
    for (Index k = 0; k < kc; ++k, a += a_kstep, b += b_stride) {
      step(b, [a](int r) { return a + r; });
      ask_next();
    }
  } else {
    for (Index k = 0; k < kc; ++k, b += b_stride) {
      step(b, [=](int r) { return a + r * a_stride + k; });
      ask_next();
    }
  }
  if (ek == Epilogue::Kind::Relu) {
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      acc0[r] = Vec::relu(acc0[r]);
      if (Two) acc1[r] = Vec::relu(acc1[r]);
    }
  } else if (ek == Epilogue::Kind::ReluGate) {
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      acc0[r] = Vec::gated(acc0[r], Vec::load_n(gate + r * gate_ld, n0));
      if (Two) acc1[r] = Vec::gated(acc1[r], Vec::load_n(gate + r * gate_ld + Vec::W, n1));
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    Vec::store_n(c + r * ldc, acc0[r], n0);
    if (Two) Vec::store_n(c + r * ldc + Vec::W, acc1[r], n1);
  }
}

using Kernel = void (*)(Index, const float*, Index, Index, const float*, Index, float*, Index, int, bool, const float*,
                        Epilogue::Kind, const float*, Index, const float*, Index);

template <bool Prefetch, Cols C, int... Rs>
constexpr std::array<Kernel, sizeof...(Rs)> make_kernels(std::integer_sequence<int, Rs...>) {
  return {&micro_kernel<Rs + 1, Prefetch, C>...};
}
using Rows = std::make_integer_sequence<int, MR>;
template <bool Prefetch>
constexpr std::array<std::array<Kernel, MR>, 3> kernels_of() {
  return {make_kernels<Prefetch, Cols::One>(Rows{}), make_kernels<Prefetch, Cols::Two>(Rows{}),
          make_kernels<Prefetch, Cols::Part>(Rows{})};
}
// kKernels[prefetch][Cols][R − 1]: the kernel for a group of R rows (the last group of A may be
// short) on a panel of nc columns (cols_of(nc)).
constexpr std::array<std::array<std::array<Kernel, MR>, 3>, 2> kKernels = {kernels_of<false>(), kernels_of<true>()};

Kernel kernel(bool prefetch, Index nc, int rows) {
  return kKernels[prefetch][static_cast<size_t>(cols_of(nc))][static_cast<size_t>(rows - 1)];
}

}  // namespace

#if defined(__AVX__)
namespace {
// Rows r[0..8) of an 8 × 8 block, transposed in registers: c[j][i] = r[i][j].
void transpose8(const __m256 (&r)[8], __m256 (&c)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]),
               t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]),
               t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]),
               t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  c[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  c[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  c[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  c[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  c[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  c[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  c[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  c[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Rows r[0..8) of an 8 × 8 block, stored transposed: q[j·ds + i] = r[i][j].
void store_transposed8(const __m256 (&r)[8], float* q, Index ds) {
  __m256 c[8];
  transpose8(r, c);
  for (int j = 0; j < 8; ++j) _mm256_storeu_ps(q + j * ds, c[j]);
}

// Rows [0, rows) of the 8 × 8 block at p (row stride ss), rows ≤ 8, stored transposed: q[j·ds + i]
// = p[i·ss + j] for i < rows, j < 8. A short block reads only its own rows and writes only their
// lanes (the packings' next slots hold other rows' floats).
void transpose8_rows(const float* p, Index ss, int rows, float* q, Index ds) {
  __m256 r[8], c[8];
  for (int i = 0; i < 8; ++i) r[i] = i < rows ? _mm256_loadu_ps(p + i * ss) : _mm256_setzero_ps();
  if (rows == 8) return store_transposed8(r, q, ds);
  transpose8(r, c);
#if defined(__AVX512VL__)
  const __mmask8 keep = static_cast<__mmask8>((1u << rows) - 1);
  for (int j = 0; j < 8; ++j) _mm256_mask_storeu_ps(q + j * ds, keep, c[j]);
#else
  const __m256i keep = _mm256_castps_si256(
      _mm256_cmp_ps(_mm256_set1_ps(static_cast<float>(rows)), _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), _CMP_GT_OQ));
  for (int j = 0; j < 8; ++j) _mm256_maskstore_ps(q + j * ds, keep, c[j]);
#endif
}
}  // namespace
#endif

// Both packings transpose (rows of a row-major A become its group's columns; rows of W become
// columns of a Wᵀ panel). 8 × 8 blocks go through registers, so that reads and writes both run
// along rows; a last block of fewer than 8 rows too, its missing rows zeros that it never stores.
void transpose_copy(const float* s, Index ss, Index rows, Index cols, float* d, Index ds) {
  for (Index i0 = 0; i0 < rows; i0 += 8) {
    const Index block = std::min<Index>(8, rows - i0);
    Index j0 = 0;
#if defined(__AVX__)
    for (; j0 + 8 <= cols; j0 += 8)
      transpose8_rows(s + i0 * ss + j0, ss, static_cast<int>(block), d + j0 * ds + i0, ds);
#endif
    for (Index i = i0; i < i0 + block; ++i)
      for (Index j = j0; j < cols; ++j) d[j * ds + i] = s[i * ss + j];
  }
}

namespace {

// d[j·ds + i] = s[j·ss + i] for j < lines, i < width ≤ W: rows copied as they are. A full row of W
// floats is a fixed-size copy the compiler turns into vector moves (copy_n would call memmove for
// every 48 or 128 bytes).
template <int W>
void copy_into(const float* s, Index ss, Index lines, Index width, float* d, Index ds) {
  if (width == W) {
    for (Index j = 0; j < lines; ++j)
      for (int i = 0; i < W; ++i) d[j * ds + i] = s[j * ss + i];
    return;
  }
  for (Index j = 0; j < lines; ++j)
    for (Index i = 0; i < width; ++i) d[j * ds + i] = s[j * ss + i];
}

// A's rows in the fewest groups of at most MR, the kernel's height, as even as they go: 32 rows on
// AVX2 (MR 6) run as 6, 6, 5, 5, 5, 5 rather than 6, 6, 6, 6, 6, 2 or 6, 6, 6, 6, 4, 4. A kernel of
// few rows has too few accumulators to hide the FMA latency and reads B's rows for little
// arithmetic: on AVX2 4 rows (8 accumulators) run at two thirds of the rate of 6, and on AVX-512 4
// rows at two thirds of the rate of 8 or 12. Each element's sum is the same whichever group
// computes it: the same bits.
struct RowGroups {
  Index count, base, extra;  // groups [0, extra) hold base + 1 rows, the rest base

  explicit RowGroups(Index rows)
      : count(ceil_div(rows, MR)), base(count ? rows / count : 0), extra(count ? rows % count : 0) {}
  Index start(Index g) const { return g * base + std::min(g, extra); }
  int rows(Index g) const { return static_cast<int>(base + (g < extra ? 1 : 0)); }
};

// Row group g of A (rows start(g) …, all k), packed as k × MR: ap[kk·MR + r] = A(start(g) + r, kk).
// The slots of rows past the group's are left as they are: a short group runs a kernel for its own
// row count, which never reads them.
void pack_a_group(MatRef a, const RowGroups& rg, Index k, Index g, float* ap) {
  const Index r0 = rg.start(g), rows = rg.rows(g);
  if (a.col_stride == 1) {
    transpose_copy(a.data + r0 * a.row_stride, a.row_stride, rows, k, ap, MR);
  } else if (a.row_stride == 1) {  // a transposed view: row kk of the group is `rows` consecutive floats
    copy_into<MR>(a.data + r0, a.col_stride, k, rows, ap, MR);
  } else {
    for (Index kk = 0; kk < k; ++kk)
      for (Index r = 0; r < rows; ++r) ap[kk * MR + r] = a.at(r0 + r, kk);
  }
}

// Every row group of A into ap (groups × k × MR); returns ap.
float* pack_a(MatRef a, const RowGroups& rg, Index k, float* ap) {
  for (Index g = 0; g < rg.count; ++g) pack_a_group(a, rg, k, g, ap + g * k * MR);
  return ap;
}

// Column panel p of B (columns p·NR …, all k), packed as k × NR: bp[kk·NR + c] = B(kk, p·NR + c).
// The slots of columns past n keep what the buffer held (zeros, or an earlier panel's floats): the
// kernel multiplies them into SIMD lanes of their own, which it never stores, and lanes do not mix,
// so filling them (4 KiB per call for a 32-deep attention head) would be wasted work.
void pack_b_panel(MatRef b, Index n, Index k, Index p, float* bp) {
  const Index c0 = p * NR, cols = std::min<Index>(NR, n - c0);
  if (b.col_stride == 1) {  // B row-major: row kk of the panel is `cols` consecutive floats
    copy_into<NR>(b.data + c0, b.row_stride, k, cols, bp, NR);
  } else if (b.row_stride == 1) {  // B = Wᵀ: column c of the panel is a row of W
    transpose_copy(b.data + c0 * b.col_stride, b.col_stride, cols, k, bp, NR);
  } else {
    for (Index kk = 0; kk < k; ++kk)
      for (Index c = 0; c < cols; ++c) bp[kk * NR + c] = b.at(kk, c0 + c);
  }
}

// Column panel p of B = Wᵀ with W (n, k) 16-bit: the panel's rows of W widened a depth block at a
// time into a float block (cols × KC, in L1), then transposed into the panel as pack_b_panel does
// for a float32 Wᵀ — the same floats in the same slots.
void pack_half_panel(const HalfMat& w, Index n, Index k, Index p, float* bp) {
  const Index c0 = p * NR, cols = std::min<Index>(NR, n - c0);
#if defined(__AVX2__)
  // BF16 on AVX2: 8 rows × 16 steps of W widened in registers and transposed there, straight into
  // the panel: no float block to write and read back. A BF16 is the upper half of its float, so a
  // register of 16 BF16 read as 8 32-bit lanes holds steps 2c (low halves) and 2c + 1 (high halves)
  // in lane c: a shift gives the even steps' floats, a mask the odd ones', with no zero-extending
  // shuffle; their transposes fill every other row of the panel. Steps past the last 16 go 8 at a
  // time, zero-extended; rows and steps past the last 8 through half_to_float: the same floats.
  if (w.storage == WeightStorage::BF16) {
    const Index c8 = cols / 8 * 8, k16 = k / 16 * 16, k8 = k / 8 * 8;
    const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    auto wide = [](const uint16_t* q) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    };
    for (Index i0 = 0; i0 < c8; i0 += 8) {
      const uint16_t* s = w.row(c0 + i0);
      const Index ss = w.cols;
      for (Index j0 = 0; j0 < k16; j0 += 16) {
        const uint16_t* q = s + j0;
        // The next 8 rows' line at this step, into L1 a group ahead: without it these loads waited
        // on memory (SmolLM2-135M's forward: 5 % of its time).
        if (i0 + 16 <= c8 && j0 % 32 == 0)
          for (int r = 8; r < 16; ++r) prefetch_line<0, 3>(q + r * ss);
        __m256 even[8], odd[8];
        for (int r = 0; r < 8; ++r) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + r * ss));
          even[r] = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
          odd[r] = _mm256_castsi256_ps(_mm256_and_si256(x, high));
        }
        store_transposed8(even, bp + j0 * NR + i0, 2 * NR);
        store_transposed8(odd, bp + (j0 + 1) * NR + i0, 2 * NR);
      }
      for (Index j0 = k16; j0 < k8; j0 += 8) {
        const uint16_t* q = s + j0;
        const __m256 r[8] = {wide(q),          wide(q + ss),     wide(q + 2 * ss), wide(q + 3 * ss),
                             wide(q + 4 * ss), wide(q + 5 * ss), wide(q + 6 * ss), wide(q + 7 * ss)};
        store_transposed8(r, bp + j0 * NR + i0, NR);
      }
      for (Index i = i0; i < i0 + 8; ++i)
        for (Index j = k8; j < k; ++j) bp[j * NR + i] = half_to_float(s[(i - i0) * ss + j], w.storage);
    }
    for (Index i = c8; i < cols; ++i) {
      const uint16_t* r = w.row(c0 + i);
      for (Index j = 0; j < k; ++j) bp[j * NR + i] = half_to_float(r[j], w.storage);
    }
    return;
  }
#endif
  thread_local std::vector<float, Eigen::aligned_allocator<float>> block;
  if (static_cast<Index>(block.size()) < NR * KC) block.resize(static_cast<size_t>(NR * KC));
  for (Index k0 = 0; k0 < k; k0 += KC) {
    const Index kc = std::min(KC, k - k0);
    for (Index c = 0; c < cols; ++c) widen(w.row(c0 + c) + k0, kc, w.storage, block.data() + c * kc);
    transpose_copy(block.data(), kc, cols, kc, bp + k0 * NR, NR);
  }
}

// Scratch that lives as long as its thread: packed A, and a packed B panel per worker.
float* scratch(std::vector<float, Eigen::aligned_allocator<float>>& v, Index size) {
  if (static_cast<Index>(v.size()) < size) v.resize(static_cast<size_t>(size));
  return v.data();
}
thread_local std::vector<float, Eigen::aligned_allocator<float>> tl_a, tl_b;

// One row of C: a matrix-vector product, which Eigen runs straight on B's layout. Packing B for a
// single row would cost as much as the product.
void vector_product(Index n, Index k, MatRef a, MatRef b, float* c, bool accumulate, const float* bias) {
  // Eigen's matrix-vector kernels need unit inner strides: maps with an outer stride only (a
  // dynamic inner stride would drop Eigen to a coefficient-wise product, several times slower).
  using RowMajorMap =
      Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>>;
  using ColMajorMap = Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
  // A's one row, read in place when its floats are consecutive (a query head, a softmax row), else
  // gathered; the product into C itself when nothing is added to it, and no allocation either way.
  thread_local RowVec x_own, prod_own;
  const float* x_data = a.data;
  if (a.col_stride != 1) {
    x_own.resize(k);
    for (Index i = 0; i < k; ++i) x_own[i] = a.data[i * a.col_stride];
    x_data = x_own.data();
  }
  const Eigen::Map<const RowVec> x(x_data, k);
  const bool direct = !accumulate && !bias;
  if (!direct) prod_own.resize(n);
  Eigen::Map<RowVec> prod(direct ? c : prod_own.data(), n);
  if (b.col_stride == 1) {  // B's rows are contiguous
    prod.noalias() = x * RowMajorMap(b.data, k, n, Eigen::OuterStride<>(b.row_stride));
  } else if (b.row_stride == 1) {  // B's columns are (B = Wᵀ: W's rows)
    prod.noalias() = x * ColMajorMap(b.data, k, n, Eigen::OuterStride<>(b.col_stride));
  } else {
    prod.setZero();
    for (Index i = 0; i < k; ++i)
      for (Index j = 0; j < n; ++j) prod[j] += x[i] * b.at(i, j);
  }
  if (direct) return;
  if (bias) prod += Eigen::Map<const RowVec>(bias, n);
  Eigen::Map<RowVec> y(c, n);
  if (accumulate)
    y += prod;
  else
    y = prod;
}

// Where the kernel reads B's panel p: its rows are `stride` floats apart.
struct Panel {
  const float* data;
  Index stride;
};

// Panel p of B: pre-packed (pb), read in place (b_in_place), or packed into `own` (k × NR floats).
// The kernel can read any panel of a row-major B in place: one short of NR columns it loads masked
// (Cols). Whether a product over `groups` row groups of A does: a panel of a row-major B (x in a
// weight gradient, W in dx = dy W, K_hᵀ or V_h in an attention head) is read in place when a
// step's NR floats fill two cache lines or more (AVX-512: faster than packing it, even at
// 2048-float strides): the prefetchers follow each line pair. With AVX2's 16 floats a step reads
// one line at B's row stride, which costs more the more groups pass the panel: on Zen 3 in place
// was 15 % faster than packed for 11 rows (two groups), as fast for 32, and slower from 64 up
// (dx = dy W, 704 × 128 × 512: 74 GFLOP/s against 96; dW = dyᵀ x, 128 × 512 × 704: 63 against
// 83). So with AVX2 a panel of more than W columns is packed for more than kInPlaceGroups groups.
// A panel of at most W columns is read in place.
constexpr bool kFullPanelsInPlace = kTwoLineSteps;
constexpr Index kInPlaceGroups = 4;
bool b_in_place(const MatRef& b, Index nc, Index groups) {
  return b.col_stride == 1 && (kFullPanelsInPlace || nc <= Vec::W || groups <= kInPlaceGroups);
}

Panel b_panel(const MatRef* b, const PackedB* pb, const HalfMat* hw, Index n, Index k, Index p, Index groups,
              float* own) {
  const Index nc = std::min<Index>(NR, n - p * NR);
  if (pb) return {pb->data.data() + p * pb->k * NR, NR};  // (k ≤ pb->k: its leading rows)
  if (hw && hw->in_panels()) {  // already in the panel's order (to_panels: NR wide): widened in one pass
    widen(hw->values.get() + p * k * NR, k * NR, hw->storage, own);
    return {own, NR};
  }
  if (hw) {
    pack_half_panel(*hw, n, k, p, own);
    return {own, NR};
  }
  if (b_in_place(*b, nc, groups)) return {b->data + p * NR, b->row_stride};
  pack_b_panel(*b, n, k, p, own);
  return {own, NR};
}

// Memory read or written soon: `rows` runs of `bytes` bytes, `row` bytes apart, asked for a slice at
// a time, one slice before each of the tiles that run meanwhile:
//   - into L2, the next panel's rows of W (B = Wᵀ, float32 or 16-bit) while one panel's tiles run,
//     so that its packing reads L2 rather than memory: a forward over a model larger than the
//     caches (GPT-2, the Llama-style shapes) reads every weight from memory once;
//   - into L1, the next row group's rows of A read in place and its rows of C, while the group
//     before passes the panels (the resident path). Without it a group's first tile waits on
//     memory for A's lines and C's, a dozen misses at a time, as its steps reach them. One core of
//     Zen 4, a 704 × 128 × 128 product (a training step's projection) with its operands cycled
//     through 60 copies, out of cache: A cold 87 → 98 GFLOP/s, C cold 88 → 98, A, C and W cold
//     77 → 87 (all in cache: 107); the training benchmark's step 43.4 → 42.5 ms on one core, 22.0
//     → 21.7 on two (medians of alternated runs). Asked for all at once before the group, A's
//     lines gained 2 %: more misses than the core tracks, so the asking itself waits.
enum class Ask : uint8_t { L2, L1, L1Write };
struct Lines {
  const char* first = nullptr;  // nullptr: nothing to ask for
  Index row = 0, bytes = 0, rows = 0;

  // Slice s of `slices`: its share of the lines, row by row (line i: row i / per_row, walked
  // without a division per line, which would cost a tile as much as its prefetching).
  template <Ask How>
  void prefetch(Index s, Index slices) const {
    if (!first) return;
    const Index per_row = ceil_div(bytes, kCacheLine), total = rows * per_row;
    const Index i0 = total * s / slices, i1 = std::min(total, ceil_div(total * (s + 1), slices));
    Index r = i0 / per_row, line = i0 % per_row;
    for (Index i = i0; i < i1; ++i) {
      const char* at = first + r * row + line * kCacheLine;
      if constexpr (How == Ask::L2) prefetch_line<0, 2>(at);
      if constexpr (How == Ask::L1) prefetch_line<0, 3>(at);
      if constexpr (How == Ask::L1Write) prefetch_line<1, 3>(at);
      if (++line == per_row) line = 0, ++r;
    }
  }
};

// Lines of floats: `rows` runs of `count` floats from p, `stride` floats apart, whole cache lines.
Lines float_lines(const float* p, Index stride, Index count, Index rows) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p), line = at & ~uintptr_t{kCacheLine - 1};
  constexpr Index F = sizeof(float);
  return {reinterpret_cast<const char*>(line), stride * F, count * F + static_cast<Index>(at - line), rows};
}

Lines panel_source(const MatRef* b, const HalfMat* hw, Index n, Index k, Index p) {
  const Index c0 = p * NR;
  if (c0 >= n) return {};
  const Index rows = std::min<Index>(NR, n - c0);
  if (hw && hw->in_panels()) return {reinterpret_cast<const char*>(hw->values.get() + p * k * NR), 0, k * NR * 2, 1};
  if (hw) return {reinterpret_cast<const char*>(hw->row(c0)), hw->cols * 2, k * 2, rows};
  if (b && b->row_stride == 1 && b->col_stride != 1)
    return {reinterpret_cast<const char*>(b->data + c0 * b->col_stride), b->col_stride * 4, k * 4, rows};
  return {};
}

// How the kernel reads A: packed into row groups (ap), or in place, row-major (a_stride = row
// stride) or transposed (consecutive rows: k steps of col_stride).
struct ASource {
  MatRef a;
  const float* ap;  // packed groups, or nullptr
  bool row_major;   // in place with unit col_stride
  const RowGroups& rg;
  // Row group g from depth k0: the kernel's (a, a_stride, a_kstep).
  const float* at(Index g, Index k, Index k0) const {
    if (ap) return ap + g * k * MR + k0 * MR;
    if (row_major) return a.data + rg.start(g) * a.row_stride + k0;
    return a.data + rg.start(g) + k0 * a.col_stride;
  }
  Index stride() const { return !ap && row_major ? a.row_stride : 0; }
  Index kstep() const { return ap ? MR : a.col_stride; }
  // What row group g reads of depth block [k0, k0 + kc) when A is read in place: its rows' kc
  // floats, or kc runs of its rows' floats. None past the last group, nor for packed A.
  Lines lines(Index g, Index k0, Index kc) const {
    if (ap || g >= rg.count) return {};
    const float* first = at(g, 0, k0);
    return row_major ? float_lines(first, a.row_stride, kc, rg.rows(g))
                     : float_lines(first, a.col_stride, rg.rows(g), kc);
  }
};

// B's panels, all k deep, are read by every row group in turn when they fit in L2 with room to
// spare (≤ 512 KiB: every weight of the training benchmark's model; not the base model's
// 512 × 2048 FFN weights, which stream from memory and are read once per product instead).
constexpr Index kResidentB = Index{1} << 17;  // floats

// The resident path asks for the next row group's A and C ahead (Lines) when the two hold more
// than this many floats (256 KiB): smaller ones are still in cache from the pass that wrote them,
// where asking costs time (the small model's forward, 32 × 128 × 512 at most: 1.7 % slower so).
constexpr Index kAskAheadFloats = Index{1} << 16;

// Row blocking of a long A: kRowBlock rows (a multiple of every kernel's MR) of one depth block
// stay in L2 (192 KiB with AVX-512, 384 with AVX2) while kPanelChunk panels pass them (that chunk's
// depth block of B: 256 KiB).
constexpr Index kRowBlock = 192;
constexpr Index kPanelChunk = 8;
static_assert(kRowBlock % MR == 0);

// How the tiles of one pass over a depth block of a packed B stream it from memory. prefetch: each
// asks for its panel's rows kPrefetchRows ahead (the kernel's Prefetch); count > 0: the `count`
// tiles of the pass share the asking for the next block, `rows` of its rows each, one every
// `every` steps. Worked out once per pass rather than per tile, whose call its two divisions would
// cost as much again.
struct Stream {
  bool prefetch = false;
  Index count = 0, rows = 0, every = 0;
};

// Whether the row-blocked path below streams packed B so. On AVX2 it does not: there the row block
// of A, the chunk's depth block of B and the next block asked for overflow Zen 3's 512 KiB L2
// (384 + 256 + 256 KiB; 192 + 128 + 128 with 256-deep blocks, where this was measured) and push
// each other out, and the later row blocks find the chunk in cache, where the prefetches are only
// extra instructions. Without them, on Zen 3: GPT-2's LM head over 1,024 tokens (1024 × 768 ×
// 50257) 77 → 84 GFLOP/s (median 75 → 82); 1024 × 768 × 3072 over weights that do not stay in L3,
// median 57 → 71, best 82 → 86. The panel-by-panel path keeps them (64 × 512 × 2048 over weights
// from memory: 86 → 91 with them). AVX-512 builds keep them (Zen 4's and Xeon's L2 hold all three).
constexpr bool kStreamRowBlocks = kTwoLineSteps;

// One product C (m, n) = A (m, k) · B (k, n) as its tiles see it: B packed (pb) or packed panel by
// panel as it is reached (b, or hw: B = Wᵀ of a 16-bit W, widened as it is packed).
struct Product {
  Index n = 0, k = 0;
  const MatRef* b = nullptr;
  const PackedB* pb = nullptr;
  const HalfMat* hw = nullptr;
  float* c = nullptr;
  Index ldc = 0;
  bool accumulate = false;
  const float* bias = nullptr;
  Epilogue ep;
  // Depth blocks of equal size (576 = 3 × 192, not 256 + 256 + 64): a tile's loads and stores of C
  // are then spread over as many steps as the blocks allow. Each element's FMA chain runs over k
  // in order across the blocks whatever their size: the same bits.
  Index blocks = 0, kcb = 0, panels = 0;

  Product(Index n_, Index k_, const MatRef* b_, const PackedB* pb_, const HalfMat* hw_, float* c_, Index ldc_,
          GemmOut out, const float* bias_, const Epilogue& ep_)
      : n(n_),
        k(k_),
        b(b_),
        pb(pb_),
        hw(hw_),
        c(c_),
        ldc(ldc_),
        accumulate(out == GemmOut::Accumulate),
        bias(bias_),
        ep(ep_),
        blocks(ceil_div(k_, KC)),
        kcb(ceil_div(k_, ceil_div(k_, KC))),
        panels(ceil_div(n_, NR)) {}

  // How the `count` tiles that pass depth block kb of a packed B in turn stream it (Stream); none
  // when B is not packed ahead.
  Stream stream(Index kb, Index count) const {
    if (!pb || count == 0) return {};
    const Index kc = std::min(kcb, k - kb * kcb), rows = ceil_div(kcb, count);
    return {true, count, rows, std::max<Index>(1, kc / rows)};
  }

  // C's MR × NR tile (g, p) over depth block kb, A read from `from`, B's panel p at bp; the tile is
  // the share-th of the st.count tiles that pass this block of a packed B in turn.
  void tile(const ASource& from, Index g, Index p, Index kb, Panel bp, Index share, const Stream& st) const {
    const Index k0 = kb * kcb, kc = std::min(kcb, k - k0);
    const float* next = nullptr;  // this tile's share of the next block, asked for into L2
    Index every = 0;
    if (st.count > 0 && !(p == panels - 1 && kb == blocks - 1)) {
      next = bp.data + (k0 + kc + share * st.rows) * NR;
      every = st.every;
    }
    const int rows = from.rg.rows(g);
    const Index r0 = from.rg.start(g);
    const int nc = static_cast<int>(std::min<Index>(NR, n - p * NR));
    const float* tile_bias = kb == 0 && bias ? bias + p * NR : nullptr;
    const bool last = kb == blocks - 1;
    const float* tile_gate = last && ep.gate ? ep.gate + r0 * ep.gate_ld + p * NR : nullptr;
    kernel(st.prefetch, nc, rows)(kc, from.at(g, k, k0), from.stride(), from.kstep(), bp.data + k0 * bp.stride,
                                  bp.stride, c + r0 * ldc + p * NR, ldc, nc, kb > 0 || accumulate, tile_bias,
                                  last ? ep.kind : Epilogue::Kind::None, tile_gate, ep.gate_ld, next, every);
  }

  // Panel p of C whole: B's panel stays in L1/L2 while the row groups of A stream past, the next
  // panel's rows prefetched meanwhile when they are to be packed.
  void panel(const ASource& from, Index p) const {
    const Index groups = from.rg.count;
    const Panel bp = b_panel(b, pb, hw, n, k, p, groups, pb ? nullptr : scratch(tl_b, k * NR));
    const Lines next = pb ? Lines{} : panel_source(b, hw, n, k, p + 1);
    for (Index kb = 0; kb < blocks; ++kb) {
      const Stream st = stream(kb, groups);
      for (Index g = 0; g < groups; ++g) {
        next.prefetch<Ask::L2>(kb * groups + g, blocks * groups);
        tile(from, g, p, kb, bp, g, st);
      }
    }
  }
};

// A product of a few tiles in one depth block with both operands read in place (an attention
// head's products, 9,216 per training step of the benchmark: 11 × 11 × 32 and 11 × 32 × 11): its
// tiles straight away, and true; false for any other product. A function of its own, ahead of
// run(), whose stack frame, scratch and packing cost as much as such a product's arithmetic.
constexpr Index kFewTiles = 8;
bool few_tiles(Index m, Index n, Index k, MatRef a, const MatRef& b, float* c, Index ldc, GemmOut out,
               const float* bias, const Epilogue& ep) {
  const bool row_major = a.col_stride == 1, transposed = a.row_stride == 1 && !row_major;
  if (m < 2 || n < 1 || k < 1 || k > KC || b.col_stride != 1 || !(row_major || transposed))
    return false;  // (one row is a matrix-vector product: run() sends it to Eigen)
  const RowGroups rg(m);
  if (rg.count > kInPlaceGroups || rg.count * ceil_div(n, NR) > kFewTiles) return false;
  const Product prod(n, k, &b, nullptr, nullptr, c, ldc, out, bias, ep);
  const ASource src{a, nullptr, row_major, rg};
  for (Index p = 0; p < prod.panels; ++p)
    for (Index g = 0; g < rg.count; ++g) prod.tile(src, g, p, 0, {b.data + p * NR, b.row_stride}, 0, Stream{});
  return true;
}

// Whether A (m, k) is read in place rather than packed. A transposed view (a weight gradient's
// dyᵀ: A(i, k) = dy(k, i)) is: a row group's MR values at step k are consecutive floats of dy's
// row k, one stream the prefetchers follow — packing it first costs more than the kernel's own
// reads. A row-major A is read in place when its row group stays in L1 while all of B's panels
// pass (a resident B), or when it is small (≤ 64 KiB: a forward over one short sentence, where
// packing would cost a quarter of the product). With AVX-512 it is also read in place up to a row
// block (m ≤ kRowBlock, the panel-by-panel path): packing it costs more than the strided reads of
// its MR rows, and on several cores each core packs all of it (split_panels). On Zen 5, one core,
// weights from memory: 64 × 512 × 512 184 → 194 GFLOP/s, 64 × 2048 × 512 187 → 193, the base
// forward 33.6 → 32.9 ms and GPT-2's over 128 tokens 175 → 168 ms (means of alternated runs).
// Otherwise (a longer A against a weight streamed from memory; with AVX2, whose kernel was not
// measured so, any A over 64 KiB) it is packed: the kernel then reads one sequential stream
// instead of MR rows whose strides (2 or 8 KiB) land in the same L1 sets and defeat the
// prefetchers.
constexpr bool kRowBlockInPlace = kTwoLineSteps;
bool a_in_place(Index m, Index k, MatRef a, bool resident) {
  const bool transposed = a.row_stride == 1 && a.col_stride != 1;
  const bool short_a = m * k <= (Index{1} << 14) || (kRowBlockInPlace && m <= kRowBlock);
  return transposed || (a.col_stride == 1 && (resident || short_a));
}

// The threads a product of this size shares its `panels` between: the cores share the panels of C
// (each computes whole panels, so no element's sum depends on the split); a product too small to
// pay for waking them runs on the calling thread alone.
int product_threads(Index m, Index n, Index k, Index panels) {
  int T = 1;  // (the size test first: an attention head's products run by the thousand)
#ifdef _OPENMP
  if (m * n * k >= (Index{1} << 20) && !omp_in_parallel()) T = static_cast<int>(std::min<Index>(threads(), panels));
#else
  (void)m, (void)n, (void)k, (void)panels;
#endif
  return T;
}

// The panels of `count` products that read the same A (m = rg's rows, depth k), shared between T
// threads in one parallel region: static shares of their panels taken in turn, product after
// product. Each thread packs all of A into a buffer of its own (unless it is read in place) rather
// than sharing the row groups: a group packed on another core reaches this one line by line from
// that core's cache, which costs more than packing it again (a 64 × 2048 A against a 2048 × 512
// weight ran 1.57× faster on two cores than on one with shared groups, 1.92× with a packing each;
// 64 × 512 × 512: 1.46×, 1.86×).
void split_panels(MatRef a, const RowGroups& rg, Index k, bool in_place, const Product* products, size_t count, int T) {
  RegionErrors errors;  // a thread's first A or B panel allocates its scratch
#ifdef _OPENMP
  Index total = 0;
  for (size_t i = 0; i < count; ++i) total += products[i].panels;
#pragma omp parallel num_threads(T)
  {
    float* own = nullptr;
    if (!in_place) errors.run([&] { own = pack_a(a, rg, k, scratch(tl_a, rg.count * k * MR)); });
    const ASource from{a, own, a.col_stride == 1, rg};
    const bool ready = in_place || own;
#pragma omp for schedule(static)
    for (Index q = 0; q < total; ++q) {
      size_t i = 0;
      Index p = q;
      while (p >= products[i].panels) p -= products[i++].panels;
      if (ready) errors.run([&] { products[i].panel(from, p); });
    }
  }
#else
  (void)a, (void)rg, (void)k, (void)in_place, (void)products, (void)count, (void)T;
#endif
  errors.rethrow();
}

// The product with B either packed (pb) or packed panel by panel as it is reached (b, or hw:
// B = Wᵀ of a 16-bit W, widened as it is packed).
void run(Index m, Index n, Index k, MatRef a, const MatRef* b, const PackedB* pb, const HalfMat* hw, float* c,
         Index ldc, GemmOut out, const float* bias, const Epilogue& ep) {
  if (m <= 0 || n <= 0) return;
  const bool accumulate = out == GemmOut::Accumulate;
  if (k == 0) {
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < n; ++j) c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + (bias ? bias[j] : 0.0f);
    apply_epilogue(ep, m, n, c, ldc);
    return;
  }
  if (m == 1 && b) {
    vector_product(n, k, a, *b, c, accumulate, bias);
    apply_epilogue(ep, m, n, c, ldc);
    return;
  }
  if (m == 1 && hw) {
    RowVec x(k), y(n);  // A's one row
    for (Index i = 0; i < k; ++i) x[i] = a.data[i * a.col_stride];
    matvec_half(x.data(), *hw, 0, n, y.data());
    for (Index j = 0; j < n; ++j) c[j] = (accumulate ? c[j] : 0.0f) + y[j] + (bias ? bias[j] : 0.0f);
    apply_epilogue(ep, m, n, c, ldc);
    return;
  }
  const bool row_major = a.col_stride == 1;
  const RowGroups rg(m);
  const Product prod(n, k, b, pb, hw, c, ldc, out, bias, ep);
  const Index groups = rg.count, panels = prod.panels, blocks = prod.blocks;
  const int T = product_threads(m, n, k, panels);
  const bool resident = T <= 1 && k * n <= kResidentB;
  const bool in_place = a_in_place(m, k, a, resident);
  float* const ap = in_place ? nullptr : scratch(tl_a, groups * k * MR);  // the calling thread's
  const ASource src{a, ap, row_major, rg};
  if (!in_place && T <= 1) pack_a(a, rg, k, ap);

  if (resident) {  // every row group against every panel, depth block by depth block
    thread_local std::vector<Panel> bps;
    bps.resize(static_cast<size_t>(panels));
    float* own = pb ? nullptr : scratch(tl_b, panels * k * NR);
    for (Index p = 0; p < panels; ++p)
      bps[static_cast<size_t>(p)] = b_panel(b, pb, hw, n, k, p, groups, own ? own + p * k * NR : nullptr);
    const Stream st{pb != nullptr};  // (a packed B this small: the prefetches alone)
    const bool ask_ahead = m * (k + n) > kAskAheadFloats;
    for (Index kb = 0; kb < blocks; ++kb)
      for (Index g = 0; g < groups; ++g) {
        // The next group's A and (first block) C, a slice before each of this group's tiles.
        const Index k0 = kb * prod.kcb, next = ask_ahead ? g + 1 : groups;
        const Lines next_a = src.lines(next, k0, std::min(prod.kcb, k - k0));
        const Lines next_c =
            kb == 0 && next < groups ? float_lines(c + rg.start(next) * ldc, ldc, n, rg.rows(next)) : Lines{};
        for (Index p = 0; p < panels; ++p) {
          next_a.prefetch<Ask::L1>(p, panels);
          next_c.prefetch<Ask::L1Write>(p, panels);
          prod.tile(src, g, p, kb, bps[static_cast<size_t>(p)], 0, st);
        }
      }
    return;
  }
  // A long A against panels that need no packing (a weight packed ahead of time, or a row-major B
  // read in place): blocked by rows too. Panel by panel, every panel would stream all of A from
  // L3 (12 MiB for GPT-2's fc2 over 1,024 tokens, which then ran at two thirds of the kernel's
  // rate); instead a block of kRowBlock rows of one depth block (192 or 384 KiB) stays in L2 while a
  // chunk of panels passes it, and the chunk's depth block (at most 4 MiB) stays in L3 while the
  // row blocks pass. Depth blocks still reach each element in order: the same bits.
  if (m > kRowBlock && !hw && (pb || b->col_stride == 1)) {
    const Index row_blocks = ceil_div(m, kRowBlock);
    auto range = [&](Index p0, Index p1) {  // the panels [p0, p1), each packed one in a slot of its own
      float* const own = pb ? nullptr : scratch(tl_b, (p1 - p0) * k * NR);
      thread_local std::vector<Panel> bps;
      bps.resize(static_cast<size_t>(p1 - p0));
      for (Index p = p0; p < p1; ++p)
        bps[static_cast<size_t>(p - p0)] = b_panel(b, pb, hw, n, k, p, groups, own ? own + (p - p0) * k * NR : nullptr);
      for (Index c0 = p0; c0 < p1; c0 += kPanelChunk)
        for (Index rb = 0; rb < row_blocks; ++rb)
          for (Index kb = 0; kb < blocks; ++kb) {
            const Index g0 = rb * kRowBlock / MR, g1 = std::min(groups, (rb + 1) * kRowBlock / MR);
            const Stream st = kStreamRowBlocks ? prod.stream(kb, g1 - g0) : Stream{};
            for (Index p = c0; p < std::min(p1, c0 + kPanelChunk); ++p)
              for (Index g = g0; g < g1; ++g) prod.tile(src, g, p, kb, bps[static_cast<size_t>(p - p0)], g - g0, st);
          }
    };
    if (T <= 1) {
      range(0, panels);
      return;
    }
    RegionErrors errors;
#ifdef _OPENMP
#pragma omp parallel num_threads(T)
    {
      if (!in_place) {
#pragma omp for schedule(static)
        for (Index g = 0; g < groups; ++g) pack_a_group(a, rg, k, g, ap + g * k * MR);
      }
      const Index t = omp_get_thread_num(), nt = omp_get_num_threads();
      errors.run([&] { range(panels * t / nt, panels * (t + 1) / nt); });
    }
#endif
    errors.rethrow();
    return;
  }
  // Otherwise panel by panel (Product::panel).
  if (T <= 1) {
    for (Index p = 0; p < panels; ++p) prod.panel(src, p);
    return;
  }
  split_panels(a, rg, k, in_place, &prod, 1, T);
}

}  // namespace

void apply_epilogue(const Epilogue& ep, Index m, Index n, float* c, Index ldc) {
  switch (ep.kind) {
    case Epilogue::Kind::None:  // every cached decoding step's projections: no pass at all
      return;
    case Epilogue::Kind::Relu:
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) c[i * ldc + j] = 0.0f > c[i * ldc + j] ? 0.0f : c[i * ldc + j];
      return;
    case Epilogue::Kind::ReluGate:
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) c[i * ldc + j] = ep.gate[i * ep.gate_ld + j] > 0.0f ? c[i * ldc + j] : 0.0f;
      return;
  }
}

PackedB pack_b(MatRef b, Index k, Index n) {
  PackedB p;
  const Index panels = ceil_div(n, NR);
  p.data.assign(static_cast<size_t>(std::max<Index>(panels * k * NR, 1)), 0.0f);
  pack_b_into(b, k, n, p);
  return p;
}

void pack_b_into(MatRef b, Index k, Index n, PackedB& p) {
  p.k = k;
  p.n = n;
  const Index panels = ceil_div(n, NR);
  if (static_cast<Index>(p.data.size()) < panels * k * NR) p.data.resize(static_cast<size_t>(panels * k * NR));
  for (Index q = 0; q < panels; ++q) pack_b_panel(b, n, k, q, p.data.data() + q * k * NR);
}

void unpack_bt_rows(const PackedB& b, Index j0, Index rows, float* out) {
  for (Index j = j0; j < j0 + rows; ++j) {
    const float* panel = b.data.data() + j / NR * b.k * NR + j % NR;  // column j of B: every NR-th float
    for (Index i = 0; i < b.k; ++i) out[(j - j0) * b.k + i] = panel[i * NR];
  }
}

void matvec_packed(const float* x, const PackedB& b, Index j0, Index j1, float* y) {
  // Panel by panel, each read front to back (the panels follow one another in memory: one stream),
  // kPrefetchRows rows ahead as the kernel reads them; a panel's NR sums in two registers.
  for (Index p = j0 / NR; p * NR < j1; ++p) {
    const float* bp = b.data.data() + p * b.k * NR;
    typename Vec::R acc0 = Vec::zero(), acc1 = Vec::zero();
    for (Index i = 0; i < b.k; ++i, bp += NR) {
      __builtin_prefetch(bp + kPrefetchRows * NR);
      __builtin_prefetch(bp + kPrefetchRows * NR + NR / 2);
      const typename Vec::R xi = Vec::bcast(x + i);
      acc0 = Vec::fma(xi, Vec::load(bp), acc0);
      acc1 = Vec::fma(xi, Vec::load(bp + Vec::W), acc1);
    }
    alignas(64) float sums[NR];
    Vec::store_n(sums, acc0, Vec::W);
    Vec::store_n(sums + Vec::W, acc1, Vec::W);
    for (Index j = std::max(j0, p * NR); j < std::min(j1, (p + 1) * NR); ++j) y[j] = sums[j - p * NR];
  }
}

Index packed_panel_width() { return NR; }

void gemm(Index m, Index n, Index k, MatRef a, MatRef b, float* c, Index ldc, GemmOut out, const float* bias,
          const Epilogue& ep) {
  if (few_tiles(m, n, k, a, b, c, ldc, out, bias, ep)) return;
  run(m, n, k, a, &b, nullptr, nullptr, c, ldc, out, bias, ep);
}

void gemm(Index m, Index n, Index k, MatRef a, const PackedB& b, float* c, Index ldc, GemmOut out) {
  run(m, n, k, a, nullptr, &b, nullptr, c, ldc, out, nullptr, {});
}

void gemm(Index m, MatRef a, const PackedB& b, float* c, Index ldc, GemmOut out, const float* bias,
          const Epilogue& ep) {
  run(m, b.n, b.k, a, nullptr, &b, nullptr, c, ldc, out, bias, ep);
}

void gemm(Index m, MatRef a, const HalfMat& w, float* c, Index ldc, GemmOut out, const float* bias,
          const Epilogue& ep) {
  run(m, w.rows, w.cols, a, nullptr, nullptr, &w, c, ldc, out, bias, ep);
}

void gemm_same_a(Index m, MatRef a, const PackedTarget* targets, size_t count) {
  if (count == 0) return;
  const Index k = targets[0].b->k;
  Index n = 0;
  bool same_depth = true;
  for (size_t i = 0; i < count; ++i) {
    n += targets[i].b->n;
    same_depth = same_depth && targets[i].b->k == k;
  }
  // One region pays where each product would open its own: several rows (one row is a
  // matrix-vector product), no more than a row block (a longer A is blocked by rows, product by
  // product), and enough work for more than one thread.
  const int T = m >= 2 && m <= kRowBlock && k > 0 && same_depth ? product_threads(m, n, k, ceil_div(n, NR)) : 1;
  if (T <= 1) {
    for (size_t i = 0; i < count; ++i) {
      const PackedTarget& t = targets[i];
      run(m, t.b->n, t.b->k, a, nullptr, t.b, nullptr, t.c, t.ldc, GemmOut::Overwrite, t.bias, {});
    }
    return;
  }
  std::vector<Product> products;
  products.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const PackedTarget& t = targets[i];
    products.emplace_back(t.b->n, k, nullptr, t.b, nullptr, t.c, t.ldc, GemmOut::Overwrite, t.bias, Epilogue{});
  }
  const RowGroups rg(m);
  split_panels(a, rg, k, a_in_place(m, k, a, false), products.data(), count, T);
}

const char* gemm_kernel_name() { return Vec::name(); }

}  // namespace sf
