#include "io/hf_weights.h"

#include <cmath>
#include <cstring>

#include "model/positional_encoding.h"

namespace sf {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

int64_t i64(int x) { return static_cast<int64_t>(x); }

// The plans of one file, built slot by slot.
struct Plans {
  std::map<std::string, TensorPlan> map;

  void mat(const std::string& name, Mat& m) {
    map[name] = TensorPlan{{m.rows(), m.cols()}, {{m.data(), int(m.rows()), int(m.cols())}}};
  }
  // A matrix allocated float32 (m) or kept 16-bit (h, when allocate() made it so): copied as stored.
  void mat(const std::string& name, Mat& m, HalfMat& h) {
    if (h.empty()) return mat(name, m);
    map[name] = TensorPlan{{h.rows, h.cols}, {half_rows(h, 0, int(h.rows), 0)}};
  }
  // Rows [0, rows) of h at row `at`, from the stored tensor's rows [src_row, src_row + rows).
  static Placement half_rows(HalfMat& h, int at, int rows, int src_row) {
    Placement p{nullptr, rows, int(h.cols), false, 0, src_row};
    p.dest16 = h.data() + int64_t{at} * h.cols;
    p.storage = h.storage;
    return p;
  }
  void vec(const std::string& name, RowVec& v) { map[name] = TensorPlan{{v.size()}, {{v.data(), 1, int(v.size())}}}; }
  void linear(const std::string& p, Linear& l) {
    mat(p + ".weight", l.weight, l.half);
    vec(p + ".bias", l.bias);
  }
  void norm(const std::string& p, LayerNormWeights& n) {
    vec(p + ".weight", n.weight);
    vec(p + ".bias", n.bias);
  }
  // GPT-2's Conv1D: weight (in, out), y = x W + b — the transpose of nn.Linear's (out, in).
  void conv1d(const std::string& p, Linear& l) {
    const int out = int(l.weight.rows()), in = int(l.weight.cols());
    map[p + ".weight"] = TensorPlan{{in, out}, {{l.weight.data(), out, in, /*transpose=*/true}}};
    vec(p + ".bias", l.bias);
  }
  // GPT-2's fused c_attn: weight (d, 3d), columns [0, d) Q, [d, 2d) K, [2d, 3d) V; bias (3d) alike.
  void fused_qkv(const std::string& p, AttentionWeights& a, int d) {
    TensorPlan w{{d, 3 * d}, {}}, b{{3 * i64(d)}, {}};
    int col = 0;
    for (Linear* l : {&a.q_proj, &a.k_proj, &a.v_proj}) {
      w.to.push_back({l->weight.data(), d, d, /*transpose=*/true, col});
      b.to.push_back({l->bias.data(), 1, d, false, col});
      col += d;
    }
    map[p + ".weight"] = std::move(w);
    map[p + ".bias"] = std::move(b);
  }
  // GPT-NeoX's fused query_key_value: weight (3·h·dk, d) with rows grouped per head as
  // [q_h | k_h | v_h] (dk rows each); bias (3·h·dk) alike.
  void fused_qkv_per_head(const std::string& p, AttentionWeights& a, int n_heads, int dk, int d, bool bias) {
    TensorPlan wp{{3 * i64(n_heads) * dk, d}, {}}, bp{{3 * i64(n_heads) * dk}, {}};
    for (int h = 0; h < n_heads; ++h) {
      int part = 0;
      for (Linear* l : {&a.q_proj, &a.k_proj, &a.v_proj}) {
        const int src_row = (3 * h + part++) * dk;
        if (!l->half.empty())
          wp.to.push_back(half_rows(l->half, h * dk, dk, src_row));
        else
          wp.to.push_back({l->weight.data() + i64(h) * dk * d, dk, d, false, 0, src_row});
        bp.to.push_back({l->bias.data() + i64(h) * dk, 1, dk, false, src_row});
      }
    }
    map[p + ".weight"] = std::move(wp);
    if (bias) map[p + ".bias"] = std::move(bp);
  }
  // Present or not, never read: tied copies, heads stepformer does not run. Shape still checked.
  void optional(const std::string& name, std::vector<int64_t> shape) {
    TensorPlan t{std::move(shape), {}};
    t.required = false;
    map[name] = std::move(t);
  }
  // Buffers of any dtype and shape (causal-mask tables, position_ids).
  void ignore(const std::string& name) {
    TensorPlan t;
    t.required = false;
    t.ignore = true;
    map[name] = std::move(t);
  }
};

const TensorEntry* find_entry(const SafetensorsHeader& h, const std::string& model_type, const std::string& name) {
  for (const TensorEntry& e : h.entries)
    if (canonical_hf_name(model_type, e.name) == name) return &e;
  return nullptr;
}

void gpt2(Plans& p, const HfConfig& h, Weights& w) {
  const Config& c = h.config;
  const int d = c.d_model;
  p.mat("wte.weight", w.tgt_embed);
  p.mat("wpe.weight", w.pos_embed);
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const std::string s = "h." + std::to_string(i);
    DecoderLayerWeights& l = w.decoder[size_t(i)];
    p.norm(s + ".ln_1", l.norm1);
    p.fused_qkv(s + ".attn.c_attn", l.self_attn, d);
    p.conv1d(s + ".attn.c_proj", l.self_attn.o_proj);
    p.norm(s + ".ln_2", l.ffn_norm(c.arch));
    p.conv1d(s + ".mlp.c_fc", l.ffn.fc1);
    p.conv1d(s + ".mlp.c_proj", l.ffn.fc2);
    p.ignore(s + ".attn.bias");         // the causal-mask buffer (1, 1, n_ctx, n_ctx)
    p.ignore(s + ".attn.masked_bias");  // -1e4, transformers 3.x / early 4.x
  }
  p.norm("ln_f", w.decoder_norm);
  if (c.share_embeddings)
    p.optional("lm_head.weight", {h.vocab_size, d});  // equal to wte
  else
    p.mat("lm_head.weight", w.generator.weight);
}

