#include "train/gradnorms.h"

#include "model/decoder.h"
#include "model/encoder.h"
#include "train/backward.h"
#include "train/batch.h"
#include "train/loss.h"
#include "train/trainer.h"

namespace sf {

namespace {

// Mean over non-pad rows of the row norm.
double stream_norm(const Mat& x, const std::vector<int>& ids, int pad) {
  double s = 0;
  int n = 0;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    if (ids[static_cast<size_t>(r)] == pad) continue;
    s += x.row(r).norm();
    ++n;
  }
  return n ? s / n : 0.0;
}

}  // namespace

GradNormResult gradnorms_at_init(const GradNormOptions& o) {
  TrainOptions to;
  to.task = o.task;
  to.norm = o.norm;
  to.encoder_layers = to.decoder_layers = o.layers;
  to.d_model = o.d_model;
  to.n_heads = o.n_heads;
  to.d_ff = o.d_ff;
  auto task = options_task(to);
  GradNormResult r;
  if (!task || task->arch != Arch::EncoderDecoder) return r;
  const Config c = model_config(to, *task);
  const size_t L = static_cast<size_t>(o.layers);
  r.encoder_ffn.assign(L, 0);
  r.decoder_ffn.assign(L, 0);
  r.encoder_stream.assign(L, 0);
  r.decoder_stream.assign(L, 0);
  for (int seed = 1; seed <= o.seeds; ++seed) {
    Weights w;
    init_xavier(w, c, static_cast<uint64_t>(seed));
    const Model m = Model::make(c, std::move(w));
    Rng rng(static_cast<uint64_t>(seed) * 7919);
    std::vector<Example> ex;
    for (int i = 0; i < o.batch; ++i) ex.push_back(task->sample(rng, Split::Train));
    const Batch b = make_batch(c, ex);
    Trace t;
    encode(m, b.src, b.size, &t.encoder);
    const EncoderContext enc{&t.encoder.output, &b.src};
    const Mat logits = decode(m, b.tgt_in, b.size, enc, nullptr, &t.decoder);
    Mat dlogits;
    r.loss += cross_entropy(logits, b.tgt_y, c.tgt_vocab.pad(), o.label_smoothing, &dlogits).loss / o.seeds;
    Weights g;
    allocate(g, c);
    zero_grads(g, c);
    model_backward(m, t, dlogits, g);
    for (size_t l = 0; l < L; ++l) {
      r.encoder_ffn[l] += g.encoder[l].ffn.fc2.weight.norm() / o.seeds;
      r.decoder_ffn[l] += g.decoder[l].ffn.fc2.weight.norm() / o.seeds;
      r.encoder_stream[l] += stream_norm(t.encoder.layers[l].ffn_block.output, b.src, c.src_vocab.pad()) / o.seeds;
      r.decoder_stream[l] += stream_norm(t.decoder.layers[l].ffn_block.output, b.tgt_in, c.tgt_vocab.pad()) / o.seeds;
    }
  }
  return r;
}

}  // namespace sf
