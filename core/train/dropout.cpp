#include "train/dropout.h"

#include "base/rng.h"

namespace sf {

namespace {

void draw_mask(Mat& m, int rows, int d, float p, Rng& rng) {
  m.resize(rows, d);
  const float keep = 1.0f / (1.0f - p);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform() < p ? 0.0f : keep;
}

}  // namespace

void draw_dropout_masks(Trace& t, const Config& c, int batch, int n, int m, float p, uint64_t seed) {
  Rng rng(seed);
  const int d = c.d_model;
  if (c.has_encoder()) {
    const int rows = batch * n;
    t.encoder.layers.resize(static_cast<size_t>(c.n_encoder_layers));
    draw_mask(t.encoder.embed.dropout_mask, rows, d, p, rng);
    for (auto& l : t.encoder.layers)
      for (ResidualTrace* r : {&l.self_block, &l.ffn_block}) draw_mask(r->dropout_mask, rows, d, p, rng);
  }
  const int rows = batch * m;
  t.decoder.layers.resize(static_cast<size_t>(c.n_decoder_layers));
  draw_mask(t.decoder.embed.dropout_mask, rows, d, p, rng);
  for (auto& l : t.decoder.layers) {
    draw_mask(l.self_block.dropout_mask, rows, d, p, rng);
    if (c.has_encoder()) draw_mask(l.cross_block.dropout_mask, rows, d, p, rng);
    if (c.has_ffn()) draw_mask(l.ffn_block.dropout_mask, rows, d, p, rng);
  }
}

}  // namespace sf
