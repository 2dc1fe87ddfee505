// `stepformer decode` (decode step by step, printing each choice and the cache) and
// `stepformer steps` (the stage sequence a stepper walks through). Both drive a Session, so the
// terminal shows exactly what the explorer shows.
#include <cstdio>
#include <iostream>
#include <memory>

#include "analysis/ablation.h"
#include "args.h"
#include "cli/masked.h"
#include "io/checkpoint.h"
#include "paths.h"
#include "io/trace_export.h"
#include "commands.h"
#include "stepper/session.h"

namespace sf::cli {

namespace {

const std::set<std::string> kFlags = {"--greedy", "--sample", "--no-cache", "--no-pe", "--no-causal"};
const std::set<std::string> kStepsOptions = {"--model",   "--src",    "--tgt",        "--temperature",
                                             "--top-k",   "--top-p",  "--seed",       "--beam",
                                             "--max-len", "--ablate", "--ablate-mode"};
const std::set<std::string> kDecodeOptions = [] {
  auto o = kStepsOptions;
  o.insert("--out");
  return o;
}();

// The decoding settings from the command line. Strategy: --greedy (default), --sample, --beam W,
// or forced when --tgt is given. Sampling options without --sample are an error, not ignored.
Result<DecodeSettings> parse_settings(Args& a) {
  DecodeSettings s;
  const int chosen = a.has("--greedy") + a.has("--sample") + a.has("--beam") + a.has("--tgt");
  if (chosen > 1)
    return Error{"choose one of --greedy, --sample, --beam W, --tgt \"...\" (forced decoding), found " +
                 std::to_string(chosen)};
  for (const char* o : {"--temperature", "--top-k", "--top-p", "--seed"})
    if (a.has(o) && !a.has("--sample")) return Error{std::string("option ") + o + " applies to --sample only"};
  if (a.has("--sample")) s.strategy = Strategy::Sample;
  if (a.has("--beam")) s.strategy = Strategy::Beam;
  if (a.has("--tgt")) s.strategy = Strategy::Forced;
  // Ranges are checked by validate() against the model, with messages that name the field.
  s.temperature = static_cast<float>(a.real("--temperature", 1.0));
  s.top_k = static_cast<int>(a.integer("--top-k", 0, -1000000, 1000000000));
  s.top_p = static_cast<float>(a.real("--top-p", 1.0));
  s.seed = static_cast<uint64_t>(a.integer("--seed", 0, 0, INT64_MAX));
  s.beam_width = static_cast<int>(a.integer("--beam", 4, -1000000, 1000000));
  s.max_len = static_cast<int>(a.integer("--max-len", 0, -1000000, 1000000));
  s.run.positional_encoding = !a.has("--no-pe");
  s.run.causal_mask = !a.has("--no-causal");
  if (!a.ok()) return Error{a.error()};
  return s;
}

// Loads the model and creates the session; on failure prints the error and sets the exit code
// (2: bad command line, 1: bad input).
std::optional<Session> open_session(const char* cmd, Args& a, int& rc) {
  auto fail = [&](const std::string& msg, int code) {
    std::cerr << "stepformer " << cmd << ": " << msg << "\n";
    rc = code;
    return std::nullopt;
  };
  if (a.ok()) a.require("--model");
  if (a.ok()) a.require("--src");
  if (!a.ok()) return fail(a.error(), 2);
  auto settings = parse_settings(a);
  if (!settings) return fail(settings.error(), 2);
  if (a.has("--ablate-mode") && !a.has("--ablate")) return fail("option --ablate-mode applies to --ablate only", 2);
  if (a.has("--out")) {
    if (const int code = check_output(cmd, "--out", a.str("--out"), {{"--model", a.str("--model")}})) {
      rc = code;
      return std::nullopt;
    }
  }
  auto m = load_model(find_model(a.str("--model")));
  if (!m) return fail(m.error(), 1);
  bool use_cache = !a.has("--no-cache");
  if (a.has("--ablate")) {
    auto targets = parse_ablation(*m, a.str("--ablate"));
    if (!targets) return fail(targets.error(), 1);
    auto mode = parse_ablation_mode(a.str("--ablate-mode", "zero"));
    if (!mode) return fail(mode.error(), 1);
    settings->run.intervention = ablation(*m, *targets, *mode);
    // A mean over one cached step's row would be that row: every step runs the whole sequence.
    if (*mode == EditMode::Mean && use_cache) {
      std::cerr << "note: mean ablation averages over the run's positions, so every step recomputes the whole "
                   "sequence (as --no-cache)\n";
      use_cache = false;
    }
  }
  auto s = Session::create(std::make_shared<const Model>(std::move(*m)), a.str("--src"), a.str("--tgt"), *settings,
                           use_cache);
  if (!s) return fail(s.error(), 1);
  for (const std::string& w : s->warnings()) std::cerr << "warning: " << w << "\n";
  return std::move(*s);
}

std::string bytes_str(int64_t b) {
  char buf[32];
  if (b < 10 * 1024)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  else if (b < 10 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024.0));
  return buf;
}

// The input as read, unknown words flagged: "a [xyz→<unk>] c".
std::string flagged(const Tokenized& t, const Vocab& v) {
  std::string out;
  size_t u = 0;
  for (size_t i = 0; i < t.ids.size(); ++i) {
    if (i) out += ' ';
    if (u < t.unknown.size() && t.unknown[u] == static_cast<int>(i)) {
      out += "[" + t.pieces[i] + "→" + v.token(t.ids[i]) + "]";
      ++u;
    } else {
      out += v.token(t.ids[i]);
    }
  }
  return out;
}

void print_header(const Session& s) {
  const Config& c = s.model().config;
  const DecodeSettings& d = s.settings();
  std::printf("model: %s, %s-LN, d_model %d, %d heads, %d+%d layers, vocab %d\n", to_string(c.arch), to_string(c.norm),
              c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.tgt_vocab.size());
  std::printf("%-8s%s (%zu tokens)\n", c.has_encoder() ? "source:" : "prompt:",
              flagged(s.input().src, c.has_encoder() ? c.src_vocab : c.tgt_vocab).c_str(), s.input().src.ids.size());
  if (d.strategy == Strategy::Forced) std::printf("target: %s\n", flagged(s.input().tgt, c.tgt_vocab).c_str());
  if (!c.has_decoder()) return;  // encoder-only: no decoding settings apply
  std::printf("decoding: %s", to_string(d.strategy));
  if (d.strategy == Strategy::Sample)
    std::printf(" (temperature %g, top-k %d, top-p %g, seed %llu)", d.temperature, d.top_k, d.top_p,
                static_cast<unsigned long long>(d.seed));
  if (d.strategy == Strategy::Beam) std::printf(" (width %d)", d.beam_width);
  std::printf(", KV cache %s%s%s\n", s.use_cache() ? "on" : "off", d.run.positional_encoding ? "" : ", no PE",
              d.run.causal_mask ? "" : ", no causal mask");
}

// decode and steps: opens the session, prints its header and decodes to the end.
std::optional<Session> run_session(const char* cmd, Args& a, int& rc) {
  auto s = open_session(cmd, a, rc);
  if (s) {
    print_header(*s);
    s->run_to_end();
  }
  return s;
}

void print_step(const Session& s, const StepRecord& r) {
  const Vocab& v = s.model().config.tgt_vocab;
  std::string top;
  for (size_t i = 0; i < std::min<size_t>(5, r.top.size()); ++i) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.3f", i ? " | " : "", v.token(r.top[i].id).c_str(), r.top[i].prob);
    top += buf;
  }
  const int rows = r.position0 + static_cast<int>(r.fed.size());
  std::string cache = s.use_cache() ? std::to_string(rows) + " rows, " + bytes_str(r.cache_bytes) : "off";
  std::printf("%4d  %-10s %6.3f  %-52s %s  %.2f ms\n", r.step, v.token(r.chosen).c_str(), r.chosen_prob, top.c_str(),
              cache.c_str(), r.millis);
  if (s.settings().strategy == Strategy::Beam) {
    int pruned = 0;
    for (const BeamCandidate& c : r.candidates) pruned += !c.kept;
    for (size_t b = 0; b < r.beams.size(); ++b)
      std::printf("        beam %zu  %8.3f  %s%s\n", b, r.beams[b].score, v.detokenize(r.beams[b].tokens).c_str(),
                  r.beams[b].finished ? "  (finished)" : "");
    std::printf("        %zu candidates, %d pruned\n", r.candidates.size(), pruned);
  }
  if (s.settings().strategy == Strategy::Sample)
    std::printf("        sampled from %d tokens (mass %.3f), u = %.4f\n", r.sample.kept, r.sample.kept_mass,
                r.sample.u);
}

