#include "base/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/allocator.h"
#include "base/gemm.h"
#include "base/simd.h"

namespace sf {

using Index = Eigen::Index;

const char* to_string(WeightStorage s) {
  switch (s) {
    case WeightStorage::F32:
      return "F32";
    case WeightStorage::BF16:
      return "BF16";
    case WeightStorage::F16:
      return "F16";
  }
  return "F32";
}

float half_to_float(uint16_t h, WeightStorage s) {
  uint32_t bits;
  if (s == WeightStorage::BF16) {
    bits = static_cast<uint32_t>(h) << 16;
  } else {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: mant · 2^-24, exact in float
      const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    bits = exp == 31 ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace portable {

void widen(const uint16_t* src, int64_t n, WeightStorage s, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(src[i], s);
}

void matvec_half(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  const Index k = w.cols;
  if (w.in_panels()) {  // one FMA chain per output, i = 0, 1, …: the SIMD kernel's bits
    for (Index r = r0; r < r1; ++r) {
      float acc = 0.0f;
      for (Index i = 0; i < k; ++i) acc = std::fma(x[i], half_to_float(w.at(r, i), w.storage), acc);
      y[r] = acc;
    }
    return;
  }
  constexpr int L = 8;  // lanes: partial sums of every 8th product
  for (Index r = r0; r < r1; ++r) {
    const uint16_t* row = w.row(r);
    float acc[L] = {};
    Index i = 0;
    for (; i + L <= k; i += L)
      for (int l = 0; l < L; ++l) acc[l] += x[i + l] * half_to_float(row[i + l], w.storage);
    float sum = 0.0f;
    for (float a : acc) sum += a;
    for (; i < k; ++i) sum += x[i] * half_to_float(row[i], w.storage);
    y[r] = sum;
  }
}

}  // namespace portable

namespace {

#ifdef SF_SIMD
using simd::V;

template <WeightStorage S>
void widen_simd(const uint16_t* src, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + V::W <= n; i += V::W) V::store(out + i, V::load_half<S>(src + i));
  for (; i < n; ++i) out[i] = half_to_float(src[i], S);
}

// How the rows are read: from two or four parts of the range side by side (matvec_rows' streams),
// with or without software prefetch. One core reads memory faster from several sequential streams
// than from one, but every stream starts cold; the best choice differs between the two hosts it
// was measured on (cached steps at t = 129, alternated in one binary):
//   - Zen 4 (AMD): without prefetch, four streams from 4 MB up and two below. Four everywhere took
//     Qwen2.5-0.5B's step (8.7 MB feed-forward matrices, a 272 MB output projection) to 1.09–1.14 ×
//     its floor against 1.12–1.14 with two, and SmolLM2-135M's (matrices of at most 1.8 MB) to
//     1.07–1.09 against 1.05–1.06; the size rule gave 1.10–1.13 and 1.05–1.08. Prefetching slowed
//     SmolLM2-135M's step by a fifth.
//   - Emerald Rapids (Intel): with prefetch, four streams everywhere. SmolLM2-135M's step took
//     18.1–19.0 ms that way, 18.9–20.4 with prefetch and two streams, 21–24 ms without prefetch
//     (its floor: 16.7 ms); Qwen2.5-0.5B's 66 ms against 76–79 without prefetch.
// AVX2's 16 registers hold two streams' accumulators only. The float32 product (base/matvec.cpp)
// makes its own choice. No choice changes a value: a row's sum runs in the same order however the
// rows are read.
constexpr int64_t kFourStreamBytes = int64_t{4} << 20;

struct Reading {
  bool prefetch = false;
  int streams = 2;
};

Reading reading_for(int64_t bytes) {
  constexpr int most = V::W == 16 ? 4 : 2;
  if (simd::intel_cpu()) return {true, most};
  return {false, bytes >= kFourStreamBytes ? most : 2};
}

// read(prefetch, streams) with the reading_for choice of `bytes` as compile-time constants.
template <typename Read>
void with_reading(int64_t bytes, Read read) {
  using On = std::true_type;
  using Off = std::false_type;
  const Reading how = reading_for(bytes);
  if constexpr (V::W == 16)
    if (how.streams == 4)
      return how.prefetch ? read(On{}, std::integral_constant<int, 4>{})
                          : read(Off{}, std::integral_constant<int, 4>{});
  return how.prefetch ? read(On{}, std::integral_constant<int, 2>{}) : read(Off{}, std::integral_constant<int, 2>{});
}

template <WeightStorage S>
void matvec_simd(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  const auto load = [](const uint16_t* p) { return V::load_half<S>(p); };
  with_reading((r1 - r0) * w.cols * int64_t{sizeof(uint16_t)}, [&](auto prefetch, auto streams) {
    simd::matvec_rows<prefetch(), streams()>(x, w.row(0), w.cols, r0, r1, y, load);
  });
}

// Panels [p0, p1) of w (in panels of 2·W) against x: every panel's 2·W sums, one FMA chain per
// output over i = 0, 1, … (two registers per panel), N panels side by side, their outputs
// [r0, r1) into y. With Prefetch, each panel's lines are asked for kAhead bytes ahead, up to `end`.
template <WeightStorage S, int N, bool Prefetch>
void panels_dot(const float* x, const HalfMat& w, const Index (&p)[N], Index r0, Index r1, uintptr_t end, float* y) {
  constexpr int W = V::W;
  constexpr Index step_bytes = 2 * W * Index{sizeof(uint16_t)};
  const Index k = w.cols;
  const uint16_t* q[N];
  typename V::R a0[N], a1[N];
  for (int s = 0; s < N; ++s) {
    q[s] = w.values.get() + p[s] * k * 2 * W;
    a0[s] = a1[s] = V::zero();
  }
  for (Index i = 0; i < k; ++i) {
    const typename V::R xi = V::bcast(x[i]);
    for (int s = 0; s < N; ++s) {
      const uint16_t* qi = q[s] + i * 2 * W;
      if (Prefetch && (i * step_bytes) % kCacheLine == 0) {
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(qi) + simd::kAhead;
        if (ahead < end) __builtin_prefetch(reinterpret_cast<const void*>(ahead), 0, 2);
      }
      a0[s] = V::fma(xi, V::load_half<S>(qi), a0[s]);
      a1[s] = V::fma(xi, V::load_half<S>(qi + W), a1[s]);
    }
  }
  for (int s = 0; s < N; ++s) {
    alignas(64) float sums[2 * W];
    V::store(sums, a0[s]);
    V::store(sums + W, a1[s]);
    const Index c0 = p[s] * 2 * W;
    for (Index r = std::max(r0, c0); r < std::min(r1, c0 + 2 * W); ++r) y[r] = sums[r - c0];
  }
}

// Outputs [r0, r1) of w in panels of 2·W: the panels that hold them cut into Streams parts of
// equal length, read side by side as matvec_rows reads rows, the panels left over one at a time.
template <WeightStorage S, int Streams, bool Prefetch>
void matvec_panels(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  const Index P = 2 * V::W, p0 = r0 / P, p1 = (r1 + P - 1) / P, part = (p1 - p0) / Streams;
  const int64_t panel_bytes = w.cols * P * int64_t{sizeof(uint16_t)};
  const uintptr_t end = reinterpret_cast<uintptr_t>(w.values.get()) + static_cast<uintptr_t>(p1 * panel_bytes);
  if (Prefetch)
    for (int s = 0; s < Streams; ++s)
      prefetch_bytes(w.values.get() + (p0 + s * part) * w.cols * P, std::min<int64_t>(simd::kAhead, panel_bytes));
  for (Index j = 0; j < part; ++j) {
    Index p[Streams];
    for (int s = 0; s < Streams; ++s) p[s] = p0 + s * part + j;
    panels_dot<S, Streams, Prefetch>(x, w, p, r0, r1, end, y);
  }
  for (Index q = p0 + Streams * part; q < p1; ++q) {
    const Index one[1] = {q};
    panels_dot<S, 1, Prefetch>(x, w, one, r0, r1, end, y);
  }
}

template <WeightStorage S>
void matvec_panels_simd(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  with_reading((r1 - r0) * w.cols * int64_t{sizeof(uint16_t)},
               [&](auto prefetch, auto streams) { matvec_panels<S, streams(), prefetch()>(x, w, r0, r1, y); });
}
#endif

}  // namespace

void widen(const uint16_t* src, int64_t n, WeightStorage s, float* out) {
#ifdef SF_SIMD
  if (s == WeightStorage::BF16) return widen_simd<WeightStorage::BF16>(src, n, out);
  if (V::has(WeightStorage::F16)) return widen_simd<WeightStorage::F16>(src, n, out);
#endif
  portable::widen(src, n, s, out);
}

void matvec_half(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
#ifdef SF_SIMD
  if (w.in_panels() && w.panel == 2 * V::W) {
    if (w.storage == WeightStorage::BF16) return matvec_panels_simd<WeightStorage::BF16>(x, w, r0, r1, y);
    if (V::has(WeightStorage::F16)) return matvec_panels_simd<WeightStorage::F16>(x, w, r0, r1, y);
  } else if (!w.in_panels()) {
    if (w.storage == WeightStorage::BF16) return matvec_simd<WeightStorage::BF16>(x, w, r0, r1, y);
    if (V::has(WeightStorage::F16)) return matvec_simd<WeightStorage::F16>(x, w, r0, r1, y);
  }
#endif
  portable::matvec_half(x, w, r0, r1, y);
}

const char* half_kernel_name(WeightStorage s) {
#ifdef SF_SIMD
  return V::name(s);
#else
  (void)s;
  return "portable";
#endif
}

HalfMat HalfMat::make(Index rows, Index cols, WeightStorage s) {
  HalfMat m;
  m.storage = s;
  m.rows = rows;
  m.cols = cols;
  const size_t n = static_cast<size_t>(rows * cols);
  m.values = std::shared_ptr<uint16_t[]>(new uint16_t[n > 0 ? n : 1]);
  advise_huge_pages(m.values.get(), n * sizeof(uint16_t));
  return m;
}

void HalfMat::widen_rows(Index r0, Index n, float* out) const {
  if (!in_panels()) return widen(row(r0), n * cols, storage, out);
  for (Index r = r0; r < r0 + n; ++r)  // row r: every panel-th value of its panel
    for (Index c = 0; c < cols; ++c) out[(r - r0) * cols + c] = half_to_float(at(r, c), storage);
}

namespace {

// w's values, in rows and a whole number of panels of width p, turned into panels in place: each
// panel's p rows (p × cols, row-major) become its cols steps of p values, through a copy of them.
void rows_to_panels(HalfMat& w, Index p) {
  std::vector<uint16_t> rows(static_cast<size_t>(p * w.cols));
  for (Index q = 0; q < w.rows / p; ++q) {
    uint16_t* const block = w.values.get() + q * p * w.cols;
    std::copy(block, block + p * w.cols, rows.begin());
    for (Index r = 0; r < p; ++r)
      for (Index i = 0; i < w.cols; ++i) block[i * p + r] = rows[static_cast<size_t>(r * w.cols + i)];
  }
  w.panel = p;
}

}  // namespace

HalfMat to_panels(const HalfMat& w) {
  const Index p = packed_panel_width();
  HalfMat m = HalfMat::make((w.rows + p - 1) / p * p, w.cols, w.storage);  // rows padded to whole panels
  std::copy(w.values.get(), w.values.get() + w.size(), m.values.get());
  std::fill(m.values.get() + w.size(), m.values.get() + m.size(), uint16_t{0});
  rows_to_panels(m, p);
  m.rows = w.rows;
  return m;
}

void arrange_in_panels(HalfMat& w) {
  if (w.empty() || w.in_panels()) return;
  const Index p = packed_panel_width();
  if (w.values.use_count() != 1 || w.rows % p != 0) {
    w = to_panels(w);
    return;
  }
  rows_to_panels(w, p);
}

Mat HalfMat::widened() const {
  Mat m(rows, cols);
  if (rows * cols > 0) widen_rows(0, rows, m.data());
  return m;
}

}  // namespace sf
