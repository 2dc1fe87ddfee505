// attention_paths_test.cpp — the forward's faster paths give what the plain ones give: heads shared
// between cores (model/attention.cpp) the one-core bits, softmax over long rows the reference
// softmax, a tabulated rotation (model/rotary.h) the rotation computed row by row.
#include <gtest/gtest.h>

#include <vector>

#include "base/threads.h"
#include "model/attention.h"
#include "model/mask.h"
#include "model/rotary.h"
#include "reference/attention.h"

namespace sf {
namespace {

// Two causal sequences of 64 queries, 8 heads of 32: enough work that the cores share the heads.
struct Inputs {
  Mat q, k, v;  // (2·64, 256)
  std::vector<Mat> masks;
};
Inputs inputs() {
  Inputs in;
  in.q = Mat::Random(128, 256);
  in.k = Mat::Random(128, 256);
  in.v = Mat::Random(128, 256);
  std::vector<int> keys(64, 5);
  keys[60] = 0;  // a padded key
  for (int b = 0; b < 2; ++b) in.masks.push_back(make_mask(64, keys, 0, /*causal=*/true));
  return in;
}

TEST(AttentionPaths, HeadsSharedBetweenCoresGiveTheOneCoreBits) {
  const Inputs in = inputs();
  std::vector<Mat> concat(4);
  std::vector<AttentionTrace> tr(4);
  const int counts[] = {1, 2, 3, 5};
  for (int i = 0; i < 4; ++i) {
    const ScopedThreads scope(counts[i]);
    tr[static_cast<size_t>(i)].kind = Recording::Full;
    attend(in.q, in.k, in.v, 8, in.masks, concat[static_cast<size_t>(i)], &tr[static_cast<size_t>(i)]);
  }
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

TEST(AttentionPaths, TabulatedRotationTurnsAsTheRowByRowOne) {
  Config c;
  c.d_model = 64;
  c.n_heads = 2;
  c.positional = Positional::Rotary;
  const RowVec inv_freq = rope_inv_freq(c);
  Rotation rot;
  rot.inv_freq = &inv_freq;
  rot.rot_dim = c.rotary_dim();
  rot.d_head = c.d_k();
  rot.pos0 = 17;
  rot.rows_per_seq = 9;
  const Mat x = Mat::Random(18, 64) * 3.0f;  // two sequences of 9 rows
  Mat row_by_row = x;
  apply_rotary(row_by_row, rot);
  tabulate_angles(rot);
  Mat tabulated = x;
  apply_rotary(tabulated, rot);
  EXPECT_EQ(tabulated, row_by_row);
  EXPECT_GT((tabulated - x).cwiseAbs().maxCoeff(), 0.1f);  // it did turn
}

}  // namespace
}  // namespace sf
