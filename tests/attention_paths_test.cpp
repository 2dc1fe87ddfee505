// attention_paths_test.cpp — the forward's faster paths give what the plain ones give: heads shared
// between cores (model/attention.cpp) the one-core bits, blocks of queries over the keys they see
// the whole rows' numbers, softmax over long rows the reference softmax, a tabulated or split rotation
// (model/rotary.h) the rotation computed row by row on one core.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/threads.h"
#include "model/attention.h"
#include "model/mask.h"
#include "model/rotary.h"
#include "reference/attention.h"

namespace sf {
namespace {

// Two causal sequences of 64 queries, 8 heads of 32: enough work that the cores share the heads
// (and the transposes of K); `kv_heads` K/V heads.
struct Inputs {
  Mat q, k, v;  // (2·64, 256), (2·64, kv_heads·32) twice
  std::vector<Mat> masks;
};
Inputs inputs(int kv_heads = 8) {
  Inputs in;
  in.q = Mat::Random(128, 256);
  in.k = Mat::Random(128, 32 * kv_heads);
  in.v = Mat::Random(128, 32 * kv_heads);
  std::vector<int> keys(64, 5);
  keys[60] = 0;  // a padded key
  for (int b = 0; b < 2; ++b) in.masks.push_back(make_mask(64, keys, 0, /*causal=*/true));
  return in;
}

// attend() on 1, 2, 3 and 5 threads (`counts`), each run recorded in full.
const int counts[] = {1, 2, 3, 5};
struct Runs {
  std::vector<Mat> concat = std::vector<Mat>(4);
  std::vector<AttentionTrace> tr = std::vector<AttentionTrace>(4);
};
Runs attend_on_each_count(const Mat& q, const Mat& k, const Mat& v, Heads heads, const std::vector<Mat>& masks) {
  Runs r;
  for (size_t i = 0; i < 4; ++i) {
    const ScopedThreads scope(counts[i]);
    r.tr[i].kind = Recording::Full;
    attend(q, k, v, heads, masks, r.concat[i], &r.tr[i]);
  }
  return r;
}

TEST(AttentionPaths, HeadsSharedBetweenCoresGiveTheOneCoreBits) {
  const Inputs in = inputs();
  const Runs runs = attend_on_each_count(in.q, in.k, in.v, 8, in.masks);
  const std::vector<Mat>& concat = runs.concat;
  const std::vector<AttentionTrace>& tr = runs.tr;
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(concat[i], concat[0]) << counts[i] << " threads";
    ASSERT_EQ(tr[i].weights.size(), 16u);
    for (size_t h = 0; h < 16; ++h) {
      EXPECT_EQ(tr[i].weights[h], tr[0].weights[h]) << counts[i] << " threads, head " << h;
      EXPECT_EQ(tr[i].raw_scores[h], tr[0].raw_scores[h]) << counts[i] << " threads, head " << h;
    }
  }
  // And not by accident: head 3 of sequence 1 against the reference.
  const Mat qh = in.q.block(64, 96, 64, 32), kh = in.k.block(64, 96, 64, 32);
  const ref::Attention r = ref::scaled_dot_product_attention(qh, kh, in.v.block(64, 96, 64, 32), in.masks[1]);
  EXPECT_LE((tr[1].weights[11] - r.weights).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_LE((concat[1].block(64, 96, 64, 32) - r.out).cwiseAbs().maxCoeff(), 1e-5f);
}

// Grouped-query heads (8 query heads over 2 K/V heads) shared between cores: the one-core bits, and
// query head 7 of sequence 1 reads K/V head 1 of that sequence as the reference does.
TEST(AttentionPaths, GroupedHeadsSharedBetweenCoresGiveTheOneCoreBits) {
  const Inputs in = inputs(2);
  std::vector<Mat> concat(4);
  for (int i = 0; i < 4; ++i) {
    const ScopedThreads scope(counts[i]);
    attend(in.q, in.k, in.v, Heads(8, 2), in.masks, concat[static_cast<size_t>(i)], nullptr);
  }
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(concat[i], concat[0]) << counts[i] << " threads";
  const Mat qh = in.q.block(64, 224, 64, 32), kh = in.k.block(64, 32, 64, 32), vh = in.v.block(64, 32, 64, 32);
  const ref::Attention r = ref::scaled_dot_product_attention(qh, kh, vh, in.masks[1]);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_LE((concat[i].block(64, 224, 64, 32) - r.out).cwiseAbs().maxCoeff(), 1e-5f) << counts[i] << " threads";
}

// One query per sequence (a cached decoding step) over 300 keys, 9 query heads over 3 K/V heads of
// 64 (SmolLM2-135M's grouping): enough work that the cores share the heads; the one-core bits, and
// query head 5 of sequence 1 (K/V head 1) against the reference, its padded key at weight 0.
TEST(AttentionPaths, OneQueryHeadsSharedBetweenCoresGiveTheOneCoreBits) {
  const int n_k = 300;
  const Mat q = Mat::Random(2, 9 * 64), k = Mat::Random(2 * n_k, 3 * 64), v = Mat::Random(2 * n_k, 3 * 64);
  std::vector<int> keys(n_k, 5);
  keys[17] = 0;  // a padded key
  const std::vector<Mat> masks{make_mask(1, keys, 0, /*causal=*/true, n_k - 1),
                               make_mask(1, keys, 0, /*causal=*/true, n_k - 1)};
  const Runs runs = attend_on_each_count(q, k, v, Heads(9, 3), masks);
  const std::vector<Mat>& concat = runs.concat;
  const std::vector<AttentionTrace>& tr = runs.tr;
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(concat[i], concat[0]) << counts[i] << " threads";
    ASSERT_EQ(tr[i].weights.size(), 18u);
    for (size_t h = 0; h < 18; ++h)
      EXPECT_EQ(tr[i].weights[h], tr[0].weights[h]) << counts[i] << " threads, head " << h;
  }
  const Mat qh = q.block(1, 5 * 64, 1, 64), kh = k.block(n_k, 64, n_k, 64), vh = v.block(n_k, 64, n_k, 64);
  const ref::Attention r = ref::scaled_dot_product_attention(qh, kh, vh, masks[1]);
  EXPECT_EQ(r.weights(0, 17), 0.0f);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_LE((tr[i].weights[14] - r.weights).cwiseAbs().maxCoeff(), 1e-6f) << counts[i] << " threads";
    EXPECT_LE((concat[i].block(1, 5 * 64, 1, 64) - r.out).cwiseAbs().maxCoeff(), 1e-5f) << counts[i] << " threads";
  }
}

