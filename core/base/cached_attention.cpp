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
  const auto load = [](const float* p) { return V::load(p); };
  for (Index j = 0; j < c.n; ++j) {
    const float* row = k + j * ldk;
    for (Index h = c.h0; h < c.h1; ++h) {
      // the key's dk floats against the head's query, in rows_dot's order
      const float* qh = q + h * c.dk;
      simd::rows_dot<1, false>(row + h / c.group * c.dk, &qh, c.dk, 0, load, s + (h - c.h0) * lds + j);
    }
  }
}

void cached_values(const float* p, Index ldp, const float* v, Index ldv, const CachedHeads& c, float* out) {
  constexpr Index W = V::W;
  const Index vec = c.dk / W * W;  // columns in whole registers; the rest one at a time
  std::fill(out + c.h0 * c.dk, out + c.h1 * c.dk, 0.0f);
  for (Index j = 0; j < c.n; ++j) {
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