// Marian's stored position table (2020-era files) must be the one stepformer computes.
std::function<std::string(const Mat&)> positions_check(const Config& c) {
  return [&c](const Mat& stored) -> std::string {
    const Mat want = positional_table(c.positional, c.max_len, c.d_model);
    const float diff = (stored - want).cwiseAbs().maxCoeff();
    // F16 tables are rounded: values in [-1, 1] are within 2^-11 of the formula.
    if (diff <= 1e-3f) return "";
    return "differs from Marian's fixed sinusoidal table (sines first, then cosines) by up to " + std::to_string(diff) +
           "; stepformer computes that table and expected the stored one to equal it";
  };
}

void attention(Plans& p, const std::string& s, AttentionWeights& a) {
  p.linear(s + ".q_proj", a.q_proj);
  p.linear(s + ".k_proj", a.k_proj);
  p.linear(s + ".v_proj", a.v_proj);
  p.linear(s + ".out_proj", a.o_proj);
}

void marian(Plans& p, const HfConfig& h, const SafetensorsHeader& header, Weights& w) {
  const Config& c = h.config;
  const int d = c.d_model;
  if (c.share_embeddings) {
    // One table; files converted from pytorch_model.bin also hold its tied copies.
    const bool has_shared = find_entry(header, h.model_type, "shared.weight") != nullptr;
    const char* names[] = {"shared.weight", "decoder.embed_tokens.weight", "encoder.embed_tokens.weight"};
    bool placed = false;
    for (const char* n : names) {
      const bool is_source =
          !placed && (has_shared ? std::string(n) == "shared.weight" : find_entry(header, h.model_type, n) != nullptr);
      if (is_source) {
        p.mat(n, w.tgt_embed);
        placed = true;
      } else {
        p.optional(n, {h.vocab_size, d});
      }
    }
    if (!placed) p.mat("shared.weight", w.tgt_embed);  // reported missing under its usual name
    p.optional("lm_head.weight", {h.vocab_size, d});
  } else {
    p.mat("encoder.embed_tokens.weight", w.src_embed);
    p.mat("decoder.embed_tokens.weight", w.tgt_embed);
    if (h.tie_word_embeddings)
      p.optional("lm_head.weight", {h.vocab_size, d});
    else
      p.mat("lm_head.weight", w.generator.weight);
  }
  TensorPlan bias{{1, h.vocab_size}, {{w.generator.bias.data(), 1, h.vocab_size}}};
  bias.required = false;  // a buffer of zeros in models that never trained it
  p.map["final_logits_bias"] = std::move(bias);
  for (const char* side : {"encoder", "decoder"}) {
    TensorPlan pos{{c.max_len, d}, {}};
    pos.required = false;
    pos.check = positions_check(c);
    p.map[std::string(side) + ".embed_positions.weight"] = std::move(pos);
  }
  for (int i = 0; i < c.n_encoder_layers; ++i) {
    const std::string s = "encoder.layers." + std::to_string(i);
    EncoderLayerWeights& l = w.encoder[size_t(i)];
    attention(p, s + ".self_attn", l.self_attn);
    p.norm(s + ".self_attn_layer_norm", l.norm1);
    p.linear(s + ".fc1", l.ffn.fc1);
    p.linear(s + ".fc2", l.ffn.fc2);
    p.norm(s + ".final_layer_norm", l.norm2);
  }
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const std::string s = "decoder.layers." + std::to_string(i);
    DecoderLayerWeights& l = w.decoder[size_t(i)];
    attention(p, s + ".self_attn", l.self_attn);
    p.norm(s + ".self_attn_layer_norm", l.norm1);
    attention(p, s + ".encoder_attn", l.cross_attn);
    p.norm(s + ".encoder_attn_layer_norm", l.norm2);
    p.linear(s + ".fc1", l.ffn.fc1);
    p.linear(s + ".fc2", l.ffn.fc2);
    p.norm(s + ".final_layer_norm", l.norm3);
  }
}