// Queries that see only the first keys (a causal mask; padding at the end of the keys) run their
// scores, softmax and P·V over those keys alone, with the numbers of the whole rows.
TEST(AttentionPaths, BlocksOfQueriesSkipTheKeysTheyCannotSee) {
  const int n = 150, heads = 4, dk = 32;
  std::vector<int> keys(n, 5);
  keys[70] = 0;  // a padded key inside the rows
  std::vector<int> tail_padded(n, 5);
  for (int j = n - 7; j < n; ++j) tail_padded[static_cast<size_t>(j)] = 0;
  // Sequences 2 and 3 hide no key inside a row (causal; nothing hidden): their softmax reads no mask.
  const std::vector<Mat> masks = {make_mask(n, keys, 0, /*causal=*/true),
                                  make_mask(n, tail_padded, 0, /*causal=*/false),
                                  make_mask(n, std::vector<int>(n, 5), 0, /*causal=*/true),
                                  make_mask(n, std::vector<int>(n, 5), 0, /*causal=*/false)};

  const QueryBlocks causal = visible_keys(masks[0]);
  EXPECT_EQ(causal.start, (std::vector<Eigen::Index>{0, 48, 96, n}));  // the last block takes the rest
  EXPECT_EQ(causal.keys, (std::vector<Eigen::Index>{48, 96, n}));
  const QueryBlocks padded = visible_keys(masks[1]);
  EXPECT_EQ(padded.keys, (std::vector<Eigen::Index>{144, 144, 144}));           // 143 keys seen, rounded up to 4
  EXPECT_TRUE(visible_keys(make_mask(n, keys, 0, /*causal=*/false)).whole(n));  // nothing to skip
  EXPECT_TRUE(visible_keys(make_mask(40, std::vector<int>(40, 5), 0, /*causal=*/true)).whole(40));  // short rows
  // The rows' cuts: row 70 sees keys 0 … 69, the rows after it keys on both sides of key 70.
  EXPECT_EQ(causal.cut[0], 1);
  EXPECT_EQ(causal.cut[70], 70);
  EXPECT_EQ(causal.cut[71], -1);
  EXPECT_EQ(padded.cut, std::vector<Eigen::Index>(n, n - 7));
  EXPECT_EQ(visible_keys(masks[2]).cut[149], n);
  EXPECT_EQ(visible_keys(masks[3]).cut, std::vector<Eigen::Index>(n, n));
  EXPECT_TRUE(visible_keys(make_mask(40, std::vector<int>(40, 5), 0, /*causal=*/true)).cut.empty());

  const Mat q = Mat::Random(4 * n, heads * dk), k = Mat::Random(4 * n, heads * dk), v = Mat::Random(4 * n, heads * dk);
  AttentionTrace whole;  // a full recording keeps every raw score: no block skips a key
  whole.kind = Recording::Full;
  Mat expected, blocked, shared;
  attend(q, k, v, heads, masks, expected, &whole);
  attend(q, k, v, heads, masks, blocked, nullptr);
  {
    const ScopedThreads two(2);
    attend(q, k, v, heads, masks, shared, nullptr);
  }
  EXPECT_EQ(blocked, expected);
  EXPECT_EQ(shared, expected);
  for (int b = 0; b < 4; ++b)
    for (int h = 0; h < heads; ++h) {
      Mat w;
      head_attention(q.middleRows(b * n, n), k.middleRows(b * n, n), heads, h, masks[static_cast<size_t>(b)], w);
      EXPECT_EQ(w, whole.weights[static_cast<size_t>(b * heads + h)]) << "sequence " << b << ", head " << h;
    }
  // And the first blocks do not read the keys past theirs: a NaN in key 100's value reaches the
  // third block only (the whole product would give 0 · NaN = NaN on every row).
  Mat v_nan = v;
  v_nan.row(100).setConstant(std::numeric_limits<float>::quiet_NaN());
  Mat out;
  attend(q, k, v_nan, heads, masks, out, nullptr);
  EXPECT_EQ(out.topRows(96), expected.topRows(96));
  EXPECT_TRUE(out.middleRows(96, n - 96).array().isNaN().all());
}

