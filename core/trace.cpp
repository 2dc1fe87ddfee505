#include "trace.h"

#include <cmath>

#include "model.h"

namespace sf {

Mat log_softmax_rows(const Mat& logits) {
  Mat out(logits.rows(), logits.cols());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const float mx = logits.row(i).maxCoeff();
    const float lse = mx + std::log((logits.row(i).array() - mx).exp().sum());
    out.row(i) = logits.row(i).array() - lse;
  }
  return out;
}

Mat softmax_rows(const Mat& logits) { return log_softmax_rows(logits).array().exp().matrix(); }

Tensor stack_heads(const std::vector<Mat>& per_head, int n_heads, int b) {
  const Mat& first = per_head[static_cast<size_t>(b * n_heads)];
  Tensor t;
  t.shape = {n_heads, first.rows(), first.cols()};
  t.f32.reserve(static_cast<size_t>(t.numel()));
  for (int h = 0; h < n_heads; ++h) {
    const Mat& m = per_head[static_cast<size_t>(b * n_heads + h)];
    t.f32.insert(t.f32.end(), m.data(), m.data() + m.size());
  }
  return t;
}

namespace {

// Rows of batch element 0: a trace of B = 1 is written whole.
Tensor first_rows(const Mat& m, int batch) {
  const Eigen::Index r = batch > 0 ? m.rows() / batch : m.rows();
  return Tensor::from_mat(m.topRows(r));
}

Tensor col_vec(const ColVec& v, int batch) {
  const Eigen::Index r = batch > 0 ? v.size() / batch : v.size();
  return Tensor::from_vec(std::vector<float>(v.data(), v.data() + r), {r});
}

void add_norm(TensorFile& f, const std::string& p, const LayerNormTrace& n, int batch) {
  if (n.mean.size() == 0) return;
  f.add(p + ".mean", col_vec(n.mean, batch));
  f.add(p + ".var", col_vec(n.var, batch));
  f.add(p + ".out", first_rows(n.out, batch));
}

void add_block(TensorFile& f, const std::string& p, const ResidualTrace& r, int batch) {
  f.add(p + ".input", first_rows(r.input, batch));
  f.add(p + ".sublayer_in", first_rows(r.sublayer_in, batch));
  f.add(p + ".sublayer_out", first_rows(r.sublayer_out, batch));
  f.add(p + ".sum", first_rows(r.sum, batch));
  f.add(p + ".output", first_rows(r.output, batch));
}

void add_attention(TensorFile& f, const std::string& p, const AttentionTrace& a) {
  if (a.weights.empty()) return;
  const int B = a.batch;
  f.add(p + ".q", first_rows(a.q, B));
  f.add(p + ".k", first_rows(a.k, B));
  f.add(p + ".v", first_rows(a.v, B));
  f.add(p + ".raw_scores", stack_heads(a.raw_scores, a.n_heads, 0));
  f.add(p + ".scores", stack_heads(a.scores, a.n_heads, 0));
  // −inf is stored as is: safetensors keeps IEEE floats, and the mask *is* −inf.
  f.add(p + ".mask", Tensor::from_mat(a.masks[0]));
  f.add(p + ".weights", stack_heads(a.weights, a.n_heads, 0));
  f.add(p + ".concat", first_rows(a.concat, B));
  f.add(p + ".out", first_rows(a.out, B));
}

void add_ffn(TensorFile& f, const std::string& p, const FeedForwardTrace& t, int batch) {
  f.add(p + ".hidden_pre", first_rows(t.hidden_pre, batch));
  f.add(p + ".hidden", first_rows(t.hidden, batch));
  f.add(p + ".out", first_rows(t.out, batch));
}

void add_embed(TensorFile& f, const std::string& p, const EmbeddingTrace& e, int batch) {
  f.add(p + ".scaled", first_rows(e.scaled, batch));
  f.add(p + ".pe", first_rows(e.pe, batch));
  f.add(p + ".sum", first_rows(e.sum, batch));
}

std::vector<int> first_ids(const std::vector<int>& ids, int batch) {
  return std::vector<int>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / static_cast<size_t>(batch)));
}

}  // namespace

void append_decoder_tensors(const Model& m, const DecoderTrace& t, TensorFile& f, const std::string& prefix) {
  const int B = t.batch;
  const bool enc = m.config.has_encoder();
  f.add(prefix + "tgt_ids", Tensor::from_ids(first_ids(t.embed.ids, B)));
  add_embed(f, prefix + "decoder.embed", t.embed, B);
  for (size_t i = 0; i < t.layers.size(); ++i) {
    const std::string p = prefix + "decoder.layers." + std::to_string(i);
    const DecoderLayerTrace& l = t.layers[i];
    add_block(f, p + ".self_block", l.self_block, B);
    add_norm(f, p + ".norm1", l.self_block.norm, B);
    add_attention(f, p + ".self_attn", l.self_attn);
    if (enc) {
      add_block(f, p + ".cross_block", l.cross_block, B);
      add_norm(f, p + ".norm2", l.cross_block.norm, B);
      add_attention(f, p + ".cross_attn", l.cross_attn);
    }
    add_block(f, p + ".ffn_block", l.ffn_block, B);
    add_norm(f, p + (enc ? ".norm3" : ".norm2"), l.ffn_block.norm, B);
    add_ffn(f, p + ".ffn", l.ffn, B);
  }
  add_norm(f, prefix + "decoder.norm", t.final_norm, B);
  f.add(prefix + "decoder.output", first_rows(t.output, B));
  f.add(prefix + "logits", first_rows(t.logits, B));
  f.add(prefix + "log_probs", first_rows(t.log_probs, B));
  f.add(prefix + "probs", first_rows(t.probs, B));
}

void append_encoder_tensors(const Model& m, const EncoderTrace& e, TensorFile& f, const std::string& prefix) {
  if (!m.config.has_encoder()) return;
  const int B = e.batch;
  f.add(prefix + "src_ids", Tensor::from_ids(first_ids(e.embed.ids, B)));
  add_embed(f, prefix + "encoder.embed", e.embed, B);
  for (size_t i = 0; i < e.layers.size(); ++i) {
    const std::string p = prefix + "encoder.layers." + std::to_string(i);
    const EncoderLayerTrace& l = e.layers[i];
    add_block(f, p + ".self_block", l.self_block, B);
    add_norm(f, p + ".norm1", l.self_block.norm, B);
    add_attention(f, p + ".self_attn", l.self_attn);
    add_block(f, p + ".ffn_block", l.ffn_block, B);
    add_norm(f, p + ".norm2", l.ffn_block.norm, B);
    add_ffn(f, p + ".ffn", l.ffn, B);
  }
  add_norm(f, prefix + "encoder.norm", e.final_norm, B);
  f.add(prefix + "encoder.output", first_rows(e.output, B));
}

void append_trace_tensors(const Model& m, const Trace& t, TensorFile& f, const std::string& prefix) {
  append_encoder_tensors(m, t.encoder, f, prefix);
  append_decoder_tensors(m, t.decoder, f, prefix);
}

}  // namespace sf
