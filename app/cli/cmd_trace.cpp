// `stepformer trace` (write every recorded tensor) and `stepformer walk` (the terminal walk-through).
#include <cmath>
#include <cstdio>
#include <iostream>

#include "args.h"
#include "checkpoint.h"
#include "commands.h"
#include "run.h"

namespace sf::cli {

namespace {

struct Loaded {
  Model model;
  PreparedInput input;
};

// Shared front half of trace/walk: parse --model/--src/--tgt, load, tokenise, report unknowns.
std::optional<Loaded> load_and_prepare(Args& a, const char* cmd) {
  a.require("--model");
  if (a.ok() && !a.get("--src")) a.require("--src");
  if (!a.ok()) {
    std::cerr << "stepformer " << cmd << ": " << a.error() << "\n";
    return std::nullopt;
  }
  auto m = load_model(a.str("--model"));
  if (!m) {
    std::cerr << "stepformer " << cmd << ": " << m.error() << "\n";
    return std::nullopt;
  }
  auto in = prepare_input(*m, a.str("--src"), a.str("--tgt"));
  if (!in) {
    std::cerr << "stepformer " << cmd << ": " << in.error() << "\n";
    return std::nullopt;
  }
  for (auto& w : in->warnings) std::cerr << "warning: " << w << "\n";
  return Loaded{std::move(*m), std::move(*in)};
}

void print_tokens(const char* label, const Vocab& v, const std::vector<int>& ids) {
  std::printf("%-8s", label);
  for (size_t i = 0; i < ids.size(); ++i) std::printf(" %s(%d)", v.token(ids[i]).c_str(), ids[i]);
  std::printf("\n");
}

// One cell of the text heatmap: five shades from blank to full block.
const char* shade(float w) {
  static const char* levels[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  int i = static_cast<int>(std::floor(w * 5.0f));
  return levels[std::clamp(i, 0, 4)];
}

void print_heatmap(const Mat& w, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  auto clip = [](const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n) : s; };
  std::printf("          ");
  for (auto& c : cols) std::printf("%-2s", clip(c, 2).c_str());
  std::printf("\n");
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    std::printf("  %-8s", clip(rows[static_cast<size_t>(i)], 8).c_str());
    for (Eigen::Index j = 0; j < w.cols(); ++j) std::printf("%s", shade(w(i, j)));
    Eigen::Index best;
    w.row(i).maxCoeff(&best);
    std::printf("  max %.2f on %s\n", w(i, best), cols[static_cast<size_t>(best)].c_str());
  }
}

std::vector<std::string> names(const Vocab& v, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(v.token(id));
  return out;
}

void print_attention(const char* title, const AttentionTrace& a, const std::vector<std::string>& q,
                     const std::vector<std::string>& k) {
  for (int h = 0; h < a.n_heads; ++h) {
    std::printf("  %s, head %d  (weights %ldx%ld, rows sum to 1)\n", title, h, static_cast<long>(a.head_weights(0, h).rows()),
                static_cast<long>(a.head_weights(0, h).cols()));
    print_heatmap(a.head_weights(0, h), q, k);
  }
}

}  // namespace

static int cmd_trace(int argc, char** argv) {
  Args a(argc, argv, 2, {"--no-pe", "--no-causal"}, {"--model", "--src", "--tgt", "--out"});
  a.require("--out");
  auto l = load_and_prepare(a, "trace");
  if (!l) return a.ok() ? 1 : 2;
  RunOptions opt;
  opt.positional_encoding = !a.has("--no-pe");
  opt.causal_mask = !a.has("--no-causal");
  Trace t = run_forward(l->model, l->input, opt);
  TensorFile f;
  f.metadata["stepformer.config"] = config_to_json(l->model.config);
  f.metadata["src"] = a.str("--src");
  f.metadata["tgt"] = a.str("--tgt");
  append_trace_tensors(l->model, t, f);
  if (auto ok = write_safetensors(a.str("--out"), f); !ok) {
    std::cerr << "stepformer trace: " << ok.error() << "\n";
    return 1;
  }
  std::cout << "wrote " << f.tensors.size() << " tensors to " << a.str("--out") << "\n";
  return 0;
}

