// `stepformer trace` (write every recorded tensor) and `stepformer walk` (the terminal walk-through).
#include <algorithm>
#include <cmath>
#include <memory>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "cli/masked.h"
#include "analysis/ablation.h"
#include "analysis/logit_lens.h"
#include "io/checkpoint.h"
#include "paths.h"
#include "io/trace_export.h"
#include "commands.h"
#include "stepper/run.h"
#include "stepper/session.h"
#include "stepper/trace_select.h"

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
  auto m = load_model(find_model(a.str("--model")));
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
  std::printf("%-9s", label);
  for (size_t i = 0; i < ids.size(); ++i) std::printf(" %s(%d)", v.token(ids[i]).c_str(), ids[i]);
  std::printf("\n");
}

// One cell of the text heatmap: shade ∝ √weight, so a weight of 0.1 is already visible while the
// order of weights is kept; 0 prints as a dot.
const char* shade(float w) {
  static const char* levels[] = {"· ", "░ ", "░░", "▒ ", "▒▒", "▓ ", "▓▓", "█ ", "██"};
  if (w <= 0.0f) return levels[0];
  int i = 1 + static_cast<int>(std::sqrt(std::min(w, 1.0f)) * 7.999f);
  return levels[std::clamp(i, 1, 8)];
}

std::string fit(const std::string& s, size_t n) {
  // Pads or cuts to n display columns (tokens are ASCII or short UTF-8).
  std::string out = s.size() > n ? s.substr(0, n) : s;
  return out + std::string(n - std::min(n, out.size()), ' ');
}

// Column labels get two characters: special tokens become one letter (<s> S, </s> E, <pad> P,
// <unk> ?), so a label never runs into the next column.
std::string short_label(const std::string& t) {
  if (t == "<s>") return "S";
  if (t == "</s>") return "E";
  if (t == "<pad>") return "P";
  if (t == "<unk>") return "?";
  return t.size() > 2 ? t.substr(0, 2) : t;
}

// Every head of one attention, side by side: rows are queries, columns keys.
void print_heads(const std::string& title, const AttentionTrace& a, const std::vector<std::string>& q,
                 const std::vector<std::string>& k) {
  std::printf("  %s — %d heads; rows: queries, columns: keys; shade ∝ √weight, · = 0 (masked)\n", title.c_str(),
              a.n_heads);
  std::printf("  %-7s", "");
  for (int h = 0; h < a.n_heads; ++h) std::printf("%s  ", fit("head " + std::to_string(h), 2 * k.size()).c_str());
  std::printf("\n  %-7s", "");
  for (int h = 0; h < a.n_heads; ++h) {
    for (auto& key : k) std::printf("%s", fit(short_label(key), 2).c_str());
    std::printf("  ");
  }
  std::printf("\n");
  for (size_t i = 0; i < q.size(); ++i) {
    std::printf("  %s", fit(q[i], 7).c_str());
    for (int h = 0; h < a.n_heads; ++h) {
      const Mat& w = a.head_weights(0, h);
      for (size_t j = 0; j < k.size(); ++j)
        std::printf("%s", shade(w(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))));
      std::printf("  ");
    }
    std::printf("\n");
  }
}

std::vector<std::string> names(const Vocab& v, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(v.token(id));
  return out;
}

// lens.logits (points, m, V): the logit lens at every residual-stream point, in the order of
// analysis/residual_points.h; metadata lens.points names them, lens.readout says what was applied.
void append_lens(const Model& m, const Trace& t, TensorFile& f) {
  const LogitLens lens = logit_lens(m, t);
  if (lens.logits.empty()) return;
  const Mat& first = lens.logits.front();
  Mat all(static_cast<Eigen::Index>(lens.logits.size()) * first.rows(), first.cols());  // (points·m, V)
  std::string labels;
  for (size_t p = 0; p < lens.logits.size(); ++p) {
    all.middleRows(static_cast<Eigen::Index>(p) * first.rows(), first.rows()) = lens.logits[p];
    labels += (p ? "," : "") + point_label(lens.points[p]);
  }
  f.add("lens.logits", Tensor::from_mat(all, {static_cast<int64_t>(lens.logits.size()), first.rows(), first.cols()}));
  f.metadata["lens.points"] = labels;
  f.metadata["lens.readout"] = lens_readout_description(m.config);
}

}  // namespace

