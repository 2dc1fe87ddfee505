#include "base/cached_attention.h"

#include <algorithm>
#include <cmath>

#include "base/simd.h"

namespace sf {

using Index = Eigen::Index;

namespace portable {

void cached_scores(const float* q, const float* k, Index ldk, const CachedHeads& c, float* s, Index lds) {
  for (Index j = 0; j < c.n; ++j) {
    const float* row = k + j * ldk;  // key j, every K/V head
    for (Index h = c.h0; h < c.h1; ++h) {
      const float* qh = q + h * c.dk;
      const float* kh = row + h / c.group * c.dk;
      float sum = 0.0f;
      for (Index i = 0; i < c.dk; ++i) sum += qh[i] * kh[i];
      s[(h - c.h0) * lds + j] = sum;
    }
  }
}

void cached_values(const float* p, Index ldp, const float* v, Index ldv, const CachedHeads& c, float* out) {
  std::fill(out + c.h0 * c.dk, out + c.h1 * c.dk, 0.0f);
  for (Index j = 0; j < c.n; ++j) {
    const float* row = v + j * ldv;  // value j, every K/V head
    for (Index h = c.h0; h < c.h1; ++h) {
      const float w = p[(h - c.h0) * ldp + j];
      const float* vh = row + h / c.group * c.dk;
      float* o = out + h * c.dk;
      for (Index i = 0; i < c.dk; ++i) o[i] += w * vh[i];
    }
  }
}

}  // namespace portable

#ifdef SF_SIMD
using simd::V;

void cached_scores(const float* q, const float* k, Index ldk, const CachedHeads& c, float* s, Index lds) {
  constexpr Index W = V::W;
  const Index pairs = c.dk / (2 * W) * (2 * W), vec = c.dk / W * W;  // columns in register pairs, registers
  for (Index j = 0; j < c.n; ++j) {
    const float* row = k + j * ldk;
    for (Index h = c.h0; h < c.h1; ++h) {
      // two chains of FMAs over the head's columns, their sum's lanes added pairwise, then the
      // columns past the last register one at a time
      const float* qh = q + h * c.dk;
      const float* kh = row + h / c.group * c.dk;
      V::R a0 = V::zero(), a1 = V::zero();
      for (Index i = 0; i < pairs; i += 2 * W) {
        a0 = V::fma(V::load(qh + i), V::load(kh + i), a0);
        a1 = V::fma(V::load(qh + i + W), V::load(kh + i + W), a1);
      }
      if (pairs < vec) a0 = V::fma(V::load(qh + pairs), V::load(kh + pairs), a0);
      float sum = V::sum(V::add(a0, a1));
      for (Index i = vec; i < c.dk; ++i) sum = std::fma(qh[i], kh[i], sum);
      s[(h - c.h0) * lds + j] = sum;
    }
  }
}

void cached_values(const float* p, Index ldp, const float* v, Index ldv, const CachedHeads& c, float* out) {
  constexpr Index W = V::W;
  const Index vec = c.dk / W * W;  // columns in whole registers; the rest one at a time
  std::fill(out + c.h0 * c.dk, out + c.h1 * c.dk, 0.0f);
  // Four values at a time: each output adds their four products in order, as one value at a time
  // would, but is loaded and stored once per four (a store and its reload per value bound the loop).
  // The four rows' columns interleave (a head's columns of each row, then the next head's), which the
  // hardware prefetchers do not follow: the rows 8 ahead are asked for.
  const uintptr_t end = reinterpret_cast<uintptr_t>(v + c.n * ldv);
  Index j = 0;
  for (; j + 4 <= c.n; j += 4) {
    const float* row = v + j * ldv;
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(row + 8 * ldv);
    if (ahead < end) simd::prefetch_lines(ahead, std::min<uintptr_t>(end, ahead + 4 * ldv * sizeof(float)));
    for (Index h = c.h0; h < c.h1; ++h) {
      const float* w = p + (h - c.h0) * ldp + j;
      const float* vh = row + h / c.group * c.dk;
      float* o = out + h * c.dk;
      const V::R w0 = V::bcast(w[0]), w1 = V::bcast(w[1]), w2 = V::bcast(w[2]), w3 = V::bcast(w[3]);
      for (Index i = 0; i < vec; i += W) {
        V::R acc = V::fma(w0, V::load(vh + i), V::load(o + i));
        acc = V::fma(w1, V::load(vh + ldv + i), acc);
        acc = V::fma(w2, V::load(vh + 2 * ldv + i), acc);
        V::store(o + i, V::fma(w3, V::load(vh + 3 * ldv + i), acc));
      }
      for (Index i = vec; i < c.dk; ++i)
        for (Index r = 0; r < 4; ++r) o[i] = std::fma(w[r], vh[r * ldv + i], o[i]);
    }
  }
  for (; j < c.n; ++j) {
    const float* row = v + j * ldv;
    for (Index h = c.h0; h < c.h1; ++h) {
      const float w = p[(h - c.h0) * ldp + j];
      const float* vh = row + h / c.group * c.dk;
      float* o = out + h * c.dk;
      const V::R wr = V::bcast(w);
      for (Index i = 0; i < vec; i += W) V::store(o + i, V::fma(wr, V::load(vh + i), V::load(o + i)));
      for (Index i = vec; i < c.dk; ++i) o[i] = std::fma(w, vh[i], o[i]);
    }
  }
}
#else
void cached_scores(const float* q, const float* k, Index ldk, const CachedHeads& c, float* s, Index lds) {
  portable::cached_scores(q, k, ldk, c, s, lds);
}
void cached_values(const float* p, Index ldp, const float* v, Index ldv, const CachedHeads& c, float* out) {
  portable::cached_values(p, ldp, v, ldv, c, out);
}
#endif

}  // namespace sf
