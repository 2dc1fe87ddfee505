// cached_attention_test.cpp — a cached step's head products (base/cached_attention.h): the build's
// SIMD forms and the portable forms against sums in double precision, within the float32 error of
// a sum in any order; the same bits whichever range of heads a call covers; and attend() over one
// query per sequence (several beams, every head its own K/V, a head width no register divides) on
// 1, 2, 3 and 5 threads giving the one-core bits, the reference attention's numbers, and the
// weights head_attention computes again for the views.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/cached_attention.h"
#include "base/threads.h"
#include "model/attention.h"
#include "model/mask.h"
#include "reference/attention.h"

namespace sf {
namespace {

using Index = Eigen::Index;

// n keys of h_kv K/V heads of dk; q holds h_kv·group query heads.
struct Cache {
  Index dk, group, kv, n;
  Mat q, k, v;  // (1, h·dk), (n, h_kv·dk) twice
  Cache(Index dk_, Index group_, Index kv_, Index n_)
      : dk(dk_),
        group(group_),
        kv(kv_),
        n(n_),
        q(Mat::Random(1, kv_ * group_ * dk_)),
        k(Mat::Random(n_, kv_ * dk_)),
        v(Mat::Random(n_, kv_ * dk_)) {}
  Index heads() const { return kv * group; }
  CachedHeads range(Index h0, Index h1) const { return {dk, group, h0, h1, n}; }
};

// |got − Σ a_i·b_i| within the float32 bound of a sum of m products in any order.
void expect_within_sum_bound(float got, const std::vector<double>& terms, const std::string& what) {
  double exact = 0, abs = 0;
  for (double t : terms) {
    exact += t;
    abs += std::fabs(t);
  }
  const double bound = static_cast<double>(terms.size() + 1) * std::ldexp(1.0, -24) * abs + 1e-30;
  EXPECT_LE(std::fabs(got - exact), bound) << what;
}

using ScoresFn = void (*)(const float*, const float*, Index, const CachedHeads&, float*, Index);
using ValuesFn = void (*)(const float*, Index, const float*, Index, const CachedHeads&, float*);

// Head widths: shorter than one register, one register, a tail, several blocks and a tail.
const Index kWidths[] = {1, 7, 16, 20, 64, 80, 129};

TEST(CachedAttention, ScoresAndValuesEqualTheDoublePrecisionSums) {
  const struct {
    const char* name;
    ScoresFn scores;
    ValuesFn values;
  } forms[] = {{"simd", cached_scores, cached_values}, {"portable", portable::cached_scores, portable::cached_values}};
  for (const auto& f : forms)
    for (Index dk : kWidths)
      for (Index group : {1, 3}) {
        const Cache c(dk, group, 2, 13);
        const Index h = c.heads();
        Mat s(h, c.n), out = Mat::Constant(1, h * dk, 7.0f);  // out's old values are overwritten
        f.scores(c.q.data(), c.k.data(), c.k.cols(), c.range(0, h), s.data(), c.n);
        const Mat p = Mat::Random(h, c.n);
        f.values(p.data(), c.n, c.v.data(), c.v.cols(), c.range(0, h), out.data());
        for (Index hh = 0; hh < h; ++hh) {
          const Index col = hh / group * dk;  // the K/V head's first column
          const std::string at = std::string(f.name) + " dk " + std::to_string(dk) + " group " + std::to_string(group) +
                                 " head " + std::to_string(hh);
          for (Index j = 0; j < c.n; ++j) {
            std::vector<double> terms;
            for (Index i = 0; i < dk; ++i) terms.push_back(double{c.q(0, hh * dk + i)} * c.k(j, col + i));
            expect_within_sum_bound(s(hh, j), terms, at + " key " + std::to_string(j));
          }
          for (Index i = 0; i < dk; ++i) {
            std::vector<double> terms;
            for (Index j = 0; j < c.n; ++j) terms.push_back(double{p(hh, j)} * c.v(j, col + i));
            expect_within_sum_bound(out(0, hh * dk + i), terms, at + " column " + std::to_string(i));
          }
        }
      }
}

TEST(CachedAttention, AnyRangeOfHeadsGivesTheSameBits) {
  for (Index dk : kWidths) {
    const Cache c(dk, 3, 3, 21);  // 9 heads over 3 K/V heads
    const Index h = c.heads();
    const Mat p = Mat::Random(h, c.n);
    Mat whole_s(h, c.n), parts_s(h, c.n), whole_out(1, h * dk), parts_out(1, h * dk);
    cached_scores(c.q.data(), c.k.data(), c.k.cols(), c.range(0, h), whole_s.data(), c.n);
    cached_values(p.data(), c.n, c.v.data(), c.v.cols(), c.range(0, h), whole_out.data());
    // [0, 2), [2, 3), [3, 7), [7, 9): ranges that start and end inside a K/V head's group
    for (auto [h0, h1] : {std::pair<Index, Index>{0, 2}, {2, 3}, {3, 7}, {7, 9}}) {
      cached_scores(c.q.data(), c.k.data(), c.k.cols(), c.range(h0, h1), parts_s.data() + h0 * c.n, c.n);
      cached_values(p.data() + h0 * c.n, c.n, c.v.data(), c.v.cols(), c.range(h0, h1), parts_out.data());
    }
    EXPECT_EQ(parts_s, whole_s) << "dk " << dk;
    EXPECT_EQ(parts_out, whole_out) << "dk " << dk;
  }
}

// Three beams' one query each over 90 keys, 5 heads of 20, every head its own K/V: beam 1 with a
// padded key, beam 2 a sliding window over its last 30 keys.
TEST(CachedAttention, AttendOnAnyThreadCountGivesTheOneCoreBitsAndTheReference) {
  const int n_k = 90, heads = 5, dk = 20, B = 3;
  const Mat q = Mat::Random(B, heads * dk), k = Mat::Random(B * n_k, heads * dk), v = Mat::Random(B * n_k, heads * dk);
  std::vector<int> keys(n_k, 5), padded(n_k, 5);
  padded[40] = 0;
  const std::vector<Mat> masks{make_mask(1, keys, 0, /*causal=*/true, n_k - 1),
                               make_mask(1, padded, 0, /*causal=*/true, n_k - 1),
                               make_mask(1, keys, 0, /*causal=*/true, n_k - 1, /*window=*/30)};
  const int counts[] = {1, 2, 3, 5};
  std::vector<Mat> concat(4);
  std::vector<AttentionTrace> tr(4);
  for (size_t i = 0; i < 4; ++i) {
    const ScopedThreads scope(counts[i]);
    tr[i].kind = Recording::Full;
    attend(q, k, v, heads, masks, concat[i], &tr[i]);
  }
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(concat[i], concat[0]) << counts[i] << " threads";
    for (size_t h = 0; h < B * heads; ++h) {
      EXPECT_EQ(tr[i].weights[h], tr[0].weights[h]) << counts[i] << " threads, head " << h;
      EXPECT_EQ(tr[i].raw_scores[h], tr[0].raw_scores[h]) << counts[i] << " threads, head " << h;
    }
  }
  for (int b = 0; b < B; ++b) {
    const Mat& mask = masks[static_cast<size_t>(b)];
    for (int h = 0; h < heads; ++h) {
      const size_t idx = static_cast<size_t>(b * heads + h);
      const ref::Attention r = ref::scaled_dot_product_attention(
          q.block(b, h * dk, 1, dk), k.block(b * n_k, h * dk, n_k, dk), v.block(b * n_k, h * dk, n_k, dk), mask);
      EXPECT_LE((tr[0].weights[idx] - r.weights).cwiseAbs().maxCoeff(), 1e-6f) << "beam " << b << ", head " << h;
      EXPECT_LE((concat[0].block(b, h * dk, 1, dk) - r.out).cwiseAbs().maxCoeff(), 1e-5f)
          << "beam " << b << ", head " << h;
      Mat w, raw;
      head_attention(q.row(b), k.middleRows(b * n_k, n_k), heads, h, mask, w, &raw);
      EXPECT_EQ(w, tr[0].weights[idx]) << "beam " << b << ", head " << h;
      EXPECT_EQ(raw, tr[0].raw_scores[idx]) << "beam " << b << ", head " << h;
    }
  }
  EXPECT_EQ(tr[0].weights[heads + 0](0, 40), 0.0f);      // beam 1's padded key
  EXPECT_EQ(tr[0].weights[2 * heads + 3](0, 59), 0.0f);  // beam 2: outside the window
  EXPECT_GT(tr[0].weights[2 * heads + 3](0, 60), 0.0f);
}

}  // namespace
}  // namespace sf