// The rows fed at this step: the whole recording with the cache, the last m rows without; so a
// cached and an uncached run write the same shapes and can be compared file to file.
Tensor new_rows(const Mat& m, const StepRecord& r) {
  return Tensor::from_mat(m.bottomRows(static_cast<Eigen::Index>(r.fed.size())));
}

Tensor new_query_rows(const AttentionTrace& a, const StepRecord& r) {
  const int m = static_cast<int>(r.fed.size());
  std::vector<Mat> heads;
  for (const Mat& w : a.weights) heads.push_back(w.bottomRows(m));
  return stack_heads(heads, a.n_heads, 0);
}

TensorFile recording(const Session& s) {
  const Model& m = s.model();
  TensorFile f;
  f.metadata["stepformer.config"] = config_to_json(m.config);
  f.metadata["strategy"] = to_string(s.settings().strategy);
  f.metadata["cache"] = s.use_cache() ? "on" : "off";
  if (auto e = s.encoder()) {
    f.add("src_ids", Tensor::from_ids(e->src_ids));
    f.add("encoder.output", Tensor::from_mat(e->memory));
    if (e->trace.logits.size() > 0) {  // encoder-only with an MLM head
      f.add("logits", Tensor::from_mat(e->trace.logits));
      f.add("log_probs", Tensor::from_mat(e->trace.log_probs));
    }
  }
  for (const auto& rec : s.steps()) {
    const std::string p = "steps." + std::to_string(rec->step) + ".";
    const auto whole = s.whole_trace(rec->step);  // every fed row (a kept step holds the last)
    const DecoderTrace& t = *whole;
    f.add(p + "fed", Tensor::from_ids(rec->fed));
    f.add(p + "chosen", Tensor::from_ids({rec->chosen}));
    f.add(p + "logits", new_rows(t.logits, *rec));
    f.add(p + "log_probs", new_rows(log_probs_of(t), *rec));
    for (size_t l = 0; l < t.layers.size(); ++l) {
      const std::string lp = p + "decoder.layers." + std::to_string(l);
      f.add(lp + ".self_attn.weights", new_query_rows(t.layers[l].self_attn, *rec));
      if (m.config.has_encoder()) f.add(lp + ".cross_attn.weights", new_query_rows(t.layers[l].cross_attn, *rec));
    }
  }
  if (m.config.has_decoder())
    f.add("tokens", Tensor::from_ids(s.steps().empty() ? std::vector<int>{} : s.steps().back()->tokens));
  return f;
}