void bert(Plans& p, const HfConfig& h, Weights& w) {
  const Config& c = h.config;
  const int d = c.d_model;
  p.mat("embeddings.word_embeddings.weight", w.tgt_embed);
  p.mat("embeddings.position_embeddings.weight", w.pos_embed);
  p.mat("embeddings.token_type_embeddings.weight", w.type_embed);
  p.norm("embeddings.LayerNorm", w.embed_norm);
  p.ignore("embeddings.position_ids");    // (1, max_pos) I64 buffer, transformers < 4.31
  p.ignore("embeddings.token_type_ids");  // a zeros buffer some versions save
  for (int i = 0; i < c.n_encoder_layers; ++i) {
    const std::string s = "encoder.layer." + std::to_string(i);
    EncoderLayerWeights& l = w.encoder[size_t(i)];
    p.linear(s + ".attention.self.query", l.self_attn.q_proj);
    p.linear(s + ".attention.self.key", l.self_attn.k_proj);
    p.linear(s + ".attention.self.value", l.self_attn.v_proj);
    p.linear(s + ".attention.output.dense", l.self_attn.o_proj);
    p.norm(s + ".attention.output.LayerNorm", l.norm1);
    p.linear(s + ".intermediate.dense", l.ffn.fc1);
    p.linear(s + ".output.dense", l.ffn.fc2);
    p.norm(s + ".output.LayerNorm", l.norm2);
  }
  // Heads stepformer does not run: the pooler and the next-sentence classifier.
  p.optional("pooler.dense.weight", {d, d});
  p.optional("pooler.dense.bias", {d});
  p.optional("cls.seq_relationship.weight", {2, d});
  p.optional("cls.seq_relationship.bias", {2});
  if (c.mlm_head) {
    p.linear("cls.predictions.transform.dense", w.mlm.dense);
    p.norm("cls.predictions.transform.LayerNorm", w.mlm.norm);
    p.vec("cls.predictions.bias", w.generator.bias);
    p.optional("cls.predictions.decoder.weight", {h.vocab_size, d});  // tied to the word embeddings
    p.optional("cls.predictions.decoder.bias", {h.vocab_size});       // tied to cls.predictions.bias
  }
}

