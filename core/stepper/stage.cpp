#include "stepper/stage.h"

#include <cstdio>

#include "base/shape.h"

namespace sf {

const char* to_string(Side s) { return s == Side::Encoder ? "encoder" : "decoder"; }

const char* to_string(StageKind k) {
  switch (k) {
    case StageKind::Embed:
      return "embed";
    case StageKind::Positional:
      return "positional";
    case StageKind::Norm:
      return "norm";
    case StageKind::SelfAttention:
      return "self-attention";
    case StageKind::CrossAttention:
      return "cross-attention";
    case StageKind::FeedForward:
      return "feed-forward";
    case StageKind::AddNorm:
      return "add & norm";
    case StageKind::FinalNorm:
      return "final norm";
    case StageKind::Memory:
      return "memory";
    case StageKind::Logits:
      return "logits";
    case StageKind::Choose:
      return "choose";
  }
  return "?";
}

const char* to_string(Block b) {
  switch (b) {
    case Block::None:
      return "none";
    case Block::SelfAttention:
      return "self-attention";
    case Block::CrossAttention:
      return "cross-attention";
    case Block::FeedForward:
      return "feed-forward";
  }
  return "?";
}

namespace {

// A sublayer with its norm, in the order the norm placement gives.
void add_block(std::vector<StageKey>& out, NormPlacement p, StageKind sublayer, Block b, int layer) {
  if (p == NormPlacement::Pre) out.push_back({StageKind::Norm, b, layer});
  out.push_back({sublayer, b, layer});
  if (p == NormPlacement::Post) out.push_back({StageKind::AddNorm, b, layer});
}

// The norm that wraps a block: checkpoint names (model-format.md).
const char* norm_name(const Config& c, Side side, Block b) {
  if (b == Block::SelfAttention) return "norm1";
  if (b == Block::CrossAttention) return "norm2";
  return side == Side::Encoder || !c.has_encoder() ? "norm2" : "norm3";
}

const char* block_trace(Block b) {
  switch (b) {
    case Block::SelfAttention:
      return "self_block";
    case Block::CrossAttention:
      return "cross_block";
    default:
      return "ffn_block";
  }
}

const char* block_module(Block b) {
  switch (b) {
    case Block::SelfAttention:
      return "self_attn";
    case Block::CrossAttention:
      return "cross_attn";
    default:
      return "ffn";
  }
}

// Everything a stage needs to describe itself.
struct Ctx {
  const Config& c;
  Side side;
  std::string rec;    // recording prefix: "encoder" or "steps.3.decoder"
  std::string top;    // "" (encoder) or "steps.3." — for names outside the stack (logits)
  std::string param;  // checkpoint prefix: "encoder" or "decoder"
  int64_t rows;       // rows the stack carries (recorded)
  int64_t n_k;        // self-attention keys
  int64_t n_src;
  int64_t fed = 0;      // decoder: rows fed at this step (m)
  bool cached = false;  // decoder: K/V come from (and go into) the cache
  bool first_step = true;
  int64_t d() const { return c.d_model; }
};

std::string layer_rec(const Ctx& x, int l) { return x.rec + ".layers." + std::to_string(l); }
std::string layer_param(const Ctx& x, int l) { return x.param + ".layers." + std::to_string(l); }

// The names a LayerNorm stage reads and writes: L = the layer's recording, P = its parameters,
// nn = the norm ("norm2"), blk = the residual block ("ffn_block"), nd = (rows, d).
struct NormNames {
  std::string L, P, nn, blk;
  std::vector<int64_t> nd;
  NormNames(const Ctx& x, const StageKey& k)
      : L(layer_rec(x, k.layer)),
        P(layer_param(x, k.layer)),
        nn(norm_name(x.c, x.side, k.block)),
        blk(block_trace(k.block)),
        nd{x.rows, x.d()} {}
  TensorRef gamma(const Ctx& x) const { return {"γ", P + "." + nn + ".weight", {x.d()}}; }
  TensorRef beta(const Ctx& x) const { return {"β", P + "." + nn + ".bias", {x.d()}}; }
  TensorRef stat(const Ctx& x, const char* what) const { return {what, L + "." + nn + "." + what, {x.rows}}; }
  std::string title(const Ctx& x, const StageKey& k, const char* what) const {
    return std::string(to_string(x.side)) + " layer " + std::to_string(k.layer) + " · " + what + to_string(k.block);
  }
};

// RMSNorm (Zhang & Sennrich 2019; Llama, Qwen2, Mistral): no mean subtracted, no variance, no β.
bool rms(const Config& c) { return c.norm_kind == NormKind::RMSNorm; }
std::string eps_str(const Config& c) {
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", static_cast<double>(c.layer_norm_eps));
  return eps;
}
std::string norm_formula(const Config& c) {
  return rms(c) ? "x̂ = x / √(mean(x²) + " + eps_str(c) + ") ⊙ g (RMSNorm: no mean subtracted, no β)"
                : "x̂ = (x − mean) / √(var + " + eps_str(c) + ") · γ + β";
}

void describe_norm(const Ctx& x, const StageKey& k, Stage& s) {
  const NormNames n(x, k);
  const bool parallel = x.c.residual == Residual::Parallel && k.block == Block::FeedForward;
  s.title = n.title(x, k, rms(x.c) ? "RMSNorm before " : "LayerNorm before ");
  s.formula = norm_formula(x.c) + ", per row: " + shape_str(n.nd) + " → " + shape_str(n.nd);
  if (parallel)
    s.formula +=
        "; x is the layer's input, the one the attention's norm read (parallel residual: both branches "
        "read the same x)";
  s.reads = {{"x", n.L + "." + n.blk + ".input", n.nd}, n.gamma(x)};
  if (rms(x.c)) {
    s.reads.back().label = "g";
    s.writes = {n.stat(x, "rms"), {"x̂", n.L + "." + n.nn + ".out", n.nd}};
  } else {
    s.reads.push_back(n.beta(x));
    s.writes = {n.stat(x, "mean"), n.stat(x, "var"), {"x̂", n.L + "." + n.nn + ".out", n.nd}};
  }
}

void describe_add_norm(const Ctx& x, const StageKey& k, Stage& s) {
  const NormNames n(x, k);
  s.title = n.title(x, k, "add & norm after ");
  s.formula = "x = LN(x + sublayer(x)): " + shape_str(n.nd) + " + " + shape_str(n.nd) + " → " + shape_str(n.nd);
  s.reads = {{"x", n.L + "." + n.blk + ".input", n.nd},
             {"sublayer(x)", n.L + "." + n.blk + ".sublayer_out", n.nd},
             n.gamma(x),
             n.beta(x)};
  s.writes = {{"x + sublayer(x)", n.L + "." + n.blk + ".sum", n.nd},
              n.stat(x, "mean"),
              n.stat(x, "var"),
              {"x", n.L + "." + n.blk + ".output", n.nd}};
}

void describe_attention(const Ctx& x, const StageKey& k, Stage& s) {
  const Config& c = x.c;
  const bool cross = k.kind == StageKind::CrossAttention;
  const bool pre = c.norm == NormPlacement::Pre;
  const bool rotary = c.positional == Positional::Rotary && !cross;
  const bool parallel = c.residual == Residual::Parallel;
  const std::string L = layer_rec(x, k.layer), P = layer_param(x, k.layer);
  const std::string mod = block_module(k.block), blk = block_trace(k.block);
  const bool enc = x.side == Side::Encoder;
  const int64_t d = x.d(), h = enc ? c.encoder_heads() : c.n_heads;
  // Decoder self-attention may have its own head width (head_dim) and fewer K/V heads (GQA).
  const bool own_width = !enc && !cross;
  const int64_t dk = enc ? c.encoder_d_k() : own_width ? c.d_k() : d / h, da = own_width ? c.d_attn() : d;
  const int64_t hkv = own_width ? c.kv_heads() : h, dkv = hkv * dk;
  const int64_t nk = cross ? x.n_src : x.n_k;
  const std::vector<int64_t> nd{x.rows, d}, qd{x.rows, da}, kd{nk, dkv}, map{h, x.rows, nk};
  const std::string in = pre ? "x̂" : "x";
  const char* what = cross ? "cross-attention" : (x.side == Side::Decoder ? "masked self-attention" : "self-attention");
  s.title = std::string(to_string(x.side)) + " layer " + std::to_string(k.layer) + " · " + what;
  const std::string kv_src = cross ? "memory" : in;
  // Rotary models turn q and k by their position (p·θ_i per pair of dimensions) before the
  // scores: the position enters here, not at the embedding.
  const std::string rq = rotary ? "RoPE(" : "", rc = rotary ? ")" : "";
  std::string kv = rotary ? "K = RoPE(" + kv_src + " W_kᵀ + b), V = " + kv_src + " W_vᵀ + b " + shape_str(kd)
                          : "K, V = " + kv_src + " W_{k,v}ᵀ + b " + shape_str(kd);
  if (x.cached && !cross && x.fed < nk)
    kv = (rotary ? "k = RoPE(" + in + " W_kᵀ + b), v = " + in + " W_vᵀ + b " : "k, v = " + in + " W_{k,v}ᵀ + b ") +
         shape_str({x.fed, dkv}) + " appended to the cache → K, V " + shape_str(kd);
  if (x.cached && cross && !x.first_step) kv = "K, V of the memory from the cache " + shape_str(kd);
  s.formula = "Q = " + rq + in + " W_qᵀ + b_q" + rc + " " + shape_str(qd) + "; " + kv + "; per head (" +
              std::to_string(h) + " × d_k " + std::to_string(dk) +
              (hkv != h ? ", " + std::to_string(h / hkv) + " query heads per K/V head" : "") +
              "): softmax(Q_h K_hᵀ / √" + std::to_string(dk) + " + mask) " + shape_str({x.rows, nk}) + " · V_h " +
              shape_str({nk, dk}) + "; concat " + shape_str(qd) + " W_oᵀ + b_o → " + shape_str(nd);
  if (rotary) {
    s.formula += "; RoPE turns dimensions i and i + " + std::to_string(c.rotary_dim() / 2) +
                 " of each head by p·θ_i at position p, so q_m·k_n depends on m − n";
    if (c.rotary_dim() < dk)
      s.formula += " (the first " + std::to_string(c.rotary_dim()) + " of " + std::to_string(dk) +
                   " dimensions rotate, the rest pass through)";
  }
  if (parallel)
    s.formula += "; parallel residual: the MLP reads the same x, and x = x + attention + MLP after both";
  else if (pre)
    s.formula += "; x = x + attention " + shape_str(nd);
  s.reads = {{in, L + "." + blk + ".sublayer_in", nd}};
  if (cross) s.reads.push_back({"memory", "encoder.output", kd});
  s.reads.push_back({"W_q", P + "." + mod + ".q_proj.weight", {da, d}});
  s.reads.push_back({"W_k", P + "." + mod + ".k_proj.weight", {dkv, d}});
  s.reads.push_back({"W_v", P + "." + mod + ".v_proj.weight", {dkv, d}});
  s.reads.push_back({"W_o", P + "." + mod + ".o_proj.weight", {d, da}});
  // (The projections before the rotation, q_unrotated and k_unrotated, are in a full recording
  // (`stepformer trace`), not in the stepper's kept steps.)
  s.writes = {{rotary ? "Q (rotated)" : "Q", L + "." + mod + ".q", qd},
              {rotary ? "K (rotated)" : "K", L + "." + mod + ".k", kd},
              {"V", L + "." + mod + ".v", kd},
              {"mask", L + "." + mod + ".mask", {x.rows, nk}},
              {"scores", L + "." + mod + ".scores", map},
              {"weights", L + "." + mod + ".weights", map},
              {"concat", L + "." + mod + ".concat", qd},
              {"attention", L + "." + mod + ".out", nd}};
  if (pre) s.writes.push_back({"x", L + "." + blk + ".output", nd});
}

void describe_ffn(const Ctx& x, const StageKey& k, Stage& s) {
  const Config& c = x.c;
  const bool pre = c.norm == NormPlacement::Pre;
  const bool parallel = c.residual == Residual::Parallel;
  const std::string L = layer_rec(x, k.layer), P = layer_param(x, k.layer);
  const int64_t d = x.d(), dff = x.side == Side::Encoder ? c.encoder_d_ff() : c.d_ff;
  const std::vector<int64_t> nd{x.rows, d}, nf{x.rows, dff};
  const std::string in = pre ? "x̂" : "x";
  const bool gated = c.mlp == Mlp::Gated && x.side == Side::Decoder;
  const char* act = c.activation == Activation::Relu    ? "ReLU"
                    : c.activation == Activation::Swish ? (gated ? "silu" : "swish")
                                                        : "GELU";
  s.title =
      std::string(to_string(x.side)) + " layer " + std::to_string(k.layer) + " · " +
      (gated ? (c.activation == Activation::Swish ? "SwiGLU feed-forward" : "gated feed-forward") : "feed-forward");
  if (gated) {
    // down(act(gate(x)) ⊙ up(x)): the gate's activation multiplies the up projection element-wise.
    s.formula = "FFN(" + in + ") = down(" + act + "(gate(" + in + ")) ⊙ up(" + in + ")): gate, up " + shape_str(nd) +
                " → " + shape_str(nf) + ", ⊙ " + shape_str(nf) + ", down → " + shape_str(nd);
    s.reads = {{in, L + ".ffn_block.sublayer_in", nd},
               {"W_gate", P + ".ffn.gate.weight", {dff, d}},
               {"W_up", P + ".ffn.fc1.weight", {dff, d}},
               {"W_down", P + ".ffn.fc2.weight", {d, dff}}};
    s.writes = {{"gate(x̂)", L + ".ffn.gate_pre", nf},
                {std::string(act) + "(gate)", L + ".ffn.gate", nf},
                {"up(x̂)", L + ".ffn.up", nf},
                {"⊙", L + ".ffn.hidden", nf},
                {"FFN", L + ".ffn.out", nd}};
  } else {
    s.formula = std::string("FFN(") + in + ") = " + act + "(" + in + " W_1ᵀ + b_1) W_2ᵀ + b_2: " + shape_str(nd) +
                " → " + shape_str(nf) + " → " + shape_str(nd);
    s.reads = {{in, L + ".ffn_block.sublayer_in", nd},
               {"W_1", P + ".ffn.fc1.weight", {dff, d}},
               {"W_2", P + ".ffn.fc2.weight", {d, dff}}};
    s.writes = {
        {"pre-activation", L + ".ffn.hidden_pre", nf}, {"hidden", L + ".ffn.hidden", nf}, {"FFN", L + ".ffn.out", nd}};
  }
  if (parallel)
    s.formula +=
        "; x = x + attention(LN1(x)) + FFN(LN2(x)): both branches read the layer's input x (parallel residual)";
  else if (pre)
    s.formula += "; x = x + FFN(x̂)";
  if (pre) s.writes.push_back({"x", L + ".ffn_block.output", nd});
}

void describe_final_norm(const Ctx& x, Stage& s) {
  const std::vector<int64_t> nd{x.rows, x.d()};
  s.title = std::string(to_string(x.side)) + " · final " + (rms(x.c) ? "RMSNorm" : "LayerNorm") + " (pre-LN)";
  s.formula = "y = " + std::string(rms(x.c) ? "RMSNorm" : "LN") + "(x): " + norm_formula(x.c) + ", " + shape_str(nd) +
              " → " + shape_str(nd);
  const std::string last = layer_rec(x, (x.side == Side::Encoder ? x.c.n_encoder_layers : x.c.n_decoder_layers) - 1);
  // An attention-only decoder's layers end with their self-attention block.
  const char* last_block = x.side == Side::Decoder && !x.c.has_ffn() ? ".self_block.output" : ".ffn_block.output";
  s.reads = {{"x", last + last_block, nd}, {rms(x.c) ? "g" : "γ", x.param + ".norm.weight", {x.d()}}};
  if (rms(x.c)) {
    s.writes = {{"rms", x.rec + ".norm.rms", {x.rows}}, {"y", x.rec + ".norm.out", nd}};
  } else {
    s.reads.push_back({"β", x.param + ".norm.bias", {x.d()}});
    s.writes = {{"mean", x.rec + ".norm.mean", {x.rows}},
                {"var", x.rec + ".norm.var", {x.rows}},
                {"y", x.rec + ".norm.out", nd}};
  }
}

void describe_layer_stage(const Ctx& x, const StageKey& k, Stage& s) {
  switch (k.kind) {
    case StageKind::Norm:
      describe_norm(x, k, s);
      break;
    case StageKind::AddNorm:
      describe_add_norm(x, k, s);
      break;
    case StageKind::SelfAttention:
    case StageKind::CrossAttention:
      describe_attention(x, k, s);
      break;
    case StageKind::FeedForward:
      describe_ffn(x, k, s);
      break;
    case StageKind::FinalNorm:
      describe_final_norm(x, s);
      break;
    default:
      break;
  }
}

}  // namespace

std::vector<StageKey> encoder_layout(const Config& c) {
  std::vector<StageKey> out;
  if (!c.has_encoder()) return out;
  out.push_back({StageKind::Embed, Block::None, -1});
  out.push_back({StageKind::Positional, Block::None, -1});
  for (int l = 0; l < c.n_encoder_layers; ++l) {
    add_block(out, c.norm, StageKind::SelfAttention, Block::SelfAttention, l);
    add_block(out, c.norm, StageKind::FeedForward, Block::FeedForward, l);
  }
  if (c.norm == NormPlacement::Pre) out.push_back({StageKind::FinalNorm, Block::None, -1});
  // An encoder-only model ends with its hidden states (Memory, read by nobody) or, with a masked-LM
  // head, with the per-position predictions (Logits on the encoder side).
  out.push_back({c.arch == Arch::EncoderOnly && c.mlm_head ? StageKind::Logits : StageKind::Memory, Block::None, -1});
  return out;
}

std::vector<StageKey> decoder_layout(const Config& c) {
  std::vector<StageKey> out;
  if (!c.has_decoder()) return out;
  out.push_back({StageKind::Embed, Block::None, -1});
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    add_block(out, c.norm, StageKind::SelfAttention, Block::SelfAttention, l);
    if (c.has_encoder()) add_block(out, c.norm, StageKind::CrossAttention, Block::CrossAttention, l);
    if (c.has_ffn()) add_block(out, c.norm, StageKind::FeedForward, Block::FeedForward, l);
  }
  if (c.norm == NormPlacement::Pre) out.push_back({StageKind::FinalNorm, Block::None, -1});
  out.push_back({StageKind::Logits, Block::None, -1});
  out.push_back({StageKind::Choose, Block::None, -1});
  return out;
}

