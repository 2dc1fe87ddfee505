#include "base/half.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "base/allocator.h"

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
  constexpr int L = 8;  // lanes: partial sums of every 8th product
  const Index k = w.cols;
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

#if defined(__AVX512F__)
// 16 lanes; BF16 widened by a shift, F16 by vcvtph2ps (both exact).
struct V {
  using R = __m512;
  static constexpr int W = 16;
  static const char* name(WeightStorage) { return "avx512"; }
  static constexpr bool has(WeightStorage) { return true; }
  template <WeightStorage S>
  static R load_half(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (S == WeightStorage::BF16)
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    else
      return _mm512_cvtph_ps(h);
  }
  static R zero() { return _mm512_setzero_ps(); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static float sum(R v) {  // the lanes in order (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized)
    alignas(64) float t[W];
    _mm512_store_ps(t, v);
    float s = 0.0f;
    for (float x : t) s += x;
    return s;
  }
};
#define SF_HALF_SIMD 1
#elif defined(__AVX2__) && defined(__FMA__)
// 8 lanes; F16 needs F16C's vcvtph2ps, else the portable path runs.
struct V {
  using R = __m256;
  static constexpr int W = 8;
#if defined(__F16C__)
  static constexpr bool has(WeightStorage) { return true; }
  static const char* name(WeightStorage s) { return s == WeightStorage::F16 ? "avx2+f16c" : "avx2"; }
#else
  static constexpr bool has(WeightStorage s) { return s == WeightStorage::BF16; }
  static const char* name(WeightStorage s) { return s == WeightStorage::F16 ? "portable" : "avx2"; }
#endif
  template <WeightStorage S>
  static R load_half(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (S == WeightStorage::BF16) {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
#if defined(__F16C__)
      return _mm256_cvtph_ps(h);
#else
      return zero();  // never called: has(F16) is false
#endif
    }
  }
  static R zero() { return _mm256_setzero_ps(); }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static float sum(R v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};
#define SF_HALF_SIMD 1
#endif

#ifdef SF_HALF_SIMD
template <WeightStorage S>
void widen_simd(const uint16_t* src, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + V::W <= n; i += V::W) V::store(out + i, V::load_half<S>(src + i));
  for (; i < n; ++i) out[i] = half_to_float(src[i], S);
}

// One row w (k values) against x: four accumulators of W lanes over blocks of 4·W values (four
// independent FMA chains on one sequential stream, which the prefetchers follow), then single
// registers into the first, then a tail shorter than a register as one more step on zero-padded
// copies; the four added pairwise, then the lanes in order. The order depends on k alone, not on
// which rows a call covers.
template <WeightStorage S>
float row_simd(const float* x, const uint16_t* w, Index k) {
  typename V::R a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
  constexpr int W = V::W;
  Index i = 0;
  for (; i + 4 * W <= k; i += 4 * W) {
    a0 = V::fma(V::load(x + i), V::load_half<S>(w + i), a0);
    a1 = V::fma(V::load(x + i + W), V::load_half<S>(w + i + W), a1);
    a2 = V::fma(V::load(x + i + 2 * W), V::load_half<S>(w + i + 2 * W), a2);
    a3 = V::fma(V::load(x + i + 3 * W), V::load_half<S>(w + i + 3 * W), a3);
  }
  for (; i + W <= k; i += W) a0 = V::fma(V::load(x + i), V::load_half<S>(w + i), a0);
  if (i < k) {
    alignas(64) float xt[W] = {};
    alignas(64) uint16_t wt[W] = {};
    for (Index j = i; j < k; ++j) {
      xt[j - i] = x[j];
      wt[j - i] = w[j];
    }
    a0 = V::fma(V::load(xt), V::load_half<S>(wt), a0);
  }
  return V::sum(V::add(V::add(a0, a1), V::add(a2, a3)));
}

template <WeightStorage S>
void matvec_simd(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  for (Index r = r0; r < r1; ++r) y[r] = row_simd<S>(x, w.row(r), w.cols);
}
#endif

}  // namespace

void widen(const uint16_t* src, int64_t n, WeightStorage s, float* out) {
#ifdef SF_HALF_SIMD
  if (s == WeightStorage::BF16) return widen_simd<WeightStorage::BF16>(src, n, out);
  if (V::has(WeightStorage::F16)) return widen_simd<WeightStorage::F16>(src, n, out);
#endif
  portable::widen(src, n, s, out);
}

void matvec_half(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
#ifdef SF_HALF_SIMD
  if (w.storage == WeightStorage::BF16) return matvec_simd<WeightStorage::BF16>(x, w, r0, r1, y);
  if (V::has(WeightStorage::F16)) return matvec_simd<WeightStorage::F16>(x, w, r0, r1, y);
#endif
  portable::matvec_half(x, w, r0, r1, y);
}

const char* half_kernel_name(WeightStorage s) {
#ifdef SF_HALF_SIMD
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

void HalfMat::widen_rows(Index r0, Index n, float* out) const { widen(row(r0), n * cols, storage, out); }

Mat HalfMat::widened() const {
  Mat m(rows, cols);
  if (rows * cols > 0) widen_rows(0, rows, m.data());
  return m;
}

}  // namespace sf
