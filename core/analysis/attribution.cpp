#include "analysis/attribution.h"

#include <cmath>
#include <utility>

namespace sf {

namespace {

struct Part {
  AttributionPart label;
  Mat x;  // (n, d) what this part wrote into the stream, carried through the norms since
};

// The linear half of a LayerNorm with its statistics frozen, on one part: (x − mean) · rstd ⊙ γ;
// of an RMSNorm: x / √(rms² + ε) ⊙ γ (no mean).
void through_norm(Mat& x, const LayerNormTrace& tr, const LayerNormWeights& w) {
  const Eigen::Index n = x.rows();
  for (Eigen::Index i = 0; i < n; ++i) {
    if (w.kind == NormKind::RMSNorm) {
      const float rstd = 1.0f / std::sqrt(tr.rms(i) * tr.rms(i) + w.eps);
      x.row(i) = (x.row(i).array() * rstd * w.weight.array()).matrix();
      continue;
    }
    const float rstd = 1.0f / std::sqrt(tr.var(i) + w.eps);
    x.row(i) = ((x.row(i).array() - x.row(i).mean()) * rstd * w.weight.array()).matrix();
  }
}

// Every part through one LayerNorm; its β joins the norm-bias part.
void apply_norm(std::vector<Part>& parts, Part& norm_bias, const LayerNormTrace& tr, const LayerNormWeights& w) {
  for (Part& p : parts) through_norm(p.x, tr, w);
  through_norm(norm_bias.x, tr, w);
  norm_bias.x.rowwise() += w.bias;
}

// The parts one attention sublayer wrote: each head's slice of W_o, and W_o's bias.
void attention_parts(std::vector<Part>& parts, const AttentionTrace& a, const AttentionWeights& w, int layer, Block b) {
  const Eigen::Index n = a.concat.rows(), d = a.concat.cols();
  const int dk = static_cast<int>(d) / a.n_heads;
  const Mat wo = float_weight(w.o_proj);  // (d, h·dk)
  for (int h = 0; h < a.n_heads; ++h) {
    Part p;
    p.label = {PartKind::Head, layer, b, h, 0};
    p.x = a.concat.middleCols(h * dk, dk) * wo.middleCols(h * dk, dk).transpose();  // (n, d)
    parts.push_back(std::move(p));
  }
  Part bias;
  bias.label = {PartKind::AttentionBias, layer, b, -1, 0};
  bias.x = w.o_proj.bias.replicate(n, 1);  // (n, d)
  parts.push_back(std::move(bias));
}

bool recorded(const AttentionTrace& a) { return a.concat.size() > 0 && a.n_heads > 0; }

}  // namespace

const char* to_string(PartKind k) {
  switch (k) {
    case PartKind::Embedding:
      return "embedding";
    case PartKind::Head:
      return "head";
    case PartKind::AttentionBias:
      return "attention bias";
    case PartKind::Mlp:
      return "MLP";
    case PartKind::NormBias:
      return "norm biases";
    case PartKind::UnembeddingBias:
      return "unembedding bias";
  }
  return "?";
}

double Attribution::head(int layer, Block b, int h) const {
  for (const AttributionPart& p : parts)
    if (p.kind == PartKind::Head && p.layer == layer && p.block == b && p.head == h) return p.value;
  return 0;
}

double Attribution::mlp(int layer) const {
  for (const AttributionPart& p : parts)
    if (p.kind == PartKind::Mlp && p.layer == layer) return p.value;
  return 0;
}

double Attribution::attention_bias(int layer, Block b) const {
  for (const AttributionPart& p : parts)
    if (p.kind == PartKind::AttentionBias && p.layer == layer && p.block == b) return p.value;
  return 0;
}

double Attribution::of_kind(PartKind k) const {
  double v = 0;
  for (const AttributionPart& p : parts)
    if (p.kind == k) v += p.value;
  return v;
}

Result<Attribution> direct_logit_attribution(const Model& m, const DecoderTrace& t, int position, int token,
                                             int other) {
  const Config& c = m.config;
  if (!c.has_decoder())
    return Error{
        "attribution: expected a model with a decoder and a linear unembedding, found an encoder-only "
        "model (its masked-LM head is not linear)"};
  const HalfMat* wu_half = m.weights.generator_half(c);
  const Mat& wu = m.weights.generator_weight(c);  // (V, d), or wu_half
  const int v = static_cast<int>(wu_half ? wu_half->rows : wu.rows());
  const Eigen::Index d_model = wu_half ? wu_half->cols : wu.cols();
  const auto unembed = [&](int id) {  // W_U[id] as float32
    if (!wu_half) return RowVec(wu.row(id));
    RowVec r(d_model);
    wu_half->widen_rows(id, 1, r.data());
    return r;
  };
  const int n = static_cast<int>(t.embed.sum.rows());
  if (n == 0 || t.layers.size() != static_cast<size_t>(c.n_decoder_layers) || t.logits.rows() != n)
    return Error{"attribution: expected a full recording of the decoder, found a compact one"};
  if (position < 0 || position >= n)
    return Error{"attribution: expected a position in 0.." + std::to_string(n - 1) + ", found " +
                 std::to_string(position)};
  for (int id : {token, other})
    if (id != -1 && (id < 0 || id >= v))
      return Error{"attribution: expected a token id in 0.." + std::to_string(v - 1) + ", found " + std::to_string(id)};
  if (token == -1) return Error{"attribution: expected a token id, found none"};

  std::vector<Part> parts;
  Part embedding;
  embedding.label = {PartKind::Embedding, -1, Block::None, -1, 0};
  embedding.x = t.embed.sum;
  parts.push_back(std::move(embedding));
  Part norm_bias;
  norm_bias.label = {PartKind::NormBias, -1, Block::None, -1, 0};
  norm_bias.x = Mat::Zero(n, d_model);
  const bool post = c.norm == NormPlacement::Post;

  for (int l = 0; l < c.n_decoder_layers; ++l) {
    const DecoderLayerTrace& lt = t.layers[static_cast<size_t>(l)];
    const DecoderLayerWeights& w = m.weights.decoder[static_cast<size_t>(l)];
    if (!recorded(lt.self_attn) || (c.has_ffn() && lt.ffn.out.size() == 0))
      return Error{"attribution: expected a full recording of the decoder, found a compact one"};
    attention_parts(parts, lt.self_attn, w.self_attn, l, Block::SelfAttention);
    if (post) apply_norm(parts, norm_bias, lt.self_block.norm, w.norm1);
    if (c.has_cross_attention()) {
      if (!recorded(lt.cross_attn)) return Error{"attribution: expected a full recording of the decoder"};
      attention_parts(parts, lt.cross_attn, w.cross_attn, l, Block::CrossAttention);
      if (post) apply_norm(parts, norm_bias, lt.cross_block.norm, w.norm2);
    }
    if (!c.has_ffn()) continue;  // an attention-only layer
    Part mlp;
    mlp.label = {PartKind::Mlp, l, Block::FeedForward, -1, 0};
    mlp.x = lt.ffn.out;
    parts.push_back(std::move(mlp));
    if (post) apply_norm(parts, norm_bias, lt.ffn_block.norm, w.ffn_norm(c.arch));
  }
  if (!post) apply_norm(parts, norm_bias, t.final_norm, m.weights.decoder_norm);
  parts.push_back(std::move(norm_bias));

  // The direction read out: W_U[token] (− W_U[other]).
  RowVec dir = unembed(token);
  double bias = m.weights.generator.bias.size() ? m.weights.generator.bias(token) : 0.0;
  double total = t.logits(position, token);
  if (other != -1) {
    dir -= unembed(other);
    if (m.weights.generator.bias.size()) bias -= m.weights.generator.bias(other);
    total -= t.logits(position, other);
  }

  Attribution out;
  out.position = position;
  out.token = token;
  out.other = other;
  out.total = total;
  for (Part& p : parts) {
    p.label.value = p.x.row(position).cast<double>().dot(dir.cast<double>());
    out.parts.push_back(p.label);
    out.sum += p.label.value;
  }
  out.parts.push_back({PartKind::UnembeddingBias, -1, Block::None, -1, bias});
  out.sum += bias;
  out.note = post ? "Every LayerNorm's scale is frozen at this run's value, so each norm acts linearly on each part."
                  : "The final LayerNorm's scale is frozen at this run's value, so it acts linearly on each part.";
  return out;
}

}  // namespace sf