static int cmd_trace(int argc, char** argv) {
  Args a(argc, argv, 2, {"--no-pe", "--no-causal", "--lens"},
         {"--model", "--src", "--tgt", "--out", "--ablate", "--ablate-mode", "--only"});
  a.require("--out");
  if (a.ok() && a.has("--ablate-mode") && !a.has("--ablate")) {
    std::cerr << "stepformer trace: option --ablate-mode applies to --ablate only\n";
    return 2;
  }
  if (a.ok() && a.get("--model"))
    if (const int code = check_output("trace", "--out", a.str("--out"), {{"--model", a.str("--model")}})) return code;
  // --only REGEX: the names it finds, checked before the model is loaded (a bad pattern is a usage error).
  std::optional<TraceSelection> only;
  if (a.ok() && a.has("--only")) {
    auto sel = parse_trace_selection(a.str("--only"));
    if (!sel) {
      std::cerr << "stepformer trace: " << sel.error() << "\n";
      return 2;
    }
    only = std::move(*sel);
  }
  auto l = load_and_prepare(a, "trace");
  if (!l) return a.ok() ? 1 : 2;
  RunOptions opt;
  opt.positional_encoding = !a.has("--no-pe");
  opt.causal_mask = !a.has("--no-causal");
  if (only) {
    std::vector<std::string> names = trace_names(l->model, l->input, opt);
    if (a.has("--lens")) names.push_back("lens.logits");
    if (auto picked = selected_names(*only, names); !picked) {
      std::cerr << "stepformer trace: " << picked.error() << "\n";
      return 2;
    }
  }
  NameFilter keep;
  if (only) keep = [&](const std::string& name) { return (*only)(name); };
  Trace t;
  std::string ablation_note;
  if (a.has("--ablate")) {
    auto targets = parse_ablation(l->model, a.str("--ablate"));
    auto mode = parse_ablation_mode(a.str("--ablate-mode", "zero"));
    if (!targets || !mode) {
      std::cerr << "stepformer trace: " << (targets ? mode.error() : targets.error()) << "\n";
      return 1;
    }
    auto r = run_ablation(l->model, l->input, *targets, *mode, opt);
    if (!r) {
      std::cerr << "stepformer trace: " << r.error() << "\n";
      return 1;
    }
    const Vocab& v = l->model.config.has_decoder() ? l->model.config.tgt_vocab : l->model.config.src_vocab;
    char line[512];
    std::snprintf(line, sizeof line,
                  "ablated %s (%s) at position %d: top token %s (p %.4f) -> %s (p %.4f), "
                  "KL(clean || ablated) %.6g nats",
                  a.str("--ablate").c_str(), to_string(*mode), r->position, v.token(r->clean_top).c_str(),
                  r->clean_probs[static_cast<size_t>(r->clean_top)], v.token(r->ablated_top).c_str(),
                  r->ablated_probs[static_cast<size_t>(r->ablated_top)], r->kl);
    ablation_note = line;
    t = std::move(r->ablated);
  } else if (only) {
    t = run_selected(l->model, l->input, opt, *only);  // records what the selection needs
  } else {
    t = run_forward(l->model, l->input, opt);
  }
  TensorFile f;
  f.metadata["stepformer.config"] = config_to_json(l->model.config);
  f.metadata["src"] = a.str("--src");
  f.metadata["tgt"] = a.str("--tgt");
  if (a.has("--ablate")) {
    f.metadata["ablate"] = a.str("--ablate");
    f.metadata["ablate.mode"] = a.str("--ablate-mode", "zero");
  }
  if (only) f.metadata["only"] = only->pattern;
  append_trace_tensors(l->model, t, f, "", keep);
  if (a.has("--lens") && (!only || (*only)("lens.logits"))) append_lens(l->model, t, f);
  if (auto ok = write_safetensors(a.str("--out"), f); !ok) {
    std::cerr << "stepformer trace: " << ok.error() << "\n";
    return 1;
  }
  std::cout << "wrote " << f.tensors.size() << " tensors to " << a.str("--out") << "\n";
  if (!ablation_note.empty()) std::cout << ablation_note << "\n";
  if (!l->model.config.has_decoder()) print_masked_predictions(l->model, l->input.src_ids, t.encoder.logits);
  return 0;
}