// Llama, Qwen2, Mistral (after the "model." prefix): RMSNorm gains only; q/k/v/o, gate/up/down
// with the biases the config has.
void llama_like(Plans& p, const HfConfig& h, Weights& w) {
  const Config& c = h.config;
  p.mat("embed_tokens.weight", w.tgt_embed, w.tgt_embed_half);
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const std::string s = "layers." + std::to_string(i);
    DecoderLayerWeights& l = w.decoder[size_t(i)];
    p.vec(s + ".input_layernorm.weight", l.norm1.weight);
    p.vec(s + ".post_attention_layernorm.weight", l.norm2.weight);
    const std::pair<const char*, Linear*> attn[] = {{".q_proj", &l.self_attn.q_proj},
                                                    {".k_proj", &l.self_attn.k_proj},
                                                    {".v_proj", &l.self_attn.v_proj},
                                                    {".o_proj", &l.self_attn.o_proj}};
    for (const auto& [name, lin] : attn) {
      p.mat(s + ".self_attn" + name + ".weight", lin->weight, lin->half);
      if (lin == &l.self_attn.o_proj ? c.o_bias : c.qkv_bias) p.vec(s + ".self_attn" + name + ".bias", lin->bias);
    }
    const std::pair<const char*, Linear*> mlp[] = {
        {".gate_proj", &l.ffn.gate}, {".up_proj", &l.ffn.fc1}, {".down_proj", &l.ffn.fc2}};
    for (const auto& [name, lin] : mlp) {
      p.mat(s + ".mlp" + name + ".weight", lin->weight, lin->half);
      if (c.mlp_bias) p.vec(s + ".mlp" + name + ".bias", lin->bias);
    }
    p.ignore(s + ".self_attn.rotary_emb.inv_freq");  // a buffer in older saves
  }
  p.vec("norm.weight", w.decoder_norm.weight);
  if (c.share_embeddings)
    p.optional("lm_head.weight", {h.vocab_size, c.d_model});  // equal to embed_tokens
  else
    p.mat("lm_head.weight", w.generator.weight, w.generator.half);
}

// GPT-NeoX (after the "gpt_neox." prefix; embed_out has none).
void gpt_neox(Plans& p, const HfConfig& h, Weights& w) {
  const Config& c = h.config;
  p.mat("embed_in.weight", w.tgt_embed, w.tgt_embed_half);
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const std::string s = "layers." + std::to_string(i);
    DecoderLayerWeights& l = w.decoder[size_t(i)];
    p.norm(s + ".input_layernorm", l.norm1);
    p.norm(s + ".post_attention_layernorm", l.norm2);
    p.fused_qkv_per_head(s + ".attention.query_key_value", l.self_attn, c.n_heads, c.d_k(), c.d_model, c.qkv_bias);
    p.mat(s + ".attention.dense.weight", l.self_attn.o_proj.weight, l.self_attn.o_proj.half);
    if (c.o_bias) p.vec(s + ".attention.dense.bias", l.self_attn.o_proj.bias);
    p.linear(s + ".mlp.dense_h_to_4h", l.ffn.fc1);
    p.linear(s + ".mlp.dense_4h_to_h", l.ffn.fc2);
    // Buffers of older saves: the causal mask, its fill value, the rotary frequencies.
    for (const char* b : {".attention.bias", ".attention.masked_bias", ".attention.rotary_emb.inv_freq"})
      p.ignore(s + b);
  }
  p.norm("final_layer_norm", w.decoder_norm);
  if (c.share_embeddings)
    p.optional("embed_out.weight", {h.vocab_size, c.d_model});
  else
    p.mat("embed_out.weight", w.generator.weight, w.generator.half);
}

