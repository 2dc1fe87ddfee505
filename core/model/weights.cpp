#include "model/weights.h"

#include <algorithm>
#include <cmath>

#include "base/allocator.h"
#include "base/rng.h"

namespace sf {

namespace {

// A zero (rows, cols) matrix; large ones on transparent huge pages (base/allocator.h).
Mat zeros(int rows, int cols) {
  Mat m(rows, cols);
  advise_huge_pages(m.data(), static_cast<size_t>(m.size()) * sizeof(float));
  m.setZero();
  return m;
}

void alloc_linear(Linear& l, int out, int in, WeightStorage s = WeightStorage::F32) {
  if (s == WeightStorage::F32)
    l.weight = zeros(out, in);
  else
    l.half = HalfMat::make(out, in, s);
  l.bias = RowVec::Zero(out);
}
void alloc_norm(LayerNormWeights& n, int d, float eps, NormKind kind = NormKind::LayerNorm) {
  n.weight = RowVec::Ones(d);
  n.bias = RowVec::Zero(d);
  n.eps = eps;
  n.kind = kind;
}
void alloc_attention(AttentionWeights& a, int d) {
  for (Linear* l : {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj}) alloc_linear(*l, d, d);
}
// Decoder self-attention: grouped K/V heads and a head size of its own when the config says so.
void alloc_self_attention(AttentionWeights& a, const Config& c, WeightStorage s) {
  alloc_linear(a.q_proj, c.d_attn(), c.d_model, s);
  alloc_linear(a.k_proj, c.d_kv(), c.d_model, s);
  alloc_linear(a.v_proj, c.d_kv(), c.d_model, s);
  alloc_linear(a.o_proj, c.d_model, c.d_attn(), s);
}
void alloc_ffn(FeedForwardWeights& f, int d, int dff, Mlp kind = Mlp::Standard, WeightStorage s = WeightStorage::F32) {
  alloc_linear(f.fc1, dff, d, s);
  alloc_linear(f.fc2, d, dff, s);
  if (kind == Mlp::Gated) alloc_linear(f.gate, dff, d, s);
  f.kind = kind;
}

struct Table {
  std::vector<ParamRef> refs;
  void mat(const std::string& name, Mat& m, ParamRef::Kind k = ParamRef::Matrix, const HalfMat* half = nullptr) {
    if (half && !half->empty())
      refs.push_back({name, nullptr, static_cast<int>(half->rows), static_cast<int>(half->cols), false, k, half});
    else
      refs.push_back({name, m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()), false, k});
  }
  void packed(const std::string& name, const PackedWeight& p) {  // W (out, in) = (wt.n, wt.k)
    refs.push_back(
        {name, nullptr, static_cast<int>(p.wt.n), static_cast<int>(p.wt.k), false, ParamRef::Matrix, nullptr, &p});
  }
  void vec(const std::string& name, RowVec& v, ParamRef::Kind k) {
    refs.push_back({name, v.data(), 1, static_cast<int>(v.size()), true, k});
  }
  void linear(const std::string& p, Linear& l, bool bias = true) {
    if (l.packed_only())
      packed(p + ".weight", *l.packed);
    else
      mat(p + ".weight", l.weight, ParamRef::Matrix, &l.half);
    if (bias) vec(p + ".bias", l.bias, ParamRef::Bias);
  }
  void norm(const std::string& p, LayerNormWeights& n) {
    vec(p + ".weight", n.weight, ParamRef::NormGain);
    if (n.kind == NormKind::LayerNorm) vec(p + ".bias", n.bias, ParamRef::NormBias);
  }
  void attention(const std::string& p, AttentionWeights& a, bool qkv_bias = true, bool o_bias = true) {
    linear(p + ".q_proj", a.q_proj, qkv_bias);
    linear(p + ".k_proj", a.k_proj, qkv_bias);
    linear(p + ".v_proj", a.v_proj, qkv_bias);
    linear(p + ".o_proj", a.o_proj, o_bias);
  }
  void ffn(const std::string& p, FeedForwardWeights& f, bool bias = true) {
    if (f.kind == Mlp::Gated) linear(p + ".gate", f.gate, bias);
    linear(p + ".fc1", f.fc1, bias);
    linear(p + ".fc2", f.fc2, bias);
  }
};

bool has_generator(const Config& c) { return c.has_decoder() || c.mlm_head; }

}  // namespace