namespace {

// The model in one line, then its input.
void print_model_and_input(const Model& model, const PreparedInput& in) {
  const Config& c = model.config;
  std::printf("model: %s, %s-LN, d_model %d, %d heads (d_k %d), d_ff %d, %d+%d layers, %s PE, %lld parameters\n\n",
              to_string(c.arch), to_string(c.norm), c.d_model, c.n_heads, c.d_k(), c.d_ff, c.n_encoder_layers,
              c.n_decoder_layers, to_string(c.positional), static_cast<long long>(count_params(model.weights, c)));
  if (c.has_encoder())
    print_tokens("source", c.src_vocab, in.src_ids);
  else
    print_tokens("prompt", c.tgt_vocab, in.tgt_ids);
}

// Each decoding step's choice, its runners-up and the cache's size; an encoder-only model's
// masked-LM predictions instead.
void print_steps(const Model& model, const Session& session, Strategy strategy) {
  const Config& c = model.config;
  if (!c.has_decoder()) {
    std::printf("\n[masked-LM head] an encoder-only model does not decode: it predicts every position at once\n");
    print_masked_predictions(model, session.input().src_ids, session.encoder()->trace.logits);
    return;
  }
  std::printf("\n[decode] %s, one token per step, K/V of earlier tokens read from the cache\n", to_string(strategy));
  for (auto& st : session.steps()) {
    std::printf("  step %2d  → %-6s p=%.3f   next best:", st->step, c.tgt_vocab.token(st->chosen).c_str(),
                st->chosen_prob);
    for (size_t k = 1; k < std::min<size_t>(st->top.size(), 3); ++k)
      std::printf(" %s %.3f", c.tgt_vocab.token(st->top[k].id).c_str(), st->top[k].prob);
    std::printf("   cache %lld B\n", static_cast<long long>(st->cache_bytes));
  }
  std::printf("  output: %s\n", session.text().c_str());
}

// The input of the whole run again, teacher-forced on the decoded output (without </s>); the
// decoder's own input when that does not fit.
PreparedInput forced_on_output(const Model& model, const Session& session) {
  const Config& c = model.config;
  const PreparedInput& in = session.input();
  std::vector<int> out_ids = session.tokens();
  if (!out_ids.empty() && out_ids.back() == c.tgt_vocab.eos()) out_ids.pop_back();
  PreparedInput full = in;
  if (!c.has_decoder())
    full.tgt_ids.clear();
  else if (c.has_encoder())
    full.tgt_ids = with_bos(c.tgt_vocab, out_ids);
  else
    full.tgt_ids.insert(full.tgt_ids.end(), out_ids.begin(), out_ids.end());
  if (!check_ids(model, full.tgt_ids, false)) full.tgt_ids = in.tgt_ids;
  return full;
}

// The encoder's formula, then each layer's heads and the residual stream's mean norm after it.
void print_encoder_walk(const Config& c, const EncoderTrace& t, const std::vector<std::string>& src_names) {
  const int d = c.d_model, n = static_cast<int>(src_names.size());
  const std::string embed = c.scale_embeddings ? "E[id]·√" + std::to_string(d) : std::string("E[id]");
  std::printf("\n[encoder] x = %s + p_t%s → (%d, %d); per layer %s\n", embed.c_str(),
              c.n_token_types > 0 ? " + T[segment]" : "", n, d,
              c.norm == NormPlacement::Post ? "x = LN(x + Attn(x)), x = LN(x + FFN(x))"
                                            : "x = x + Attn(LN(x)), x = x + FFN(LN(x)); final LN");
  for (int i = 0; i < c.n_encoder_layers; ++i) {
    const auto& L = t.layers[static_cast<size_t>(i)];
    print_heads("encoder layer " + std::to_string(i) + " self-attention", L.self_attn, src_names, src_names);
    std::printf("  residual stream after layer %d: mean ‖x‖ = %.2f\n\n", i, L.ffn_block.output.rowwise().norm().mean());
  }
}

// Each decoder layer's masked self-attention and cross-attention heads.
void print_decoder_walk(const Config& c, const DecoderTrace& t, const std::vector<std::string>& tgt_names,
                        const std::vector<std::string>& src_names) {
  std::printf("[decoder] input <s>%s + output (%d tokens); masked self-attention sees only earlier tokens\n",
              c.has_encoder() ? "" : " + prompt", static_cast<int>(tgt_names.size()));
  for (int i = 0; i < c.n_decoder_layers; ++i) {
    const auto& L = t.layers[static_cast<size_t>(i)];
    print_heads("decoder layer " + std::to_string(i) + " masked self-attention", L.self_attn, tgt_names, tgt_names);
    if (c.has_encoder())
      print_heads("decoder layer " + std::to_string(i) + " cross-attention (queries: decoder, keys: source)",
                  L.cross_attn, tgt_names, src_names);
    std::printf("\n");
  }
}

}  // namespace

