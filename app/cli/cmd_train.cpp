// `stepformer train`: trains a model on a toy task, with a progress bar; Ctrl-C writes a
// checkpoint that `--resume` continues bit-identically.
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "args.h"
#include "commands.h"
#include "analysis/head_detector.h"
#include "train/trainer.h"

namespace sf::cli {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted.store(true); }

std::string stem(const std::string& out) {
  const std::string ext = ".safetensors";
  if (out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0)
    return out.substr(0, out.size() - ext.size());
  return out;
}

std::string clock_text(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "--:--";
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

const char* kTrainUsage =
    "usage: stepformer train --task T --norm pre|post [--arch encoder-decoder|decoder-only]\n"
    "         [--layers N | --encoder-layers N --decoder-layers N] [--d-model D] [--heads H] [--d-ff F]\n"
    "         [--activation relu|gelu] [--positional sinusoidal|learned]\n"
    "         [--warmup N [--factor F] | --constant-lr X] [--cooldown N] [--clip C] [--label-smoothing E]\n"
    "         [--dropout P]\n"
    "         [--batch B] --steps N --seed S [--threads T] [--min-len A --max-len B --symbols K]\n"
    "         [--eval-every N] [--eval-examples N] [--final-eval-examples N] [--probe-every N]\n"
    "         [--checkpoint-every N] [--keep-checkpoint] [--quiet] --out M.safetensors\n"
    "       stepformer train --resume M.ckpt.safetensors [--steps N] [--out M.safetensors] [--threads T]\n";

const char* kHelp =
    "options (a new run):\n"
    "  --task T             copy, reverse, sort, add, dates, copy-lm, en-de or en-lm (docs/training.md)\n"
    "                       (required)\n"
    "  --norm pre|post      LayerNorm placement (default pre)\n"
    "  --arch encoder-decoder|decoder-only  (default: the task's own)\n"
    "  --layers N           encoder and decoder layers each (default 2), or\n"
    "  --encoder-layers N, --decoder-layers N  separately\n"
    "  --d-model D          model width (default 64)\n"
    "  --heads H            attention heads (default 4)\n"
    "  --d-ff F             feed-forward width (default 4·D; 0: attention-only layers, decoder-only tasks)\n"
    "  --activation relu|gelu, --positional sinusoidal|learned  (defaults relu, sinusoidal)\n"
    "  --warmup N           warm-up steps of the inverse-square-root schedule (default 400)\n"
    "  --factor F           the schedule's factor (default 1)\n"
    "  --constant-lr X      a constant learning rate instead of the schedule\n"
    "  --cooldown N         fall linearly to 0 over the last N steps (default 0)\n"
    "  --clip C             clip the gradient norm to C (default 0: off)\n"
    "  --label-smoothing E  0 <= E < 1 (default 0.1)\n"
    "  --dropout P          dropout probability (default 0)\n"
    "  --batch B            examples per step (default 64)\n"
    "  --steps N            training steps (required)\n"
    "  --seed S             seed of initialisation, batches and dropout (default 1)\n"
    "  --threads T          shards of each batch run in parallel, 1..64 (default 1)\n"
    "  --min-len A, --max-len B, --symbols K  the digit tasks' lengths and alphabet (1, 10, 10)\n"
    "  --eval-every N       held-out exact match every N steps (default 250; 0: off)\n"
    "  --eval-examples N    examples per evaluation (default 200)\n"
    "  --final-eval-examples N  examples of the final evaluation (default 1000)\n"
    "  --probe-every N      record stream norms, attention entropy and head scores every N steps (default 50; 0: off)\n"
    "  --checkpoint-every N write M.ckpt.safetensors every N steps (default 500; 0: off)\n"
    "  --keep-checkpoint    keep the checkpoint after a successful run\n"
    "  --quiet              no progress bar\n"
    "  --out M.safetensors  the model; M.metrics.json and M.ckpt.safetensors go next to it (required)\n"
    "options (continuing):\n"
    "  --resume M.ckpt.safetensors  continue bit-identically; with --steps N, --out, --threads,\n"
    "                       --checkpoint-every, --keep-checkpoint, --quiet\n"
    "Ctrl-C saves the checkpoint and exits with 130. Every file is written to a temporary file,\n"
    "flushed and renamed, so a crash or kill leaves the previous complete file or the new one.\n"
    "examples:\n"
    "  stepformer train --task copy --norm pre --steps 2000 --seed 1 --out /tmp/copy.safetensors\n"
    "  stepformer train --resume /tmp/copy.ckpt.safetensors --steps 3000\n";

}  // namespace