void allocate(Weights& w, const Config& c, WeightStorage matrices) {
  const int d = c.d_model;
  const float eps = c.layer_norm_eps;
  w = Weights{};
  if (c.has_encoder() && !c.share_embeddings) w.src_embed = zeros(c.src_vocab.size(), d);
  if (matrices == WeightStorage::F32)
    w.tgt_embed = zeros(c.tgt_vocab.size(), d);
  else
    w.tgt_embed_half = HalfMat::make(c.tgt_vocab.size(), d, matrices);
  if (c.positional == Positional::Learned) w.pos_embed = zeros(c.max_len, d);
  if (c.n_token_types > 0) w.type_embed = zeros(c.n_token_types, d);
  if (c.embed_norm) alloc_norm(w.embed_norm, d, eps);
  w.encoder.resize(static_cast<size_t>(c.n_encoder_layers));
  for (auto& l : w.encoder) {
    alloc_attention(l.self_attn, d);
    alloc_norm(l.norm1, d, eps);
    alloc_norm(l.norm2, d, eps);
    alloc_ffn(l.ffn, d, c.encoder_d_ff());
  }
  if (c.has_encoder() && c.norm == NormPlacement::Pre) alloc_norm(w.encoder_norm, d, eps);
  w.decoder.resize(static_cast<size_t>(c.n_decoder_layers));
  for (auto& l : w.decoder) {
    alloc_self_attention(l.self_attn, c, matrices);
    if (c.has_cross_attention()) alloc_attention(l.cross_attn, d);
    alloc_norm(l.norm1, d, eps, c.norm_kind);
    if (c.has_cross_attention() || c.has_ffn()) alloc_norm(l.norm2, d, eps, c.norm_kind);
    if (c.has_cross_attention()) alloc_norm(l.norm3, d, eps);
    if (c.has_ffn()) alloc_ffn(l.ffn, d, c.d_ff, c.mlp, matrices);
  }
  if (c.has_decoder() && c.norm == NormPlacement::Pre) alloc_norm(w.decoder_norm, d, eps, c.norm_kind);
  if (c.mlm_head) {
    alloc_linear(w.mlm.dense, d, d);
    alloc_norm(w.mlm.norm, d, eps);
  }
  if (!has_generator(c)) return;
  if (!c.share_embeddings) alloc_linear(w.generator, c.tgt_vocab.size(), d, matrices);
  w.generator.bias = RowVec::Zero(c.tgt_vocab.size());
}

std::vector<ParamRef> param_table(Weights& w, const Config& c) {
  Table t;
  if (c.has_encoder() && !c.share_embeddings) t.mat("src_embed.weight", w.src_embed, ParamRef::Embedding);
  t.mat("tgt_embed.weight", w.tgt_embed, ParamRef::Embedding, &w.tgt_embed_half);
  if (c.positional == Positional::Learned) t.mat("pos_embed.weight", w.pos_embed, ParamRef::Embedding);
  if (c.n_token_types > 0) t.mat("type_embed.weight", w.type_embed, ParamRef::Embedding);
  if (c.embed_norm) t.norm("embed_norm", w.embed_norm);
  for (size_t i = 0; i < w.encoder.size(); ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    auto& l = w.encoder[i];
    t.attention(p + ".self_attn", l.self_attn);
    t.norm(p + ".norm1", l.norm1);
    t.norm(p + ".norm2", l.norm2);
    t.ffn(p + ".ffn", l.ffn);
  }
  if (c.has_encoder() && c.norm == NormPlacement::Pre) t.norm("encoder.norm", w.encoder_norm);
  for (size_t i = 0; i < w.decoder.size(); ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    auto& l = w.decoder[i];
    t.attention(p + ".self_attn", l.self_attn, c.qkv_bias, c.o_bias);
    if (c.has_cross_attention()) t.attention(p + ".cross_attn", l.cross_attn);
    t.norm(p + ".norm1", l.norm1);
    if (c.has_cross_attention() || c.has_ffn()) t.norm(p + ".norm2", l.norm2);
    if (c.has_cross_attention()) t.norm(p + ".norm3", l.norm3);
    if (c.has_ffn()) t.ffn(p + ".ffn", l.ffn, c.mlp_bias);
  }
  if (c.has_decoder() && c.norm == NormPlacement::Pre) t.norm("decoder.norm", w.decoder_norm);
  if (c.mlm_head) {
    t.linear("mlm.dense", w.mlm.dense);
    t.norm("mlm.norm", w.mlm.norm);
  }
  if (!has_generator(c)) return t.refs;
  if (!c.share_embeddings) t.mat("generator.weight", w.generator.weight, ParamRef::Matrix, &w.generator.half);
  if (c.generator_bias) t.vec("generator.bias", w.generator.bias, ParamRef::Bias);
  return t.refs;
}

namespace {

// Every Linear inside the layers, and the MLM head's dense, present or not (an absent one has an
// empty weight): all but the output projection.
template <class F>
void for_each_layer_linear(Weights& w, F f) {
  const auto attention = [&](AttentionWeights& a) {
    for (Linear* l : {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj}) f(*l);
  };
  for (EncoderLayerWeights& l : w.encoder) {
    attention(l.self_attn);
    f(l.ffn.fc1);
    f(l.ffn.fc2);
  }
  for (DecoderLayerWeights& l : w.decoder) {
    attention(l.self_attn);
    attention(l.cross_attn);
    f(l.ffn.fc1);
    f(l.ffn.fc2);
    f(l.ffn.gate);
  }
  f(w.mlm.dense);
}

int64_t float_bytes(const Mat& m) { return m.size() * static_cast<int64_t>(sizeof(float)); }

}  // namespace

