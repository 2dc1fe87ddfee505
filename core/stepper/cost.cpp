#include "stepper/cost.h"

#include "model/attention.h"

namespace sf {

namespace {

int64_t attention_params(int64_t d) { return 4 * d * d + 4 * d; }  // W_q, W_k, W_v, W_o (d, d) + biases
// Decoder self-attention as the config builds it: W_q (d_attn, d), W_k and W_v (h_kv·d_k, d), W_o
// (d, d_attn), with the biases the config keeps; 4d² + 4d without grouping or a head_dim of its own.
int64_t self_attention_params(const Config& c) {
  const int64_t d = c.d_model, da = c.d_attn(), dkv = c.d_kv();
  return d * da + 2 * d * dkv + da * d + (c.qkv_bias ? da + 2 * dkv : 0) + (c.o_bias ? d : 0);
}
int64_t ffn_params(int64_t d, int64_t dff) { return 2 * d * dff + dff + d; }
// Decoder feed-forward: fc1, fc2 (and a gated MLP's gate, d_ff × d, biased like fc1).
int64_t decoder_ffn_params(const Config& c) {
  const int64_t d = c.d_model, dff = c.d_ff, gated = c.mlp == Mlp::Gated ? 1 : 0;
  return (2 + gated) * d * dff + (c.mlp_bias ? (1 + gated) * dff + d : 0);
}
int64_t norm_params(const Config& c) { return c.norm_kind == NormKind::RMSNorm ? c.d_model : 2 * c.d_model; }

// One multi-head attention over n_q queries and n_kv keys/values, everything computed (no cache).
// Q (d → d_attn) and O (d_attn → d) run on the queries, K and V (d → d_kv) on the keys; the scores
// and P·V run over every query head, d_attn = h · d_k wide. Without grouped-query attention and
// with d_k = d / h, d_attn = d_kv = d (the lecture's 4d² per row).
FlopCount attention_flops(int64_t d, int64_t d_attn, int64_t d_kv, int64_t n_q, int64_t n_kv) {
  FlopCount f;
  f.projections = 2 * n_q * d * d_attn * 2 + 2 * n_kv * d * d_kv * 2;
  f.attention = 2 * (2 * n_q * n_kv * d_attn);
  return f;
}
FlopCount attention_flops(int64_t d, int64_t n_q, int64_t n_kv) { return attention_flops(d, d, d, n_q, n_kv); }

// The feed-forward block over `rows` rows: fc1 and fc2, plus the gate of a gated MLP (SwiGLU).
int64_t ffn_flops(const Config& c, int64_t rows) {
  return (c.mlp == Mlp::Gated ? 3 : 2) * (2 * rows * c.d_model * c.d_ff);
}

FlopCount& operator+=(FlopCount& a, const FlopCount& b) {
  a.projections += b.projections;
  a.attention += b.attention;
  a.feed_forward += b.feed_forward;
  a.generator += b.generator;
  return a;
}

}  // namespace

std::vector<ParamCount> param_counts(const Config& c) {
  const int64_t d = c.d_model, dff = c.d_ff, Vs = c.src_vocab.size(), Vt = c.tgt_vocab.size();
  std::vector<ParamCount> out;
  if (c.has_encoder() && !c.share_embeddings) out.push_back({"src_embed", Vs * d});
  out.push_back({"tgt_embed", Vt * d});
  if (c.positional == Positional::Learned) out.push_back({"pos_embed", int64_t{c.max_len} * d});
  for (int i = 0; i < c.n_encoder_layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    out.push_back({p + ".self_attn", attention_params(d)});
    out.push_back({p + ".norm1", norm_params(c)});
    out.push_back({p + ".norm2", norm_params(c)});
    out.push_back({p + ".ffn", ffn_params(d, dff)});
  }
  if (c.has_encoder() && c.norm == NormPlacement::Pre) out.push_back({"encoder.norm", norm_params(c)});
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    out.push_back({p + ".self_attn", self_attention_params(c)});
    if (c.has_encoder()) out.push_back({p + ".cross_attn", attention_params(d)});
    out.push_back({p + ".norm1", norm_params(c)});
    if (c.has_encoder() || c.has_ffn()) out.push_back({p + ".norm2", norm_params(c)});
    if (c.has_encoder()) out.push_back({p + ".norm3", norm_params(c)});
    if (c.has_ffn()) out.push_back({p + ".ffn", decoder_ffn_params(c)});
  }
  if (c.norm == NormPlacement::Pre) out.push_back({"decoder.norm", norm_params(c)});
  // Shared embeddings: the generator's weight is tgt_embed (counted there); its bias stays, when
  // the model has one (GPT-2 has none).
  // A tied head without a bias (GPT-2, Qwen2) has no parameter of its own: no entry.
  const int64_t generator = (c.share_embeddings ? 0 : Vt * d) + (c.generator_bias ? Vt : 0);
  if (generator > 0) out.push_back({"generator", generator});
  return out;
}

int64_t param_total(const Config& c) {
  int64_t n = 0;
  for (const ParamCount& p : param_counts(c)) n += p.count;
  return n;
}

namespace {

FlopCount encoder_flops(const Config& c, int n_src) {
  const int64_t d = c.d_model, dff = c.d_ff;
  FlopCount f;
  for (int l = 0; l < c.n_encoder_layers; ++l) {
    f += attention_flops(d, n_src, n_src);
    f.feed_forward += 2 * (2 * int64_t{n_src} * d * dff);  // encoders are never gated
  }
  return f;
}

// The decoder over n_tgt rows with everything computed, generator on every row.
FlopCount decoder_flops(const Config& c, int n_src, int n_tgt) {
  const int64_t d = c.d_model, V = c.tgt_vocab.size();
  FlopCount f;
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    f += attention_flops(d, c.d_attn(), c.d_kv(), n_tgt, n_tgt);
    if (c.has_encoder()) f += attention_flops(d, n_tgt, n_src);
    f.feed_forward += ffn_flops(c, n_tgt);
  }
  f.generator = 2 * int64_t{n_tgt} * d * V;
  return f;
}

}  // namespace