namespace {

// --resume: the checkpoint's trainer, with what a continuation may change (--steps, --threads);
// `out` defaults to the checkpoint's model name. 0, or the exit code.
int resume_training(Args& a, Result<Trainer>& trainer, std::string& out) {
  for (const char* o : {"--task", "--norm", "--arch", "--layers", "--d-model", "--seed", "--batch"})
    if (a.get(o)) {
      std::cerr << "stepformer train: " << o << " cannot change on --resume (the checkpoint holds the options)\n";
      return 2;
    }
  const long long steps = a.integer("--steps", -1, 0, 1LL << 40);
  const long long threads = a.integer("--threads", -1, 1, 64);
  if (!a.ok()) {
    std::cerr << "stepformer train: " << a.error() << "\n" << kTrainUsage;
    return 2;
  }
  trainer = Trainer::resume(a.str("--resume"));
  if (!trainer) {
    std::cerr << "stepformer train: " << trainer.error() << "\n";
    return 1;
  }
  if (steps >= 0) {
    trainer->options().steps = steps;
    trainer->options().schedule.total = steps;
  }
  if (threads > 0) trainer->options().threads = static_cast<int>(threads);
  out = a.str("--out");
  if (out.empty()) {
    std::string r = stem(a.str("--resume"));
    const std::string ck = ".ckpt";
    if (r.size() > ck.size() && r.compare(r.size() - ck.size(), ck.size(), ck) == 0) r.resize(r.size() - ck.size());
    out = r + ".safetensors";
  }
  return 0;
}

// The model's shape of a new run: placement, architecture, sizes, activation and positions.
// 0, or the exit code.
int read_model_options(Args& a, TrainOptions& o) {
  const std::string norm = a.str("--norm", "pre");
  if (norm != "pre" && norm != "post") {
    std::cerr << "stepformer train: --norm expects pre or post, found '" << norm << "'\n";
    return 2;
  }
  o.norm = norm == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  if (auto arch = a.get("--arch")) {
    if (*arch != "encoder-decoder" && *arch != "decoder-only") {
      std::cerr << "stepformer train: --arch expects encoder-decoder or decoder-only, found '" << *arch << "'\n";
      return 2;
    }
    o.arch = *arch == "decoder-only" ? Arch::DecoderOnly : Arch::EncoderDecoder;
    o.arch_set = true;
  }
  const int layers = static_cast<int>(a.integer("--layers", 2, 1, 64));
  o.encoder_layers = static_cast<int>(a.integer("--encoder-layers", layers, 1, 64));
  o.decoder_layers = static_cast<int>(a.integer("--decoder-layers", layers, 1, 64));
  o.d_model = static_cast<int>(a.integer("--d-model", 64, 2, 4096));
  o.n_heads = static_cast<int>(a.integer("--heads", 4, 1, 256));
  o.d_ff = static_cast<int>(a.integer("--d-ff", 4 * o.d_model, 0, 1 << 16));
  const std::string act = a.str("--activation", "relu"), pos = a.str("--positional", "sinusoidal");
  if ((act != "relu" && act != "gelu") || (pos != "sinusoidal" && pos != "learned")) {
    std::cerr << "stepformer train: --activation expects relu|gelu and --positional sinusoidal|learned, found '" << act
              << "', '" << pos << "'\n";
    return 2;
  }
  o.activation = act == "gelu" ? Activation::Gelu : Activation::Relu;
  o.positional = pos == "learned" ? Positional::Learned : Positional::Sinusoidal;
  return 0;
}

// How a new run trains: the learning-rate schedule, regularisation, batches, the task's data and
// the evaluation and probe intervals. 0, or the exit code.
int read_training_options(Args& a, TrainOptions& o) {
  if (a.get("--constant-lr") && (a.get("--warmup") || a.get("--factor"))) {
    std::cerr << "stepformer train: --constant-lr excludes --warmup/--factor\n";
    return 2;
  }
  if (a.get("--constant-lr")) {
    o.schedule.kind = Schedule::Constant;
    o.schedule.rate = a.real("--constant-lr", 1e-3);
  } else {
    o.schedule.kind = Schedule::Warmup;
    o.schedule.warmup = static_cast<int>(a.integer("--warmup", 400, 1, 1 << 30));
    o.schedule.factor = a.real("--factor", 1.0);
  }
  o.schedule.cooldown = static_cast<int>(a.integer("--cooldown", 0, 0, 1 << 30));
  o.clip = static_cast<float>(a.real("--clip", 0.0));
  o.label_smoothing = static_cast<float>(a.real("--label-smoothing", 0.1));
  o.dropout = static_cast<float>(a.real("--dropout", 0.0));
  o.batch = static_cast<int>(a.integer("--batch", 64, 1, 1 << 16));
  o.steps = a.integer("--steps", 0, 0, 1LL << 40);
  o.seed = static_cast<uint64_t>(a.integer("--seed", 1, 0, 1LL << 62));
  o.threads = static_cast<int>(a.integer("--threads", 1, 1, 64));
  o.task_options.min_len = static_cast<int>(a.integer("--min-len", 1, 1, 1000));
  o.task_options.max_len = static_cast<int>(a.integer("--max-len", 10, 1, 1000));
  o.task_options.n_symbols = static_cast<int>(a.integer("--symbols", 10, 2, 10));
  o.eval_every = static_cast<int>(a.integer("--eval-every", 250, 0, 1 << 30));
  o.eval_examples = static_cast<int>(a.integer("--eval-examples", 200, 1, 1 << 20));
  o.final_eval_examples = static_cast<int>(a.integer("--final-eval-examples", 1000, 1, 1 << 20));
  o.probe_every = static_cast<int>(a.integer("--probe-every", 50, 0, 1 << 30));
  if (o.label_smoothing < 0 || o.label_smoothing >= 1 || o.clip < 0) {
    std::cerr << "stepformer train: expected 0 <= --label-smoothing < 1 and --clip >= 0\n";
    return 2;
  }
  return 0;
}

// A new run: the options, then a freshly initialised trainer. 0, or the exit code.
int start_training(Args& a, const std::string& command, Result<Trainer>& trainer, std::string& out) {
  a.require("--task");
  a.require("--steps");
  a.require("--out");
  TrainOptions o;
  o.task = a.str("--task");
  if (const int code = read_model_options(a, o)) return code;
  if (const int code = read_training_options(a, o)) return code;
  o.command = command;
  if (!a.ok()) {
    std::cerr << "stepformer train: " << a.error() << "\n" << kTrainUsage;
    return 2;
  }
  out = a.str("--out");
  trainer = Trainer::create(o);
  if (!trainer) {
    std::cerr << "stepformer train: " << trainer.error() << "\n";
    return 1;
  }
  return 0;
}

using Clock = std::chrono::steady_clock;

// What the training loop did: the tokens it trained on and the time it took.
struct LoopStats {
  int64_t tokens = 0;
  double seconds = 0;
};

// The progress bar's line: steps, loss, accuracy, the last exact match, speed and time left.
std::string progress_line(const Trainer& t, const StepStats& s, int64_t first, double elapsed, int64_t tokens,
                          double last_em) {
  const double done = static_cast<double>(s.step - first);
  const double left = done > 0 ? elapsed / done * static_cast<double>(t.options().steps - s.step) : -1;
  const int width = 24;
  const int filled = t.options().steps ? static_cast<int>(width * s.step / t.options().steps) : width;
  char line[256];
  std::snprintf(line, sizeof line, "[%s%s] step %lld/%lld  loss %.4f  acc %5.1f%%%s  %6.0f tok/s  left %s",
                std::string(static_cast<size_t>(filled), '#').c_str(),
                std::string(static_cast<size_t>(width - filled), '.').c_str(), static_cast<long long>(s.step),
                static_cast<long long>(t.options().steps), s.loss, 100 * s.accuracy,
                last_em >= 0 ? ("  exact " + std::to_string(static_cast<int>(100 * last_em + 0.5)) + "%").c_str() : "",
                elapsed > 0 ? tokens / elapsed : 0.0, clock_text(left).c_str());
  return line;
}

// Steps until the run is finished or Ctrl-C, writing the checkpoint every `checkpoint_every` steps
// and, unless quiet, the progress bar (on a terminal ~5 times a second, else at each evaluation).
LoopStats train_until_done(Trainer& t, const std::string& ckpt, long long checkpoint_every, bool quiet, bool tty) {
  const auto t0 = Clock::now();
  auto last_print = t0;
  const int64_t first = t.steps_done();
  LoopStats r;
  double last_em = -1;
  while (!t.finished() && !g_interrupted.load()) {
    const StepStats s = t.step();
    r.tokens += s.tokens;
    if (s.evaluated) last_em = s.exact_match;
    if (checkpoint_every > 0 && s.step % checkpoint_every == 0) {
      if (auto ok = t.save_checkpoint(ckpt); !ok) std::cerr << "\nstepformer train: " << ok.error() << "\n";
    }
    const auto now = Clock::now();
    const double el = std::chrono::duration<double>(now - t0).count();
    const bool show = tty ? std::chrono::duration<double>(now - last_print).count() > 0.2 || t.finished()
                          : s.evaluated || t.finished();
    if (!quiet && show) {
      last_print = now;
      std::cerr << (tty ? "\r" : "") << progress_line(t, s, first, el, r.tokens, last_em) << (tty ? "\033[K" : "\n")
                << std::flush;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

// Ctrl-C: the checkpoint and the metrics so far, and how to resume. The exit code (130, or 1).
int save_interrupted(Trainer& t, const std::string& ckpt, const std::string& metrics) {
  auto ok = t.save_checkpoint(ckpt);
  if (ok) ok = t.save_metrics(metrics);
  if (!ok) {
    std::cerr << "stepformer train: interrupted; could not save: " << ok.error() << "\n";
    return 1;
  }
  std::cerr << "interrupted at step " << t.steps_done() << "; checkpoint " << ckpt
            << "\nresume with: stepformer train --resume " << ckpt << "\n";
  return 130;
}

// The end of the run: the final evaluation, the model, its metrics and (when checkpointing) the
// last checkpoint, kept only when asked; a summary on stdout. The exit code (0, or 1).
int save_finished(Trainer& t, const std::string& out, const std::string& ckpt, const std::string& metrics,
                  long long checkpoint_every, bool keep_checkpoint, const LoopStats& loop) {
  const EvalResult r = t.final_evaluation(loop.seconds);
  auto ok = t.save_model(out);
  if (ok) ok = t.save_metrics(metrics);
  if (ok && checkpoint_every > 0) ok = t.save_checkpoint(ckpt);
  if (!ok) {
    std::cerr << "stepformer train: " << ok.error() << "\n";
    return 1;
  }
  if (!keep_checkpoint) std::remove(ckpt.c_str());
  const double seconds = loop.seconds;
  std::printf("wrote %s and %s: %lld steps in %.1f s (%.0f target tokens/s), %s %.2f%% on %d held-out %s\n",
              out.c_str(), metrics.c_str(), static_cast<long long>(t.steps_done()), seconds,
              seconds > 0 ? loop.tokens / seconds : 0.0, r.metric.c_str(), 100 * r.exact_match(), r.examples,
              r.by_kind.empty() ? "examples" : "probes");
  for (const auto& [kind, counts] : r.by_kind)
    std::printf("  %s: %d of %d (%.2f%%)\n", kind.c_str(), counts[0], counts[1], 100.0 * counts[0] / counts[1]);
  return 0;
}

}  // namespace

static int cmd_train(int argc, char** argv) {
  Args a(argc, argv, 2, {"--keep-checkpoint", "--quiet"},
         {"--task",
          "--norm",
          "--arch",
          "--layers",
          "--encoder-layers",
          "--decoder-layers",
          "--d-model",
          "--heads",
          "--d-ff",
          "--activation",
          "--positional",
          "--warmup",
          "--factor",
          "--constant-lr",
          "--clip",
          "--label-smoothing",
          "--dropout",
          "--cooldown",
          "--batch",
          "--steps",
          "--seed",
          "--threads",
          "--min-len",
          "--max-len",
          "--symbols",
          "--eval-every",
          "--eval-examples",
          "--final-eval-examples",
          "--probe-every",
          "--checkpoint-every",
          "--out",
          "--resume"});
  std::string command = "stepformer train";
  for (int i = 2; i < argc; ++i) command += std::string(" ") + argv[i];

  // Each step allocates and frees the same large activation blocks; keep them in the heap
  // instead of mmap/munmap-ing them every time (page faults would otherwise be a visible part of every step).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  Result<Trainer> trainer = Error{""};
  std::string out;
  const long long checkpoint_every = a.integer("--checkpoint-every", 500, 0, 1LL << 40);
  if (const int code = a.get("--resume") ? resume_training(a, trainer, out) : start_training(a, command, trainer, out))
    return code;
  // Refused now rather than after an hour of training.
  std::vector<std::pair<std::string, std::string>> inputs;
  if (a.get("--resume")) inputs.emplace_back("--resume", a.str("--resume"));
  if (const int code = check_output("train", "--out", out, inputs)) return code;
  Trainer& t = *trainer;
  t.set_probe(record_head_scores);  // each head's detector scores at the probe steps
  const bool quiet = a.has("--quiet");
  const std::string ckpt = stem(out) + ".ckpt.safetensors";
  const std::string metrics = stem(out) + ".metrics.json";
  const Config& c = t.model().config;
  // The handler is in place before the "training" line, so Ctrl-C from then on always saves.
  g_interrupted.store(false);
  auto previous = std::signal(SIGINT, on_sigint);
  std::cerr << "training " << t.task().name << " (" << to_string(c.arch) << ", " << to_string(c.norm) << "-LN, d_model "
            << c.d_model << ", " << c.n_heads << " heads, " << c.n_encoder_layers << "+" << c.n_decoder_layers
            << " layers, " << count_params(t.model().weights, c) << " parameters), steps " << t.steps_done() << " -> "
            << t.options().steps << ", threads " << t.options().threads << "\n";
  const bool tty = isatty(2);
  const LoopStats loop = train_until_done(t, ckpt, checkpoint_every, quiet, tty);
  std::signal(SIGINT, previous);
  if (tty && !quiet) std::cerr << "\n";
  if (g_interrupted.load()) return save_interrupted(t, ckpt, metrics);
  return save_finished(t, out, ckpt, metrics, checkpoint_every, a.has("--keep-checkpoint"), loop);
}

STEPFORMER_COMMAND(
    reg_train, "train",
    "stepformer train --task copy|reverse|sort|add|dates|copy-lm|en-de|en-lm --norm pre|post --steps N --seed S "
    "--out M.safetensors [options]\n"
    "    train a model on a toy task (see docs/training.md); Ctrl-C saves a checkpoint\n"
    "stepformer train --resume M.ckpt.safetensors [--steps N]\n    continue from a checkpoint",
    kHelp, cmd_train);

}  // namespace sf::cli
