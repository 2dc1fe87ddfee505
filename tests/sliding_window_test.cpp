// The sliding-window band (Mistral) as the Masks panel draws it: the parts of the mask
// (model/mask.h's mask_parts) against the reference's banded causal mask, and the mask the
// mistral fixture's forward pass records, prefill and cached steps, against the same reference.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "io/hf_model.h"
#include "model/mask.h"
#include "reference/mask.h"
#include "reference/sliding_window.h"
#include "stepper/session.h"
#include "test_util.h"

namespace sf {
namespace {

// −∞ cells equal, 0 cells equal: an exact comparison of two additive masks.
bool same_mask(const Mat& a, const Mat& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      if (std::isinf(a(i, j)) != std::isinf(b(i, j)) || (!std::isinf(a(i, j)) && a(i, j) != b(i, j))) return false;
  return true;
}

int count_masked(const Mat& m) {
  int n = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i) n += std::isinf(m.data()[i]) ? 1 : 0;
  return n;
}

TEST(SlidingWindow, FirstVisibleKeyIsTMinusWPlusOne) {
  EXPECT_EQ(first_visible_key(0, 3), 0);
  EXPECT_EQ(first_visible_key(2, 3), 0);  // t = 2 sees 0 … 2: nothing has fallen out yet
  EXPECT_EQ(first_visible_key(3, 3), 1);  // t = 3 sees 1 … 3: token 0 is out
  EXPECT_EQ(first_visible_key(9, 3), 7);
  EXPECT_EQ(first_visible_key(9, 1), 9);  // W = 1: only itself
  EXPECT_EQ(first_visible_key(9, 0), 0);  // no window: everything up to t
}

TEST(SlidingWindow, PartsAddUpToTheReferenceBand) {
  for (int window : {1, 2, 3, 5})
    for (int q_offset : {0, 2, 7})
      for (int n_q : {1, 4, 6}) {
        const int n_k = q_offset + n_q;
        const std::vector<int> keys(static_cast<size_t>(n_k), 5);  // no key is <pad> (-1)
        const MaskParts p = mask_parts(n_q, keys, -1, true, q_offset, window);
        const std::string at =
            "W " + std::to_string(window) + ", offset " + std::to_string(q_offset) + ", n_q " + std::to_string(n_q);
        EXPECT_TRUE(same_mask(p.combined, ref::sliding_window_mask(n_q, n_k, window, q_offset))) << at;
        EXPECT_TRUE(same_mask(p.combined, make_mask(n_q, keys, -1, true, q_offset, window))) << at;
        EXPECT_TRUE(same_mask(p.future, ref::causal_mask(n_q, n_k, q_offset))) << at;
        EXPECT_EQ(count_masked(p.padding), 0) << at;
        // Out of the window = what the band hides beyond the causal mask; never both.
        EXPECT_EQ(count_masked(p.outside_window) + count_masked(p.future), count_masked(p.combined)) << at;
        int dropped = 0;  // query at position t has max(0, t − W + 1) keys before its window
        for (int i = 0; i < n_q; ++i) dropped += first_visible_key(q_offset + i, window);
        EXPECT_EQ(count_masked(p.outside_window), dropped) << at;
        EXPECT_EQ(p.window, window);
      }
}

TEST(SlidingWindow, HandCheckedBandOfFiveTokensWindowTwo) {
  // Query i (rows), key j (columns): "." visible, "F" the future, "W" fell out of the window;
  // key 2 is also <pad> (id 0), hidden from every query whatever the band says.
  const std::vector<int> keys{7, 7, 0, 7, 7};
  const MaskParts p = mask_parts(5, keys, 0, true, 0, 2);
  const char* rows[] = {".FFFF", "..FFF", "W..FF", "WW..F", "WWW.."};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const char c = rows[i][j];
      EXPECT_EQ(std::isinf(p.future(i, j)), c == 'F') << i << "," << j;
      EXPECT_EQ(std::isinf(p.outside_window(i, j)), c == 'W') << i << "," << j;
      EXPECT_EQ(std::isinf(p.padding(i, j)), j == 2) << i << "," << j;
      EXPECT_EQ(std::isinf(p.combined(i, j)), c != '.' || j == 2) << i << "," << j;
    }
}

TEST(SlidingWindow, NoWindowLeavesOnlyTheCausalMask) {
  const std::vector<int> keys(6, 4);
  const MaskParts p = mask_parts(6, keys, -1, true, 0, 0);
  EXPECT_EQ(count_masked(p.outside_window), 0);
  EXPECT_TRUE(same_mask(p.combined, ref::causal_mask(6, 6)));
}

// The mistral fixture (sliding_window 3) on a prompt longer than the window: the mask its forward
// pass recorded, in the prefill and in a cached step, is the reference band, and tokens fall out.
TEST(SlidingWindow, TheMistralFixturesRecordedMaskIsTheBand) {
  auto loaded = load_hf_model(test::fixture("hf/mistral-tiny-sharded"));
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  auto model = std::make_shared<const Model>(std::move(*loaded));
  const int W = model->config.sliding_window;
  ASSERT_EQ(W, 3);
  DecodeSettings s;
  s.max_len = 12;
  auto made = Session::create(model, "the cat sat on the mat and", "", s, true);
  ASSERT_TRUE(made.ok()) << made.error();
  Session& se = *made;
  ASSERT_TRUE(se.jump_to_step(1));
  const StepRecord& prefill = *se.steps()[0];
  const int n = static_cast<int>(prefill.fed.size());
  ASSERT_GT(n, W + 2) << "the prompt must be longer than the window for tokens to fall out";
  for (const auto& layer : prefill.trace->layers) {
    const Mat& m = layer.self_attn.masks[0];
    EXPECT_TRUE(same_mask(m, ref::sliding_window_mask(n, n, W)));
    const MaskParts p = mask_parts(n, prefill.fed, decoder_pad_key(model->config), true, 0, W);
    EXPECT_TRUE(same_mask(m, p.combined));
    EXPECT_GT(count_masked(p.outside_window), 0);
  }
  // Step 1 runs one query at position n over n + 1 cached keys.
  const StepRecord& step1 = *se.steps()[1];
  ASSERT_EQ(step1.position0, n);
  for (const auto& layer : step1.trace->layers)
    EXPECT_TRUE(same_mask(layer.self_attn.masks[0], ref::sliding_window_mask(1, n + 1, W, n)));
}

}  // namespace
}  // namespace sf