TEST(AttentionPaths, LongRowsSoftmaxAsTheReference) {
  // Rows of 100 keys (softmax row by row) with masked keys, one row fully masked.
  Mat s = Mat::Random(5, 100) * 8.0f;
  Mat mask = Mat::Zero(5, 100);
  for (int j = 0; j < 100; ++j) {
    if (j % 7 == 3) mask(1, j) = kMasked;
    if (j > 40) mask(2, j) = kMasked;
    mask(4, j) = kMasked;
  }
  const float scale = 0.125f;
  Mat expected = ref::softmax_rows((s * scale + mask).eval());
  masked_softmax(s, mask, scale);
  EXPECT_LE((s - expected).cwiseAbs().maxCoeff(), 1e-6f);
  for (int j = 0; j < 100; ++j) {
    if (mask(1, j) == kMasked) {
      EXPECT_EQ(s(1, j), 0.0f);
    }
    EXPECT_EQ(s(4, j), 0.0f);  // every key masked: zeros, not NaN
  }
}

TEST(AttentionPaths, SoftmaxFindsTheMaxAnywhereInTheRow) {
  // Two neighbouring scores far above the rest (200 and 199): e^score overflows unless the row's
  // max is subtracted first, so a max missed in any part of the row (the wide chains, the four
  // narrow ones, the last keys) turns 0.73 / 0.27 into 0.5 / 0.5.
  for (int n : {5, 63, 64, 67, 128, 131, 200})
    for (int at : {0, 17, 33, 50, n / 2, n - 1}) {
      if (at >= n) continue;
      Mat s = Mat::Random(1, n), mask = Mat::Zero(1, n);
      const int other = at == 0 ? 1 : at - 1;
      s(0, at) = 200.0f;
      s(0, other) = 199.0f;
      masked_softmax(s, mask, 1.0f);
      EXPECT_NEAR(s(0, at), 1.0f / (1.0f + std::exp(-1.0f)), 1e-6f) << n << " keys, max at " << at;
      EXPECT_NEAR(s(0, other), 1.0f / (1.0f + std::exp(1.0f)), 1e-6f) << n << " keys, max at " << at;
    }
}

// The rotation, tabulated or computed row by row, on one core or with a long input's rows split
// between several, turns every row to the bits of the plain row-by-row rotation on one core.
TEST(AttentionPaths, RotationTabulatedOrSplitTurnsAsTheRowByRowOne) {
  Config c;
  c.d_model = 256;
  c.n_heads = 4;
  c.positional = Positional::Rotary;
  const RowVec inv_freq = rope_inv_freq(c);
  Rotation rot;
  rot.inv_freq = &inv_freq;
  rot.rot_dim = c.rotary_dim();
  rot.d_head = c.d_k();
  rot.pos0 = 17;
  rot.rows_per_seq = 150;
  const Mat x = Mat::Random(300, 256) * 3.0f;  // two sequences of 150 rows: 76,800 floats, split
  Mat row_by_row = x;
  {
    const ScopedThreads one(1);
    apply_rotary(row_by_row, rot);
  }
  for (const bool tabulated : {false, true}) {
    if (tabulated) tabulate_angles(rot);
    for (int t : {1, 2, 3, 7}) {
      const ScopedThreads scope(t);
      Mat turned = x;
      apply_rotary(turned, rot);
      EXPECT_TRUE(same_bits(turned, row_by_row)) << t << " threads" << (tabulated ? ", tabulated" : "");
    }
  }
  // Row 150 is the second sequence's first, at position pos0: its first pair turned by pos0·θ_0.
  const double angle = 17.0 * inv_freq(0);
  const float a = x(150, 0), b = x(150, 32);
  EXPECT_NEAR(row_by_row(150, 0), a * std::cos(angle) - b * std::sin(angle), 1e-4);
  EXPECT_NEAR(row_by_row(150, 32), b * std::cos(angle) + a * std::sin(angle), 1e-4);
}

}  // namespace
}  // namespace sf