static int cmd_walk(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--model", "--src", "--tgt"});
  auto l = load_and_prepare(a, "walk");
  if (!l) return a.ok() ? 1 : 2;
  const Model& m = l->model;
  const Config& c = m.config;
  const PreparedInput& in = l->input;
  Trace t = run_forward(m, in);
  const int d = c.d_model;

  std::printf("model: %s, %s-LN, d_model %d, %d heads (d_k %d), d_ff %d, %d+%d layers, %s PE\n\n", to_string(c.arch),
              to_string(c.norm), d, c.n_heads, c.d_k(), c.d_ff, c.n_encoder_layers, c.n_decoder_layers,
              to_string(c.positional));
  std::vector<std::string> src_names, tgt_names = names(c.tgt_vocab, in.tgt_ids);
  if (c.has_encoder()) {
    src_names = names(c.src_vocab, in.src_ids);
    const int n = static_cast<int>(in.src_ids.size());
    print_tokens("source", c.src_vocab, in.src_ids);
    std::printf("\n[encoder] embed: E[id]·√%d → (%d, %d); + positional encoding p_t → X (%d, %d)\n", d, n, d, n, d);
    for (int l2 = 0; l2 < c.n_encoder_layers; ++l2) {
      const auto& L = t.encoder.layers[static_cast<size_t>(l2)];
      std::printf("\n[encoder layer %d] self-attention: Q,K,V (%d, %d) → %d heads of (%d, %d) scores; %s\n", l2, n, d,
                  c.n_heads, n, n, c.norm == NormPlacement::Post ? "x = LN(x + Attn(x))" : "x = x + Attn(LN(x))");
      print_attention("encoder self-attention", L.self_attn, src_names, src_names);
      std::printf("  residual-stream norm after the layer: %.3f (mean over tokens)\n",
                  L.ffn_block.output.rowwise().norm().mean());
    }
    std::printf("\n[memory] encoder output (%d, %d) ready for cross-attention\n", n, d);
  }
  const int mlen = static_cast<int>(in.tgt_ids.size());
  std::printf("\n");
  print_tokens("decoder", c.tgt_vocab, in.tgt_ids);
  for (int l2 = 0; l2 < c.n_decoder_layers; ++l2) {
    const auto& L = t.decoder.layers[static_cast<size_t>(l2)];
    std::printf("\n[decoder layer %d] masked self-attention (%d, %d): causal mask hides later tokens\n", l2, mlen, mlen);
    print_attention("decoder self-attention", L.self_attn, tgt_names, tgt_names);
    if (c.has_encoder()) {
      std::printf("[decoder layer %d] cross-attention (%d, %zu): queries from the decoder, keys/values from memory\n",
                  l2, mlen, src_names.size());
      print_attention("cross-attention", L.cross_attn, tgt_names, src_names);
    }
  }
  std::printf("\n[output] logits (%d, %d) → softmax; next-token predictions:\n", mlen, c.tgt_vocab.size());
  for (int i = 0; i < mlen; ++i) {
    std::vector<std::pair<float, int>> top;
    for (int v = 0; v < c.tgt_vocab.size(); ++v) top.push_back({t.decoder.probs(i, v), v});
    std::partial_sort(top.begin(), top.begin() + std::min(3, c.tgt_vocab.size()), top.end(), std::greater<>());
    std::printf("  after %-8s →", tgt_names[static_cast<size_t>(i)].c_str());
    for (int k = 0; k < std::min(3, c.tgt_vocab.size()); ++k)
      std::printf("  %s %.3f", c.tgt_vocab.token(top[static_cast<size_t>(k)].second).c_str(), top[static_cast<size_t>(k)].first);
    std::printf("\n");
  }
  return 0;
}

STEPFORMER_COMMAND(reg_trace, "trace",
                  "stepformer trace --model M --src \"...\" [--tgt \"...\"] [--no-pe] [--no-causal] --out T.safetensors\n"
                  "    run (teacher-forced on --tgt) and write every recorded tensor", cmd_trace);
STEPFORMER_COMMAND(reg_walk, "walk", "stepformer walk --model M --src \"...\" [--tgt \"...\"]\n    a walk-through of one run in the terminal", cmd_walk);

}  // namespace sf::cli
