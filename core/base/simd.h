// simd.h — the vector registers of the matrix-vector kernels (base/matvec.cpp for float32
// weights, base/half.cpp for 16-bit ones, base/cached_attention.cpp for a cached step's heads) and
// the row loop they run. Included by those .cpp files only: the build's instruction set (-march)
// chooses V's form — AVX-512, AVX2 with FMA, or none (SF_SIMD undefined: the portable forms run).
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "base/half.h"
#include "base/prefetch.h"

namespace sf::simd {

// Whether this is an Intel CPU: the matrix-vector products read their rows with software prefetch
// there and without it on AMD cores (base/half.cpp, base/matvec.cpp).
inline bool intel_cpu() {
  static const bool intel = __builtin_cpu_is("intel");
  return intel;
}

// Whether this is a Zen 4 core (AMD family 25 with AVX-512; Zen 3, the same family, has none): the
// float32 matrix-vector product reads two parts of its rows side by side there, four on other AMD
// cores (base/matvec.cpp).
inline bool zen4_cpu() {
  static const bool zen4 =
      __builtin_cpu_is("amd") && __builtin_cpu_is("amdfam19h") && __builtin_cpu_supports("avx512f");
  return zen4;
}

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
  static R bcast(float x) { return _mm512_set1_ps(x); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  // Halves added pairwise down to one lane (8 instructions, not 16 dependent adds); the masked
  // shuffles, since GCC 12's unmasked ones (and _mm512_reduce_add_ps) trip -Wuninitialized.
  static float sum(R v) {
    v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, 0xFFFF, v, v, 0x4E));  // + the other 256 bits
    v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, 0xFFFF, v, v, 0xB1));  // + the other 128
    v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, 0xFFFF, v, 0x4E));        // + the other 64
    v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, 0xFFFF, v, 0xB1));        // + the other 32
    return _mm512_cvtss_f32(v);
  }
};
#define SF_SIMD 1
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
  static R bcast(float x) { return _mm256_set1_ps(x); }
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
#define SF_SIMD 1
#endif

// A cached decoding step reads each weight matrix once, one after another: the hardware
// prefetchers see a fresh stream on every product and stop at every 4 KiB page until they ramp up
// again, so a short matrix (512 × 512 float32: 1 MiB) spends much of its product waiting. The row
// loop asks for the bytes kAhead ahead of those it reads, up to the end of the rows it covers, and
// for the first kAhead bytes before it starts. Into the L2 cache (locality 2, prefetcht1): asking
// for the L1 slows the long streams (GPT-2's 150 MB output projection) below the plain loop.
constexpr int64_t kAhead = 2048;  // bytes read ahead of the kernel

inline void prefetch_lines(uintptr_t from, uintptr_t to) {
  prefetch_bytes(reinterpret_cast<const void*>(from), static_cast<int64_t>(to - from));
}

#ifdef SF_SIMD
// S rows rows[0..S) (k values of type T each, Load turning W of them into a register) against x,
// side by side: per row, four accumulators of W lanes over blocks of 4·W values (four
// independent FMA chains), then single registers into the first, then a tail shorter than a
// register as one more step on zero-padded copies; the four added pairwise, then the lanes
// (V::sum). Each row's order depends on k alone, not on S or on which rows a call covers, so a
// row has the same bits whichever rows stand beside it. With Prefetch, each row's lines up to
// `end` (an address) are prefetched kAhead bytes ahead; prefetching changes no value.
template <int S, bool Prefetch, typename T, typename Load>
void rows_dot(const float* x, const T* const* rows, Eigen::Index k, uintptr_t end, Load load, float* out) {
  using R = typename V::R;
  constexpr int W = V::W;
  constexpr int64_t block_bytes = 4 * W * static_cast<int64_t>(sizeof(T));
  R a[S][4];
  for (int s = 0; s < S; ++s) a[s][0] = a[s][1] = a[s][2] = a[s][3] = V::zero();
  Eigen::Index i = 0;
  for (; i + 4 * W <= k; i += 4 * W) {
    const R x0 = V::load(x + i), x1 = V::load(x + i + W), x2 = V::load(x + i + 2 * W), x3 = V::load(x + i + 3 * W);
    for (int s = 0; s < S; ++s) {
      const T* w = rows[s] + i;
      const uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + kAhead;
      if (Prefetch && ahead < end) prefetch_lines(ahead, std::min<uintptr_t>(end, ahead + block_bytes));
      a[s][0] = V::fma(x0, load(w), a[s][0]);
      a[s][1] = V::fma(x1, load(w + W), a[s][1]);
      a[s][2] = V::fma(x2, load(w + 2 * W), a[s][2]);
      a[s][3] = V::fma(x3, load(w + 3 * W), a[s][3]);
    }
  }
  for (; i + W <= k; i += W) {
    const R xi = V::load(x + i);
    for (int s = 0; s < S; ++s) a[s][0] = V::fma(xi, load(rows[s] + i), a[s][0]);
  }
  if (i < k) {
    alignas(64) float xt[W] = {};
    for (Eigen::Index j = i; j < k; ++j) xt[j - i] = x[j];
    for (int s = 0; s < S; ++s) {
      alignas(64) T wt[W] = {};
      for (Eigen::Index j = i; j < k; ++j) wt[j - i] = rows[s][j];
      a[s][0] = V::fma(V::load(xt), load(wt), a[s][0]);
    }
  }
  for (int s = 0; s < S; ++s) out[s] = V::sum(V::add(V::add(a[s][0], a[s][1]), V::add(a[s][2], a[s][3])));
}

// y[r] = row r of w (rows of k values, consecutive) · x for r in [r0, r1): the range cut into
// Streams parts of equal length, their rows read side by side (the i-th row of every part
// together), the rows left over one at a time. With Prefetch, each part's rows are prefetched
// ahead as they are read. A product over 16-bit weights reads memory faster from several
// streams than from one (base/half.cpp); the float32 one runs one stream with prefetch.
template <bool Prefetch, int Streams, typename T, typename Load>
void matvec_rows(const float* x, const T* w, Eigen::Index k, Eigen::Index r0, Eigen::Index r1, float* y, Load load) {
  if (r1 <= r0) return;
  const uintptr_t end = reinterpret_cast<uintptr_t>(w + r1 * k);
  const Eigen::Index part = (r1 - r0) / Streams;
  if (Prefetch)
    for (int s = 0; s < Streams; ++s) {
      const uintptr_t begin = reinterpret_cast<uintptr_t>(w + (r0 + s * part) * k);
      prefetch_lines(begin, std::min<uintptr_t>(end, begin + kAhead));
    }
  for (Eigen::Index i = 0; i < part; ++i) {
    const T* rows[Streams];
    float out[Streams];
    for (int s = 0; s < Streams; ++s) rows[s] = w + (r0 + s * part + i) * k;
    rows_dot<Streams, Prefetch>(x, rows, k, end, load, out);
    for (int s = 0; s < Streams; ++s) y[r0 + s * part + i] = out[s];
  }
  for (Eigen::Index r = r0 + Streams * part; r < r1; ++r) {
    const T* row = w + r * k;
    rows_dot<1, Prefetch>(x, &row, k, end, load, y + r);
  }
}
#endif

}  // namespace sf::simd