#define SF_DECODE_OPTIONS                                                                            \
  "  --model M          the model to run: a .safetensors file or a Hugging Face folder (required)\n" \
  "  --src \"...\"        the source text (the prompt, for a decoder-only model) (required)\n"       \
  "  --greedy           take the most probable token at each step (the default)\n"                   \
  "  --sample           sample from the softmax; with --temperature T (> 0, default 1),\n"           \
  "                     --top-k K (0 = all), --top-p P (nucleus, default 1), --seed S (default 0)\n" \
  "  --beam W           beam search of width W (>= 1)\n"                                             \
  "  --tgt \"...\"        forced decoding (teacher forcing) on this target text\n"                   \
  "  --max-len N        stop after N generated tokens (default: the model's max_len)\n"              \
  "  --no-cache         recompute every step instead of reading K/V from the cache\n"                \
  "  --no-pe            leave out the positional encoding (an experiment)\n"                         \
  "  --no-causal        leave out the decoder's causal mask (an experiment)\n"                       \
  "  --ablate LIST      ablate heads or sublayers: L.H, L.xH, L.attn, L.cross, L.mlp (as trace)\n"   \
  "  --ablate-mode M    zero (default) or mean (over the run's positions; implies --no-cache)\n"

const char* kDecodeHelp =
    "options:\n" SF_DECODE_OPTIONS
    "  --out T.safetensors  write every step's logits, log-probabilities and attention weights\n"
    "example:\n"
    "  stepformer decode --model assets/models/reverse-preln.safetensors --src \"1 2 3 4\" --beam 3\n";

