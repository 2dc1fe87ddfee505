// Pre-LN vs post-LN at initialisation (Xiong et al. 2020), on averages over 10 seeds, with the
// configuration `stepformer gradnorms` uses by default (d_model 64, 4 heads, d_ff 256, batch 32
// of the copy task). Measured values (docs/training.md) for the last decoder layer's
// ‖∇ ffn.fc2.weight‖:
//            2 layers   6 layers   12 layers
//   pre-LN     0.798      0.613      0.401     falls: 12-layer = 0.50 × 2-layer
//   post-LN    1.709      1.913      2.432     does not fall (rises 1.42×; Xiong et al.'s figure stays within ±25 %)
// At 6 layers post-LN / pre-LN = 3.1 (the test asks ≥ 1.8). Residual stream leaving the last layer:
// pre-LN 18.2 → 40.9 (grows), post-LN 8.0 = √d at every depth (flat: LayerNorm output).
#include <gtest/gtest.h>

#include "train/gradnorms.h"

namespace sf {
namespace {

GradNormResult run(NormPlacement norm, int layers) {
  GradNormOptions o;
  o.norm = norm;
  o.layers = layers;
  o.seeds = 10;
  return gradnorms_at_init(o);
}

TEST(GradNorms, PreLnFallsWithDepthPostLnDoesNot) {
  const auto pre2 = run(NormPlacement::Pre, 2), pre6 = run(NormPlacement::Pre, 6), pre12 = run(NormPlacement::Pre, 12);
  const auto post2 = run(NormPlacement::Post, 2), post6 = run(NormPlacement::Post, 6),
             post12 = run(NormPlacement::Post, 12);
  const double pre_ratio = pre12.decoder_ffn.back() / pre2.decoder_ffn.back();
  const double post_ratio = post12.decoder_ffn.back() / post2.decoder_ffn.back();
  // Pre-LN's last-layer gradient falls (paper: like 1/√L, i.e. 0.41 from 2 to 12 layers).
  EXPECT_LE(pre_ratio, 0.55) << "pre-LN 12-layer / 2-layer";
  EXPECT_LT(pre6.decoder_ffn.back(), pre2.decoder_ffn.back());
  // Post-LN's does not fall with depth (measured 1.42×; Xiong et al.'s ±25 % is not met here).
  EXPECT_GE(post_ratio, 0.9) << "post-LN 12-layer / 2-layer";
  EXPECT_LE(post_ratio, 1.6) << "post-LN 12-layer / 2-layer";
  // At 6 layers post-LN's last-layer gradient is much larger than pre-LN's.
  EXPECT_GE(post6.decoder_ffn.back() / pre6.decoder_ffn.back(), 1.8);
  EXPECT_GE(post6.encoder_ffn.back() / pre6.encoder_ffn.back(), 1.8);
  // Within a 6-layer post-LN model the gradient grows towards the top; pre-LN's does not.
  EXPECT_GT(post6.decoder_ffn.back(), post6.decoder_ffn.front());
  // Residual stream: pre-LN grows with depth, post-LN stays at √d (the LayerNorm output).
  EXPECT_GE(pre12.decoder_stream.back() / pre2.decoder_stream.back(), 1.5);
  EXPECT_GE(pre12.encoder_stream.back() / pre2.encoder_stream.back(), 1.5);
  EXPECT_GT(pre12.decoder_stream.back(), pre12.decoder_stream.front());
  EXPECT_NEAR(post12.decoder_stream.back() / post2.decoder_stream.back(), 1.0, 0.01);
  EXPECT_NEAR(post12.decoder_stream.back(), 8.0, 0.1);
}

}  // namespace
}  // namespace sf
