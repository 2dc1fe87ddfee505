#include "io/trace_export.h"

#include <initializer_list>
#include <utility>

#include "model/model.h"

namespace sf {

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

// Where the tensors go: the file, and the names it takes (empty filter: every one). A tensor is
// made only when its name is taken, so a selection costs only what it selects.
struct Out {
  TensorFile& file;
  const NameFilter& keep;
  template <class Make>
  void add(const std::string& name, Make&& make) {
    if (!keep || keep(name)) file.add(name, make());
  }
};

// Rows of batch element 0: a trace of B = 1 is written whole.
Tensor first_rows(const Mat& m, int batch) {
  const Eigen::Index r = batch > 0 ? m.rows() / batch : m.rows();
  return Tensor::from_mat(m.topRows(r));
}

Tensor col_vec(const ColVec& v, int batch) {
  const Eigen::Index r = batch > 0 ? v.size() / batch : v.size();
  return Tensor::from_vec(std::vector<float>(v.data(), v.data() + r), {r});
}

using Named = std::initializer_list<std::pair<const char*, const Mat*>>;

// Writes p + suffix for each (suffix, matrix): the one shape every activation block is written in.
void add_rows(Out& f, const std::string& p, Named blocks, int batch) {
  for (const auto& b : blocks) {
    const Mat& m = *b.second;
    f.add(p + b.first, [&] { return first_rows(m, batch); });
  }
}

void add_norm(Out& f, const std::string& p, const LayerNormTrace& n, int batch) {
  if (n.rms.size() > 0) {  // RMSNorm: the root mean square per token, no mean or variance
    f.add(p + ".rms", [&] { return col_vec(n.rms, batch); });
    add_rows(f, p, {{".out", &n.out}}, batch);
    return;
  }
  if (n.mean.size() == 0) return;  // no LayerNorm at this place (the other norm placement)
  f.add(p + ".mean", [&] { return col_vec(n.mean, batch); });
  f.add(p + ".var", [&] { return col_vec(n.var, batch); });
  add_rows(f, p, {{".out", &n.out}}, batch);
}

// A residual connection and its LayerNorm, e.g. ".self_block" with ".norm1".
void add_connection(Out& f, const std::string& p, const char* block, const char* norm, const ResidualTrace& r,
                    int batch) {
  add_rows(f, p + block,
           {{".input", &r.input},
            {".sublayer_in", &r.sublayer_in},
            {".sublayer_out", &r.sublayer_out},
            {".sum", &r.sum},
            {".output", &r.output}},
           batch);
  add_norm(f, p + norm, r.norm, batch);
}

// The maps (raw scores, scores, weights) only when recorded: a compact recording (trace --only)
// holds Q, K and the mask, and computes the maps asked for (fill_selected_maps).
void add_attention(Out& f, const std::string& p, const AttentionTrace& a) {
  if (a.masks.empty()) return;  // no such sublayer
  add_rows(f, p, {{".q", &a.q}, {".k", &a.k}, {".v", &a.v}}, a.batch);
  if (a.q_unrotated.size() > 0) add_rows(f, p, {{".q_unrotated", &a.q_unrotated}}, a.batch);
  if (a.k_unrotated.size() > 0) add_rows(f, p, {{".k_unrotated", &a.k_unrotated}}, a.batch);
  const bool maps = a.n_heads > 0 && a.raw_scores.size() >= static_cast<size_t>(a.n_heads) &&
                    a.weights.size() >= static_cast<size_t>(a.n_heads);
  if (maps) {
    f.add(p + ".raw_scores", [&] { return stack_heads(a.raw_scores, a.n_heads, 0); });
    f.add(p + ".scores", [&] { return stack_heads(a.all_scores(), a.n_heads, 0); });
  }
  // −inf is stored as is: safetensors keeps IEEE floats, and the mask *is* −inf.
  f.add(p + ".mask", [&] { return Tensor::from_mat(a.masks[0]); });
  if (maps) f.add(p + ".weights", [&] { return stack_heads(a.weights, a.n_heads, 0); });
  add_rows(f, p, {{".concat", &a.concat}, {".out", &a.out}}, a.batch);
}

void add_ffn(Out& f, const std::string& p, const FeedForwardTrace& t, int batch) {
  if (t.up.size() > 0) {  // the gated MLP
    add_rows(f, p,
             {{".gate_pre", &t.gate_pre}, {".gate", &t.gate}, {".up", &t.up}, {".hidden", &t.hidden}, {".out", &t.out}},
             batch);
    return;
  }
  add_rows(f, p, {{".hidden_pre", &t.hidden_pre}, {".hidden", &t.hidden}, {".out", &t.out}}, batch);
}

void add_embed(Out& f, const std::string& p, const EmbeddingTrace& e, int batch) {
  add_rows(f, p, {{".scaled", &e.scaled}, {".pe", &e.pe}}, batch);
  if (e.types.size() > 0) add_rows(f, p, {{".types", &e.types}}, batch);  // BERT's segment rows
  if (e.pre_norm.size() > 0) {  // BERT: the sum before the embedding LayerNorm
    add_rows(f, p, {{".pre_norm", &e.pre_norm}}, batch);
    add_norm(f, p + ".norm", e.norm, batch);
  }
  add_rows(f, p, {{".sum", &e.sum}}, batch);
}

std::vector<int> first_ids(const std::vector<int>& ids, int batch) {
  return std::vector<int>(ids.begin(),
                          ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / static_cast<size_t>(batch)));
}