static int cmd_walk(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--model", "--src", "--tgt"});
  auto l = load_and_prepare(a, "walk");
  if (!l) return a.ok() ? 1 : 2;
  auto model = std::make_shared<const Model>(std::move(l->model));
  const Config& c = model->config;

  // 1. Decode: greedy, or forced on --tgt, with the KV cache, step by step.
  DecodeSettings ds;
  if (a.get("--tgt") && !a.str("--tgt").empty()) ds.strategy = Strategy::Forced;
  auto session = Session::create(model, a.str("--src"), a.str("--tgt"), ds, /*use_cache=*/true);
  if (!session) {
    std::cerr << "stepformer walk: " << session.error() << "\n";
    return 1;
  }
  session->run_to_end();
  print_model_and_input(*model, session->input());
  print_steps(*model, *session, ds.strategy);

  // 2. The whole run again, teacher-forced on the output, to draw full attention maps (the same
  //    numbers as the cached steps, within 1e-5: tests/session_test.cpp checks it).
  const PreparedInput full = forced_on_output(*model, *session);
  Trace t = run_forward(*model, full);
  const std::vector<std::string> tgt_names = names(c.tgt_vocab, full.tgt_ids);
  std::vector<std::string> src_names;
  if (c.has_encoder()) {
    src_names = names(c.src_vocab, session->input().src_ids);
    print_encoder_walk(c, t.encoder, src_names);
  }
  if (c.has_decoder()) print_decoder_walk(c, t.decoder, tgt_names, src_names);
  return 0;
}

STEPFORMER_COMMAND(reg_trace, "trace",
                   "stepformer trace --model M --src \"...\" [--tgt \"...\"] [--no-pe] [--no-causal] [--lens]\n"
                   "    [--ablate L.H,... [--ablate-mode zero|mean]] [--only REGEX] --out T.safetensors\n"
                   "    run (teacher-forced on --tgt) and write every recorded tensor (or those --only selects);\n"
                   "    with --ablate, of the run with those heads or sublayers ablated",
                   "options:\n"
                   "  --model M            the model: a .safetensors file or a Hugging Face folder (required)\n"
                   "  --src \"...\"          the source text (the prompt, for a decoder-only model) (required)\n"
                   "  --tgt \"...\"          the target text the decoder is teacher-forced on\n"
                   "  --no-pe              leave out the positional encoding (an experiment)\n"
                   "  --no-causal          leave out the decoder's causal mask (an experiment)\n"
                   "  --lens               also write lens.logits (points, m, V): the logit lens after the embedding\n"
                   "                       and after every sublayer (docs/trace-names.md)\n"
                   "  --ablate LIST        ablate these heads or sublayers, comma-separated: L.H (head H of layer\n"
                   "                       L's self-attention), L.xH (a cross-attention head), L.attn, L.cross,\n"
                   "                       L.mlp (whole sublayers); the decoder's, or an encoder-only model's\n"
                   "                       encoder's; prints the top-token change and KL(clean || ablated)\n"
                   "  --ablate-mode M      zero (default) or mean (each ablated column set to its mean over the\n"
                   "                       run's positions) (docs/inspect.md)\n"
                   "  --only REGEX         write only the tensors whose names the regular expression finds (as grep:\n"
                   "                       'layers\\.3\\.self_attn\\.weights', '^logits$'), and record only what they\n"
                   "                       need: a long input's trace then holds about what it writes\n"
                   "  --out T.safetensors  where to write the tensors (names in docs/trace-names.md) (required)\n"
                   "example:\n"
                   "  stepformer trace --model assets/models/copy-preln.safetensors --src \"1 2 3\" --tgt \"1 2 3\" "
                   "--out /tmp/t.safetensors\n",
                   cmd_trace);
STEPFORMER_COMMAND(
    reg_walk, "walk",
    "stepformer walk --model M --src \"...\" [--tgt \"...\"]\n    a walk-through of one run in the terminal",
    "options:\n"
    "  --model M            the model: a .safetensors file or a Hugging Face folder (required)\n"
    "  --src \"...\"          the source text (the prompt, for a decoder-only model) (required)\n"
    "  --tgt \"...\"          force the decode on this target text instead of greedy decoding\n"
    "example:\n"
    "  stepformer walk --model assets/models/reverse-preln.safetensors --src \"1 2 3\"\n",
    cmd_walk);

}  // namespace sf::cli
