#include "model/encoder.h"

#include "base/phase_timer.h"
#include "model/linear.h"
#include "model/mask.h"
#include "model/sublayers.h"

namespace sf {

std::vector<Mat> source_masks(const Model& m, const std::vector<int>& src_ids, int batch, int n_q) {
  const ScopedPhase phase(Phase::Embedding);
  const size_t n = src_ids.size() / static_cast<size_t>(batch);
  std::vector<Mat> masks;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> keys(src_ids.begin() + static_cast<std::ptrdiff_t>(b * n),
                          src_ids.begin() + static_cast<std::ptrdiff_t>((b + 1) * n));
    masks.push_back(make_mask(n_q, keys, source_pad_key(m.config), /*causal=*/false));
  }
  return masks;
}

Mat encode(const Model& m, const std::vector<int>& src_ids, int batch, EncoderTrace* tr, const RunOptions& opt) {
  const Config& c = m.config;
  const int n = static_cast<int>(src_ids.size()) / batch;
  const MaskList masks = source_masks(m, src_ids, batch, n);  // one copy for every layer
  if (tr) {
    tr->batch = batch;
    tr->layers.resize(static_cast<size_t>(c.n_encoder_layers));
    spread_kind(*tr);
  }
  Mat x;  // (B·n, d) the residual stream
  embed(m.embedding(/*source=*/true), src_ids, batch, 0, opt.positional_encoding, x, tr ? &tr->embed : nullptr);
  for (int l = 0; l < c.n_encoder_layers; ++l) {
    const EncoderLayerWeights& w = m.weights.encoder[static_cast<size_t>(l)];
    EncoderLayerTrace* lt = tr ? &tr->layers[static_cast<size_t>(l)] : nullptr;
    const Intervention* iv = opt.intervention.get();
    if (iv) iv->stream(Stack::Encoder, l, x, batch, 0);
    const Hook attn_hook{iv, Stack::Encoder, SiteKind::SelfAttention, l, batch, 0};
    const Hook mlp_hook{iv, Stack::Encoder, SiteKind::Mlp, l, batch, 0};
    Mat y;
    residual_block(
        c.norm, w.norm1, x,
        [&](const Mat& in, Mat& out) {
          AttentionTrace* at = lt ? &lt->self_attn : nullptr;
          attention_forward(w.self_attn, c.encoder_heads(), in, in, masks, out, at, nullptr, &attn_hook);
          if (attn_hook.output(out) && at && at->kind != Recording::Training) at->out = out;
        },
        y, lt ? &lt->self_block : nullptr);
    ffn_connection(c, w.norm2, w.ffn, y, x, lt ? &lt->ffn : nullptr, lt ? &lt->ffn_block : nullptr, mlp_hook);
  }
  close_stack(c.norm, m.weights.encoder_norm, x, tr ? &tr->final_norm : nullptr);
  if (tr) {
    const ScopedPhase phase(Phase::RecordingCopy);
    tr->output = x;
  }
  if (tr && c.mlm_head) mlm_logits(m, x, tr);
  return x;
}

Mat mlm_logits(const Model& m, const Mat& x, EncoderTrace* tr) {
  const Config& c = m.config;
  const MlmHeadWeights& w = m.weights.mlm;
  Mat h;  // (B·n, d)
  linear_forward(x, w.dense, h);
  if (tr) tr->mlm_hidden_pre = h;
  activation_forward(c.activation, h);
  Mat y;  // (B·n, d)
  layer_norm_forward(h, w.norm, y, tr ? &tr->mlm_norm : nullptr);
  Mat logits;  // (B·n, V)
  generator_forward(m.weights, c, y, logits);
  if (tr) {
    tr->mlm_hidden = std::move(y);
    record_logits(logits, tr->logits, tr->log_probs, tr->probs);
  }
  return logits;
}

}  // namespace sf
