#include "train/backward.h"

#include "model/linear.h"

namespace sf {

namespace {

Mat* learned_positions(const Model& m, Weights& g, bool use_positional) {
  return m.config.positional == Positional::Learned && use_positional ? &g.pos_embed : nullptr;
}

// Self-attention's sublayer backward: queries, keys and values all read the same input.
void self_attention_backward(const AttentionWeights& w, const Mat& in, const AttentionTrace& tr, const Mat& dout,
                             AttentionWeights& g, Mat& din, GemmOut matrices) {
  attention_backward(w, in, in, tr, dout, g, din, nullptr, GemmOut::Overwrite, matrices);
}

}  // namespace

void decoder_backward(const Model& m, const DecoderTrace& t, const Mat* memory, const Mat& dlogits, Weights& g,
                      Mat* dmemory, bool use_positional, GemmOut matrices) {
  const Config& c = m.config;
  const Weights& w = m.weights;
  Mat dx;  // (B·m, d) grad of the residual stream, walking down the stack
  // (a generator tied to the embedding adds to the embedding's gradient, which is not a matrix's)
  linear_backward(t.output, w.generator_weight(c), dlogits, c.share_embeddings ? g.tgt_embed : g.generator.weight,
                  g.generator.bias, &dx, GemmOut::Overwrite, {}, c.share_embeddings ? GemmOut::Accumulate : matrices);
  if (c.norm == NormPlacement::Pre) {
    Mat dy;
    layer_norm_backward(t.layers.back().last_block(c).output, w.decoder_norm, t.final_norm, dx, g.decoder_norm, dy);
    dx = std::move(dy);
  }
  if (dmemory && c.has_encoder()) *dmemory = Mat::Zero(memory->rows(), memory->cols());
  for (int l = c.n_decoder_layers - 1; l >= 0; --l) {
    const DecoderLayerWeights& lw = w.decoder[static_cast<size_t>(l)];
    DecoderLayerWeights& lg = g.decoder[static_cast<size_t>(l)];
    const DecoderLayerTrace& lt = t.layers[static_cast<size_t>(l)];
    Mat dy;
    if (c.has_ffn())
      residual_backward(
          c.norm, lw.ffn_norm(c.arch), lt.ffn_block, dx,
          [&](const Mat& dout, Mat& din) {
            feed_forward_backward(lw.ffn, c.activation, lt.ffn_block.sublayer_in, lt.ffn, dout, lg.ffn, din, matrices);
          },
          lg.ffn_norm(c.arch), dy);
    else
      dy = std::move(dx);  // an attention-only layer: its output is the attention block's
    if (c.has_encoder()) {
      Mat dz;
      residual_backward(
          c.norm, lw.norm2, lt.cross_block, dy,
          [&](const Mat& dout, Mat& din) {
            Mat unused;  // (B·n, d) the memory's grad when nothing reads it
            attention_backward(lw.cross_attn, lt.cross_block.sublayer_in, *memory, lt.cross_attn, dout, lg.cross_attn,
                               din, dmemory ? dmemory : &unused, dmemory ? GemmOut::Accumulate : GemmOut::Overwrite,
                               matrices);
          },
          lg.norm2, dz);
      dy = std::move(dz);
    }
    residual_backward(
        c.norm, lw.norm1, lt.self_block, dy,
        [&](const Mat& dout, Mat& din) {
          self_attention_backward(lw.self_attn, lt.self_block.sublayer_in, lt.self_attn, dout, lg.self_attn, din,
                                  matrices);
        },
        lg.norm1, dx);
  }
  embed_backward(t.embed, dx, g.tgt_embed, learned_positions(m, g, use_positional));
}

void encoder_backward(const Model& m, const EncoderTrace& t, Mat dmemory, Weights& g, bool use_positional,
                      GemmOut matrices) {
  const Config& c = m.config;
  const Weights& w = m.weights;
  Mat dx = std::move(dmemory);  // (B·n, d)
  if (c.norm == NormPlacement::Pre) {
    Mat dy;
    layer_norm_backward(t.layers.back().ffn_block.output, w.encoder_norm, t.final_norm, dx, g.encoder_norm, dy);
    dx = std::move(dy);
  }
  for (int l = c.n_encoder_layers - 1; l >= 0; --l) {
    const EncoderLayerWeights& lw = w.encoder[static_cast<size_t>(l)];
    EncoderLayerWeights& lg = g.encoder[static_cast<size_t>(l)];
    const EncoderLayerTrace& lt = t.layers[static_cast<size_t>(l)];
    Mat dy;
    residual_backward(
        c.norm, lw.norm2, lt.ffn_block, dx,
        [&](const Mat& dout, Mat& din) {
          feed_forward_backward(lw.ffn, c.activation, lt.ffn_block.sublayer_in, lt.ffn, dout, lg.ffn, din, matrices);
        },
        lg.norm2, dy);
    residual_backward(
        c.norm, lw.norm1, lt.self_block, dy,
        [&](const Mat& dout, Mat& din) {
          self_attention_backward(lw.self_attn, lt.self_block.sublayer_in, lt.self_attn, dout, lg.self_attn, din,
                                  matrices);
        },
        lg.norm1, dx);
  }
  embed_backward(t.embed, dx, c.share_embeddings ? g.tgt_embed : g.src_embed, learned_positions(m, g, use_positional));
}

void model_backward(const Model& m, const Trace& t, const Mat& dlogits, Weights& g, bool use_positional,
                    GemmOut matrices) {
  if (!m.config.has_encoder()) {
    decoder_backward(m, t.decoder, nullptr, dlogits, g, nullptr, use_positional, matrices);
    return;
  }
  Mat dmemory;
  decoder_backward(m, t.decoder, &t.encoder.output, dlogits, g, &dmemory, use_positional, matrices);
  encoder_backward(m, t.encoder, std::move(dmemory), g, use_positional, matrices);
}

}  // namespace sf