FlopCount forward_flops(const Config& c, int n_src, int n_tgt) {
  FlopCount f = c.has_encoder() ? encoder_flops(c, n_src) : FlopCount{};
  return f += decoder_flops(c, n_src, n_tgt);
}

FlopCount causal_forward_flops(const Config& c, int n_src, int n_tgt) {
  FlopCount f = forward_flops(c, n_src, n_tgt);
  const int64_t n = n_tgt, hidden = n * (n - 1) / 2;  // keys after their query
  f.attention -= int64_t{c.n_decoder_layers} * 2 * (2 * hidden * c.d_attn());
  return f;
}

FlopCount decode_step_flops(const Config& c, int n_src, int t, bool cached) {
  // Recomputing: the whole decoder over t rows (the memory is reused, not re-encoded).
  if (!cached) return decoder_flops(c, c.has_encoder() ? n_src : 0, t);
  const int64_t d = c.d_model, V = c.tgt_vocab.size(), d_attn = c.d_attn(), d_kv = c.d_kv();
  FlopCount f;
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    // Self-attention: project the one new row (Q, O: d_attn wide; K, V: h_kv·d_k), attend over
    // the t cached rows with every query head.
    f.projections += 2 * (2 * d * d_attn) + 2 * (2 * d * d_kv);
    f.attention += 2 * (2 * int64_t{t} * d_attn);
    if (c.has_encoder()) {  // cross-attention: Q and O only; K, V of the memory come from the cache
      f.projections += 2 * (2 * d * d);
      f.attention += 2 * (2 * int64_t{n_src} * d);
    }
    f.feed_forward += ffn_flops(c, 1);
  }
  f.generator = 2 * d * V;
  return f;
}

int64_t cross_kv_setup_flops(const Config& c, int n_src) {
  if (!c.has_encoder()) return 0;
  return int64_t{c.n_decoder_layers} * 2 * (2 * int64_t{n_src} * c.d_model * c.d_model);
}

int64_t kv_cache_bytes(const Config& c, int tokens) {
  return 2LL * c.n_decoder_layers * c.kv_heads() * c.d_k() * tokens * kKvBytesPerElement;
}

int64_t mha_kv_cache_bytes(const Config& c, int tokens) {
  return 2LL * c.n_decoder_layers * c.n_heads * c.d_k() * tokens * kKvBytesPerElement;
}

int kv_head_of(const Config& c, int query_head) { return Heads(c.n_heads, c.kv_heads()).kv_of(query_head); }

std::vector<std::vector<int>> query_heads_by_kv_head(const Config& c) {
  std::vector<std::vector<int>> out(static_cast<size_t>(c.kv_heads()));
  for (int h = 0; h < c.n_heads; ++h) out[static_cast<size_t>(kv_head_of(c, h))].push_back(h);
  return out;
}

KvCacheTable kv_cache_table(const Config& c, const std::vector<int>& tokens_per_layer, int sequences) {
  KvCacheTable t;
  t.query_heads = c.n_heads;
  t.kv_heads = c.kv_heads();
  t.group = c.n_heads / c.kv_heads();
  t.d_k = c.d_k();
  t.sequences = sequences;
  for (size_t l = 0; l < tokens_per_layer.size(); ++l) {
    KvCacheRow r;
    r.layer = static_cast<int>(l);
    r.tokens = tokens_per_layer[l];
    r.bytes = 2LL * t.kv_heads * t.d_k * r.tokens * t.bytes_per_element * sequences;
    r.mha_bytes = 2LL * t.query_heads * t.d_k * r.tokens * t.bytes_per_element * sequences;
    t.bytes += r.bytes;
    t.mha_bytes += r.mha_bytes;
    t.layers.push_back(r);
  }
  return t;
}

int64_t cross_kv_bytes(const Config& c, int n_src) {
  return c.has_encoder() ? 2LL * c.n_decoder_layers * n_src * c.d_model * 4 : 0;
}

int64_t attention_map_bytes(const Config& c, int n_q, int n_k) { return int64_t{c.n_heads} * n_q * n_k * 4; }

CostReport cost_report(const Config& c, int n_src, int t, int sequences) {
  CostReport r;
  r.params = param_counts(c);
  for (const ParamCount& p : r.params) r.params_total += p.count;
  r.weight_bytes = r.params_total * 4;
  r.n_src = c.has_encoder() ? n_src : 0;
  r.t = t;
  r.sequences = sequences;
  r.forward = forward_flops(c, r.n_src, t);
  r.step_cached = decode_step_flops(c, r.n_src, t, true);
  r.step_uncached = decode_step_flops(c, r.n_src, t, false);
  r.cross_setup_flops = cross_kv_setup_flops(c, r.n_src);
  r.kv_self_bytes = sequences * kv_cache_bytes(c, t);
  r.kv_cross_bytes = sequences * cross_kv_bytes(c, r.n_src);
  r.attn_map_bytes = int64_t{c.n_decoder_layers} * attention_map_bytes(c, t, t);
  if (c.has_encoder())
    r.attn_map_bytes += int64_t{c.n_encoder_layers} * attention_map_bytes(c, n_src, n_src) +
                        int64_t{c.n_decoder_layers} * attention_map_bytes(c, t, n_src);
  return r;
}

}  // namespace sf