// Every family's plans for `w`; `header` holds every stored entry (Marian looks names up).
Plans plans_for(const HfConfig& h, const SafetensorsHeader& header, Weights& w) {
  Plans p;
  if (h.model_type == "gpt2")
    gpt2(p, h, w);
  else if (h.model_type == "marian")
    marian(p, h, header, w);
  else if (h.model_type == "bert")
    bert(p, h, w);
  else if (h.model_type == "gpt_neox")
    gpt_neox(p, h, w);
  else
    llama_like(p, h, w);
  return p;
}

std::string describe(const HfConfig& h) {
  return " in a " + h.model_type + " checkpoint" + (h.architecture.empty() ? "" : " (" + h.architecture + ")") +
         " with " + std::to_string(h.config.has_encoder() ? h.config.n_encoder_layers : h.config.n_decoder_layers) +
         " layers per config.json";
}

}  // namespace

std::string canonical_hf_name(const std::string& model_type, const std::string& stored) {
  std::string n = stored;
  if (model_type == "gpt2" && starts_with(n, "transformer.")) n = n.substr(12);
  if ((model_type == "marian" || model_type == "llama" || model_type == "qwen2" || model_type == "mistral") &&
      starts_with(n, "model."))
    n = n.substr(6);
  if (model_type == "gpt_neox" && starts_with(n, "gpt_neox.")) n = n.substr(9);
  if (model_type == "bert") {
    if (starts_with(n, "bert.")) n = n.substr(5);
    if (ends_with(n, "LayerNorm.gamma")) n = n.substr(0, n.size() - 5) + "weight";
    if (ends_with(n, "LayerNorm.beta")) n = n.substr(0, n.size() - 4) + "bias";
  }
  return n;
}

void settle_hf_config(HfConfig& h, const MappedFile& file, const SafetensorsHeader& header) {
  Config& c = h.config;
  if (h.model_type == "gpt2") {
    // An lm_head.weight byte-equal to wte is the tied head saved twice; any other is its own.
    const TensorEntry* head = find_entry(header, "gpt2", "lm_head.weight");
    const TensorEntry* wte = find_entry(header, "gpt2", "wte.weight");
    c.share_embeddings = true;
    if (head && wte && h.tie_word_embeddings) {
      const uint64_t n = head->end - head->begin;
      c.share_embeddings = n == wte->end - wte->begin && head->dtype == wte->dtype &&
                           std::memcmp(file.data() + header.data_start + head->begin,
                                       file.data() + header.data_start + wte->begin, n) == 0;
    } else if (head && !h.tie_word_embeddings) {
      c.share_embeddings = false;
    }
  }
  if (h.model_type == "bert") c.mlm_head = find_entry(header, "bert", "cls.predictions.bias") != nullptr;
}

Result<PlacementReport> read_hf_weights(MappedFile& file, const SafetensorsHeader& header, const HfConfig& h,
                                        Weights& w, const std::string& what) {
  Plans p = plans_for(h, header, w);
  return place_tensors(
      file, header, p.map, what, [&](const std::string& n) { return canonical_hf_name(h.model_type, n); }, describe(h));
}

Result<PlacementReport> read_hf_shards(std::vector<HfShard>& shards, const HfConfig& h, Weights& w,
                                       const std::string& what) {
  SafetensorsHeader all;  // every shard's entries, for the plans' name lookups
  for (const HfShard& s : shards)
    all.entries.insert(all.entries.end(), s.header.entries.begin(), s.header.entries.end());
  Plans p = plans_for(h, all, w);
  const auto canonical = [&](const std::string& n) { return canonical_hf_name(h.model_type, n); };
  std::map<std::string, std::string> seen;
  PlacementReport report;
  for (HfShard& s : shards) {
    auto ok = place_shard(s.file, s.header, p.map, s.what, canonical, describe(h), seen, report);
    if (!ok) return Error{ok.error()};
  }
  auto all_placed = check_all_placed(p.map, seen, what);
  if (!all_placed) return Error{all_placed.error()};
  return report;
}

}  // namespace sf