std::vector<float> ParamRef::values() const {
  std::vector<float> v(static_cast<size_t>(numel()));
  if (half)
    half->widen_rows(0, half->rows, v.data());
  else if (packed)
    unpack_bt_rows(packed->wt, 0, rows, v.data());
  else
    std::copy(data, data + numel(), v.begin());
  return v;
}

void pack_for_inference(Weights& w, int64_t second_copy_bytes) {
  const auto pack = [](const Mat& m) { return std::make_shared<const PackedWeight>(pack_weight(m)); };
  // A generator tied to the target embedding has no weight of its own: its packed copy is the
  // embedding's (the output projection reads it as its weight: generator_forward).
  const bool tied =
      w.generator.weight.size() == 0 && w.generator.bias.size() > 0 && w.tgt_embed.rows() == w.generator.bias.size();
  const Mat& out = tied ? w.tgt_embed : w.generator.weight;  // the output projection's rows, or empty
  int64_t layer_bytes = 0;
  for_each_layer_linear(w, [&](Linear& l) { layer_bytes += float_bytes(l.weight); });
  const bool second_copies = layer_bytes + float_bytes(out) <= second_copy_bytes;
  for_each_layer_linear(w, [&](Linear& l) {
    if (l.weight.size() == 0) return;
    l.packed = pack(l.weight);
    if (!second_copies) l.weight = Mat();  // held once, packed (the peak grows by one matrix)
  });
  if (out.size() > 0 && float_bytes(out) <= second_copy_bytes) w.generator.packed = pack(out);
  // 16-bit matrices: the same values in the kernel's panels, rearranged in place.
  for_each_layer_linear(w, [](Linear& l) { arrange_in_panels(l.half); });
  arrange_in_panels(w.generator.half);
  arrange_in_panels(w.tgt_embed_half);
}

void drop_packed(Weights& w) {
  for_each_layer_linear(w, [](Linear& l) {
    if (l.packed_only()) l.weight = unpacked(*l.packed);
    l.packed.reset();
  });
  w.generator.packed.reset();
}

Mat float_weight(const Linear& l) {
  if (l.storage() != WeightStorage::F32) return l.half.widened();
  return l.packed_only() ? unpacked(*l.packed) : l.weight;
}

void init_xavier(Weights& w, const Config& c, uint64_t seed) {
  allocate(w, c);
  Rng rng(seed);
  for (ParamRef& p : param_table(w, c)) {
    float* x = p.data;
    switch (p.kind) {
      case ParamRef::Embedding:
      case ParamRef::Matrix: {
        // Glorot & Bengio 2010: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
        const float a = std::sqrt(6.0f / static_cast<float>(p.rows + p.cols));
        for (int64_t i = 0; i < p.numel(); ++i) x[i] = rng.uniform(-a, a);
        break;
      }
      case ParamRef::NormGain:
        for (int64_t i = 0; i < p.numel(); ++i) x[i] = 1.0f;
        break;
      case ParamRef::Bias:
      case ParamRef::NormBias:
        for (int64_t i = 0; i < p.numel(); ++i) x[i] = 0.0f;
        break;
    }
  }
}

std::vector<ParamCount> count_params_by_component(const Weights& w, const Config& c) {
  std::vector<ParamCount> out;
  auto add = [&](const std::string& comp, int64_t n) {
    if (!out.empty() && out.back().component == comp)
      out.back().count += n;
    else
      out.push_back({comp, n});
  };
  for (const ParamRef& p : param_table(w, c)) {
    // Component = name up to the parameter's module: "encoder.layers.0.self_attn", "tgt_embed", ...
    std::string comp = p.name;
    for (const char* tail : {".weight", ".bias"})
      if (comp.size() > std::string(tail).size() &&
          comp.compare(comp.size() - std::string(tail).size(), std::string::npos, tail) == 0)
        comp.resize(comp.size() - std::string(tail).size());
    for (const char* sub : {".q_proj", ".k_proj", ".v_proj", ".o_proj", ".fc1", ".fc2", ".gate"}) {
      auto pos = comp.rfind(sub);
      if (pos != std::string::npos && pos + std::string(sub).size() == comp.size()) comp.resize(pos);
    }
    add(comp, p.numel());
  }
  return out;
}

int64_t count_params(const Weights& w, const Config& c) {
  int64_t n = 0;
  for (const ParamRef& p : param_table(w, c)) n += p.numel();
  return n;
}

int64_t held_bytes(const Weights& w, const Config& c) {
  int64_t n = 0;
  for (const ParamRef& p : param_table(w, c)) n += p.numel() * (p.half ? bytes_per_weight(p.half->storage) : 4);
  return n;
}

}  // namespace sf