// The start of a stack: its token ids ("src_ids" / "tgt_ids") and its embedding sum.
void add_stack_input(Out& f, const std::string& prefix, const char* ids, const std::string& stack,
                     const EmbeddingTrace& e, int batch) {
  f.add(prefix + ids, [&] { return Tensor::from_ids(first_ids(e.ids, batch)); });
  add_embed(f, prefix + stack + ".embed", e, batch);
}

// A layer's self-attention sublayer: the connection (with norm1) and the attention inside it.
void add_self_attention(Out& f, const std::string& p, const ResidualTrace& block, const AttentionTrace& a, int batch) {
  add_connection(f, p, ".self_block", ".norm1", block, batch);
  add_attention(f, p + ".self_attn", a);
}

void decoder_tensors(const Model& m, const DecoderTrace& t, Out& f, const std::string& prefix) {
  const int B = t.batch;
  const bool enc = m.config.has_encoder();
  add_stack_input(f, prefix, "tgt_ids", "decoder", t.embed, B);
  for (size_t i = 0; i < t.layers.size(); ++i) {
    const std::string p = prefix + "decoder.layers." + std::to_string(i);
    const DecoderLayerTrace& l = t.layers[i];
    add_self_attention(f, p, l.self_block, l.self_attn, B);
    if (enc) {
      add_connection(f, p, ".cross_block", ".norm2", l.cross_block, B);
      add_attention(f, p + ".cross_attn", l.cross_attn);
    }
    if (!m.config.has_ffn()) continue;  // an attention-only layer
    add_connection(f, p, ".ffn_block", enc ? ".norm3" : ".norm2", l.ffn_block, B);
    add_ffn(f, p + ".ffn", l.ffn, B);
  }
  add_norm(f, prefix + "decoder.norm", t.final_norm, B);
  add_rows(f, prefix,
           {{"decoder.output", &t.output}, {"logits", &t.logits}, {"log_probs", &t.log_probs}, {"probs", &t.probs}}, B);
}

void encoder_tensors(const Model& m, const EncoderTrace& e, Out& f, const std::string& prefix) {
  if (!m.config.has_encoder()) return;
  const int B = e.batch;
  add_stack_input(f, prefix, "src_ids", "encoder", e.embed, B);
  for (size_t i = 0; i < e.layers.size(); ++i) {
    const std::string p = prefix + "encoder.layers." + std::to_string(i);
    const EncoderLayerTrace& l = e.layers[i];
    add_self_attention(f, p, l.self_block, l.self_attn, B);
    add_connection(f, p, ".ffn_block", ".norm2", l.ffn_block, B);
    add_ffn(f, p + ".ffn", l.ffn, B);
  }
  add_norm(f, prefix + "encoder.norm", e.final_norm, B);
  add_rows(f, prefix, {{"encoder.output", &e.output}}, B);
  if (e.logits.size() == 0) return;  // no masked-LM head
  add_rows(f, prefix + "mlm", {{".hidden_pre", &e.mlm_hidden_pre}, {".hidden", &e.mlm_hidden}}, B);
  add_norm(f, prefix + "mlm.norm", e.mlm_norm, B);
  // An encoder-only model's masked-LM predictions take the names a decoder's would.
  add_rows(f, prefix, {{"logits", &e.logits}, {"log_probs", &e.log_probs}, {"probs", &e.probs}}, B);
}

}  // namespace

void append_decoder_tensors(const Model& m, const DecoderTrace& t, TensorFile& f, const std::string& prefix,
                            const NameFilter& keep) {
  Out out{f, keep};
  decoder_tensors(m, t, out, prefix);
}

void append_encoder_tensors(const Model& m, const EncoderTrace& e, TensorFile& f, const std::string& prefix,
                            const NameFilter& keep) {
  Out out{f, keep};
  encoder_tensors(m, e, out, prefix);
}

void append_trace_tensors(const Model& m, const Trace& t, TensorFile& f, const std::string& prefix,
                          const NameFilter& keep) {
  append_encoder_tensors(m, t.encoder, f, prefix, keep);
  if (m.config.has_decoder()) append_decoder_tensors(m, t.decoder, f, prefix, keep);
}

}  // namespace sf