int encoder_stage_count(const Config& c) { return static_cast<int>(encoder_layout(c).size()); }
int decoder_stage_count(const Config& c) { return static_cast<int>(decoder_layout(c).size()); }

Stage describe_encoder_stage(const Config& c, int i, int n_src) {
  const StageKey k = encoder_layout(c)[static_cast<size_t>(i)];
  Stage s;
  s.index = i;
  s.side = Side::Encoder;
  s.kind = k.kind;
  s.block = k.block;
  s.layer = k.layer;
  const int64_t n = n_src, d = c.d_model;
  const std::vector<int64_t> nd{n, d};
  const Ctx x{c, Side::Encoder, "encoder", "", "encoder", n, n, n};
  const std::string embed_name = c.share_embeddings ? "tgt_embed.weight" : "src_embed.weight";
  switch (k.kind) {
    case StageKind::Embed: {
      const std::string scale = c.scale_embeddings ? " · √" + std::to_string(d) : "";
      s.title = std::string("encoder · embed the ") + (c.has_decoder() ? "source" : "input");
      s.formula = "X = E[ids]" + scale + ": " + std::to_string(n) + " ids → " + shape_str(nd);
      s.reads = {{"ids", "src_ids", {n}}, {"E", embed_name, {c.src_vocab.size(), d}}};
      s.writes = {{c.scale_embeddings ? "E[ids]·√d" : "E[ids]", "encoder.embed.scaled", nd}};
      break;
    }
    case StageKind::Positional: {
      // BERT adds its token-type (segment) rows here too, then normalises the sum.
      const bool types = c.n_token_types > 0;
      s.title = std::string("encoder · add positional encoding") + (types ? " and token types" : "") +
                (c.embed_norm ? ", LayerNorm" : "");
      std::string sum = std::string("X + P[0:") + std::to_string(n) + "] (" +
                        (c.positional == Positional::Learned ? "learned" : "sinusoidal") + ")" +
                        (types ? " + T[segment]" : "");
      s.formula = "X = " + (c.embed_norm ? "LN(" + sum + ")" : sum) + ": " + shape_str(nd) + " + " + shape_str(nd) +
                  " → " + shape_str(nd);
      s.reads = {{c.scale_embeddings ? "E[ids]·√d" : "E[ids]", "encoder.embed.scaled", nd}};
      if (c.positional == Positional::Learned) s.reads.push_back({"P", "pos_embed.weight", {c.max_len, d}});
      if (types) s.reads.push_back({"T", "type_embed.weight", {c.n_token_types, d}});
      s.writes = {{"P", "encoder.embed.pe", nd}};
      if (types) s.writes.push_back({"T[segment]", "encoder.embed.types", nd});
      s.writes.push_back({"X", "encoder.embed.sum", nd});
      break;
    }
    case StageKind::Memory: {
      const std::string last = c.norm == NormPlacement::Pre
                                   ? "encoder.norm.out"
                                   : "encoder.layers." + std::to_string(c.n_encoder_layers - 1) + ".ffn_block.output";
      s.reads = {{"x", last, nd}};
      if (c.has_decoder()) {
        s.title = "encoder · memory ready";
        s.formula = "memory " + shape_str(nd) + ": every decoder layer's cross-attention reads its K and V from it";
        s.writes = {{"memory", "encoder.output", nd}};
      } else {
        s.title = "encoder · output: one contextual vector per token";
        s.formula =
            "H " + shape_str(nd) + " (encoder-only model without a masked-LM head: no decoder and no predictions)";
        s.writes = {{"H", "encoder.output", nd}};
      }
      break;
    }
    case StageKind::Logits: {  // encoder-only: BERT's masked-LM head (encoder.h: mlm_logits)
      const int64_t V = c.src_vocab.size();
      s.title = "encoder · masked-LM head: a distribution over the vocabulary at every position";
      s.formula = "logits = LN(act(H W_tᵀ + b_t)) Eᵀ + b: " + shape_str(nd) + " → " + shape_str(nd) + " → " +
                  shape_str({n, V}) + "; p = softmax per row (the [MASK] rows are the predictions)";
      s.reads = {{"H", "encoder.output", nd}, {"W_t", "mlm.dense.weight", {d, d}}, {"E", embed_name, {V, d}}};
      s.writes = {{"H W_tᵀ + b_t", "mlm.hidden_pre", nd},
                  {"LN(…)", "mlm.hidden", nd},
                  {"logits", "logits", {n, V}},
                  {"p", "probs", {n, V}}};
      break;
    }
    default:
      describe_layer_stage(x, k, s);
  }
  return s;
}

