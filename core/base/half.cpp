#include "base/half.h"

#include <cstring>

#include "base/allocator.h"
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
// AVX2's 16 registers hold two streams' accumulators only. The float32 product reads one stream
// with prefetch (several measured slower there). No choice changes a value: a row's sum runs in
// the same order however the rows are read.
constexpr int64_t kFourStreamBytes = int64_t{4} << 20;

struct Reading {
  bool prefetch = false;
  int streams = 2;
};

Reading reading_for(int64_t bytes) {
  static const bool intel = __builtin_cpu_is("intel");
  constexpr int most = V::W == 16 ? 4 : 2;
  if (intel) return {true, most};
  return {false, bytes >= kFourStreamBytes ? most : 2};
}

template <WeightStorage S>
void matvec_simd(const float* x, const HalfMat& w, Index r0, Index r1, float* y) {
  const auto load = [](const uint16_t* p) { return V::load_half<S>(p); };
  const Reading how = reading_for((r1 - r0) * w.cols * int64_t{sizeof(uint16_t)});
  if constexpr (V::W == 16)
    if (how.streams == 4)
      return how.prefetch ? simd::matvec_rows<true, 4>(x, w.row(0), w.cols, r0, r1, y, load)
                          : simd::matvec_rows<false, 4>(x, w.row(0), w.cols, r0, r1, y, load);
  return how.prefetch ? simd::matvec_rows<true, 2>(x, w.row(0), w.cols, r0, r1, y, load)
                      : simd::matvec_rows<false, 2>(x, w.row(0), w.cols, r0, r1, y, load);
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
  if (w.storage == WeightStorage::BF16) return matvec_simd<WeightStorage::BF16>(x, w, r0, r1, y);
  if (V::has(WeightStorage::F16)) return matvec_simd<WeightStorage::F16>(x, w, r0, r1, y);
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

void HalfMat::widen_rows(Index r0, Index n, float* out) const { widen(row(r0), n * cols, storage, out); }

Mat HalfMat::widened() const {
  Mat m(rows, cols);
  if (rows * cols > 0) widen_rows(0, rows, m.data());
  return m;
}

}  // namespace sf