const char* kStepsHelp = "options:\n" SF_DECODE_OPTIONS
                         "example:\n"
                         "  stepformer steps --model assets/models/copy-preln.safetensors --src \"1 2 3\"\n";

}  // namespace

static int cmd_decode(int argc, char** argv) {
  Args a(argc, argv, 2, kFlags, kDecodeOptions);
  int rc = 0;
  auto s = run_session("decode", a, rc);
  if (!s) return rc;
  if (!s->model().config.has_decoder()) {  // encoder-only: predictions per position, no steps
    print_masked_predictions(s->model(), s->encoder()->src_ids, s->encoder()->trace.logits);
    if (a.has("--out")) {
      TensorFile f = recording(*s);
      f.metadata["src"] = a.str("--src");
      if (auto ok = write_safetensors(a.str("--out"), f); !ok) {
        std::cerr << "stepformer decode: " << ok.error() << "\n";
        return 1;
      }
      std::printf("wrote %zu tensors to %s\n", f.tensors.size(), a.str("--out").c_str());
    }
    return 0;
  }
  std::printf("step  token           p  top-5 alternatives                                   KV cache\n");
  for (const auto& rec : s->steps()) print_step(*s, *rec);
  const auto& last = *s->steps().back();
  s->jump(s->stage_count() - 1);
  std::printf("output: %s\n", s->text().c_str());
  std::printf("stopped: %s after %zu steps\n", last.finish_reason.c_str(), s->steps().size());
  const CostReport c = s->cost();
  std::printf(
      "cost at the last step (t = %d): %.3g FLOPs with the cache, %.3g recomputing; KV cache %s "
      "(self %s + cross %s)\n",
      c.t, static_cast<double>(c.step_cached.total()), static_cast<double>(c.step_uncached.total()),
      bytes_str(c.kv_self_bytes + c.kv_cross_bytes).c_str(), bytes_str(c.kv_self_bytes).c_str(),
      bytes_str(c.kv_cross_bytes).c_str());
  if (a.has("--out")) {
    TensorFile f = recording(*s);
    f.metadata["src"] = a.str("--src");
    f.metadata["tgt"] = a.str("--tgt");
    if (auto ok = write_safetensors(a.str("--out"), f); !ok) {
      std::cerr << "stepformer decode: " << ok.error() << "\n";
      return 1;
    }
    std::printf("wrote %zu tensors to %s\n", f.tensors.size(), a.str("--out").c_str());
  }
  return 0;
}

static int cmd_steps(int argc, char** argv) {
  Args a(argc, argv, 2, kFlags, kStepsOptions);
  int rc = 0;
  auto s = run_session("steps", a, rc);
  if (!s) return rc;
  for (const Stage& st : s->stages()) {
    std::printf("%4d  %-7s %-6s %s\n", st.index, to_string(st.side),
                st.step >= 0 ? ("t=" + std::to_string(st.step)).c_str() : "", st.title.c_str());
    std::printf("            %s\n", st.formula.c_str());
    if (!st.note.empty()) std::printf("            %s\n", st.note.c_str());
  }
  return 0;
}

STEPFORMER_COMMAND(reg_decode, "decode",
                   "stepformer decode --model M --src \"...\" [--greedy | --sample [--temperature T] [--top-k K]\n"
                   "    [--top-p P] [--seed S] | --beam W | --tgt \"...\"] [--no-cache] [--max-len N] [--no-pe]\n"
                   "    [--no-causal] [--ablate L.H,... [--ablate-mode zero|mean]] [--out T.safetensors]\n"
                   "    decode token by token: each step's token, probability, top-5 alternatives and KV cache;\n"
                   "    --tgt forces the output (teacher forcing); --out writes steps.{t}.logits and the\n"
                   "    attention weights of every step (the fed rows), so runs can be compared file to file",
                   kDecodeHelp, cmd_decode);
STEPFORMER_COMMAND(reg_steps, "steps",
                   "stepformer steps --model M --src \"...\" [decode options as for decode]\n"
                   "    list the stage sequence of a stepped run: title, formula with shapes, cache note",
                   kStepsHelp, cmd_steps);

}  // namespace sf::cli