Stage describe_decoder_stage(const Config& c, int j, const StepDims& dims) {
  const StageKey k = decoder_layout(c)[static_cast<size_t>(j)];
  Stage s;
  s.side = Side::Decoder;
  s.kind = k.kind;
  s.block = k.block;
  s.layer = k.layer;
  s.step = dims.step;
  const std::string top = "steps." + std::to_string(dims.step) + ".";
  const int64_t r = dims.rows, d = c.d_model, V = c.tgt_vocab.size(), m = dims.fed;
  const int64_t nk = dims.position0 + dims.fed;
  const std::vector<int64_t> nd{r, d};
  Ctx x{c, Side::Decoder, top + "decoder", top, "decoder", r, nk, dims.n_src};
  x.fed = m;
  x.cached = dims.cached;
  x.first_step = dims.step == 0;
  switch (k.kind) {
    case StageKind::Embed: {
      const std::string pos = m == 1 ? "position " + std::to_string(dims.position0)
                                     : "positions " + std::to_string(dims.position0) + ".." + std::to_string(nk - 1);
      s.title = (dims.step == 0 && m > 1 ? "decoder · prefill: embed the prompt" : "decoder · embed the newest token") +
                std::string(" (step ") + std::to_string(dims.step) + ")";
      // As the model computes it: × √d only when the config scales (Vaswani, Marian; not GPT-2),
      // a learned table's row P[t] or the sinusoid p_t, LayerNorm when the model has one there.
      const std::string scaled = c.scale_embeddings ? "E[id] · √" + std::to_string(d) : "E[id]";
      // Rotary models add nothing here: the position turns q and k inside every self-attention.
      const bool rotary = c.positional == Positional::Rotary;
      const std::string sum = scaled + (rotary                                ? ""
                                        : c.positional == Positional::Learned ? " + P[t] (learned)"
                                                                              : " + p_t (sinusoidal)");
      s.formula = "x = " + (c.embed_norm ? "LN(" + sum + ")" : sum) + ", " + pos + ": " + shape_str({m, d});
      if (rotary) s.formula += "; no position added (rotary: q and k are turned by position in each attention)";
      if (!dims.cached) s.formula += " (cache off: all " + std::to_string(r) + " rows recomputed)";
      s.reads = {{"ids", top + "tgt_ids", {r}}, {"E", "tgt_embed.weight", {V, d}}};
      if (c.positional == Positional::Learned) s.reads.push_back({"P", "pos_embed.weight", {c.max_len, d}});
      s.writes = {{c.scale_embeddings ? "E[id]·√d" : "E[id]", top + "decoder.embed.scaled", nd}};
      if (!rotary) s.writes.push_back({"p_t", top + "decoder.embed.pe", nd});
      s.writes.push_back({"x", top + "decoder.embed.sum", nd});
      break;
    }
    case StageKind::Logits: {
      s.title = "decoder · logits (step " + std::to_string(dims.step) + ")";
      s.formula = "logits = y W_genᵀ + b: " + shape_str(nd) + " → " + shape_str({r, V}) + "; p = softmax(logits)";
      s.reads = {{"y", top + "decoder.output", nd},
                 {"W_gen", c.share_embeddings ? "tgt_embed.weight" : "generator.weight", {V, d}}};
      s.writes = {
          {"logits", top + "logits", {r, V}}, {"log p", top + "log_probs", {r, V}}, {"p", top + "probs", {r, V}}};
      break;
    }
    case StageKind::Choose:
      s.title = "decoder · choose the next token (step " + std::to_string(dims.step) + ")";
      s.formula = "next token from p of the last row " + shape_str({1, V});
      s.reads = {{"p", top + "probs", {r, V}}};
      break;
    default:
      describe_layer_stage(x, k, s);
      s.title += " (step " + std::to_string(dims.step) + ")";
      if (k.kind == StageKind::SelfAttention) {
        const std::string rows = m == 1 ? "row " + std::to_string(dims.position0)
                                        : "rows " + std::to_string(dims.position0) + ".." + std::to_string(nk - 1);
        s.note = dims.cached ? "appends " + rows + " to layer " + std::to_string(k.layer) + "'s K/V cache (now " +
                                   std::to_string(nk) + " rows) and attends over all of them"
                             : "cache off: K and V recomputed for all " + std::to_string(nk) + " rows";
      } else if (k.kind == StageKind::CrossAttention) {
        s.note = dims.step == 0 || !dims.cached ? std::string("K, V = memory W_{k,v}ᵀ computed") +
                                                      (dims.cached ? " once, kept in the cache" : " again (cache off)")
                                                : "K, V of the memory read from the cache (computed at step 0)";
      }
  }
  return s;
}

}  // namespace sf
