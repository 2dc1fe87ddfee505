// gradnorms.h — pre-LN vs post-LN at initialisation (Xiong et al. 2020, "On Layer Normalization
// in the Transformer Architecture", §3 and Fig. 3).
//
// For a freshly initialised encoder-decoder of L + L layers, one batch of a task, the loss and its
// gradient: per layer the gradient norm ‖∂L/∂W‖_F of the feed-forward's second weight (fc2, the
// paper's W²) and the residual-stream norm leaving the layer (mean over tokens of ‖x‖₂, before
// pre-LN's final LayerNorm), averaged over seeds. The paper's result: post-LN's last-layer
// gradient does not shrink with depth (and is large, hence the warm-up), pre-LN's shrinks like
// 1/√L while its residual stream grows.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"

namespace sf {

struct GradNormOptions {
  int layers = 6;  // L encoder + L decoder layers
  NormPlacement norm = NormPlacement::Pre;
  int seeds = 10;  // seeds 1 .. seeds (initialisation and batch)
  int d_model = 64;
  int n_heads = 4;
  int d_ff = 256;
  int batch = 32;
  std::string task = "copy";
  float label_smoothing = 0.1f;
};

struct GradNormResult {
  std::vector<double> encoder_ffn;     // (L) mean over seeds of ‖∇ encoder.layers.l.ffn.fc2.weight‖
  std::vector<double> decoder_ffn;     // (L) the same for the decoder
  std::vector<double> encoder_stream;  // (L) mean residual-stream norm leaving encoder layer l
  std::vector<double> decoder_stream;  // (L)
  double loss = 0;                     // mean initial loss
};

GradNormResult gradnorms_at_init(const GradNormOptions& o);

}  // namespace sf
