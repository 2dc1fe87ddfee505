// `stepformer evaluate`: a trained model's held-out figure on its task — exact match of greedy
// decoding, or a language model's probe accuracy — on the task's validation split (the examples
// `stepformer train` reports at its end), with the first few mistakes.
#include <cstdio>
#include <iostream>

#include "args.h"
#include "commands.h"
#include "io/checkpoint.h"
#include "paths.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace sf::cli {

namespace {

const char* kEvaluateUsage = "usage: stepformer evaluate --model M.safetensors --task T [--examples N] [--show K]\n";

std::string joined(const std::vector<std::string>& v, size_t end) {
  std::string s;
  for (size_t i = 0; i < end && i < v.size(); ++i) s += (s.empty() ? "" : " ") + v[i];
  return s;
}

}  // namespace

static int cmd_evaluate(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--model", "--task", "--examples", "--show"});
  const long long n = a.integer("--examples", 1000, 1, 1000000);
  const long long show = a.integer("--show", 5, 0, 1000);
  if (!a.ok() || !a.get("--model") || !a.get("--task")) {
    std::cerr << "stepformer evaluate: " << (!a.ok() ? a.error() : "expected --model and --task") << "\n"
              << kEvaluateUsage;
    return 2;
  }
  auto m = load_model(find_model(a.str("--model")));
  if (!m) {
    std::cerr << "stepformer evaluate: " << m.error() << "\n";
    return 1;
  }
  auto task = make_task(a.str("--task"));
  if (!task) {
    std::cerr << "stepformer evaluate: " << task.error() << "\n";
    return 2;
  }
  if (task->arch != m->config.arch) {
    std::cerr << "stepformer evaluate: task '" << task->name << "' is " << to_string(task->arch) << ", the model is "
              << to_string(m->config.arch) << "\n";
    return 2;
  }
  const std::vector<Example> val = task->sample_many(kValidationSeed, static_cast<int>(n), Split::Validation);
  const EvalResult r = evaluate(*m, val);
  std::printf("%s on %s: %s %.2f%% (%d of %d held-out %s)\n", a.str("--model").c_str(), task->name.c_str(),
              r.metric.c_str(), 100 * r.exact_match(), r.exact, r.examples, r.by_kind.empty() ? "examples" : "probes");
  for (const auto& [kind, counts] : r.by_kind)
    std::printf("  %s: %d of %d (%.2f%%)\n", kind.c_str(), counts[0], counts[1], 100.0 * counts[0] / counts[1]);
  const Vocab& tv = m->config.tgt_vocab;
  for (size_t i = 0; i < r.failures.size() && static_cast<long long>(i) < show; ++i) {
    const int f = r.failures[i];
    if (r.by_kind.empty()) {
      const Example& e = val[static_cast<size_t>(f)];
      std::printf("  wrong: %s\n     want: %s\n     got:  %s\n", task->text(e.src).c_str(), task->text(e.tgt).c_str(),
                  tv.detokenize(r.outputs[static_cast<size_t>(f)]).c_str());
    } else {
      // Probes are numbered across examples: find the example and probe of number f.
      int k = f;
      for (const Example& e : val) {
        if (k >= static_cast<int>(e.probes.size())) {
          k -= static_cast<int>(e.probes.size());
          continue;
        }
        const Probe& p = e.probes[static_cast<size_t>(k)];
        std::printf("  wrong (%s): %s ▸ %s (want one of %s)\n", p.kind.c_str(),
                    joined(e.tgt, static_cast<size_t>(p.at)).c_str(),
                    tv.detokenize(r.outputs[static_cast<size_t>(f)]).c_str(),
                    joined(p.accept, p.accept.size()).c_str());
        break;
      }
    }
  }
  return 0;
}

STEPFORMER_COMMAND(reg_evaluate, "evaluate",
                   "stepformer evaluate --model M.safetensors --task T [--examples N]\n"
                   "    held-out exact match (or a language model's probe accuracy) of a trained model",
                   "options:\n"
                   "  --model M       the model (.safetensors, as `stepformer train` writes it) (required)\n"
                   "  --task T        the task it was trained on (required; see `stepformer train --help`)\n"
                   "  --examples N    held-out examples, the validation split's first N (default 1000, as\n"
                   "                  `stepformer train` reports)\n"
                   "  --show K        print the first K mistakes (default 5)\n"
                   "example:\n"
                   "  stepformer evaluate --model assets/models/en-de-preln.safetensors --task en-de\n",
                   cmd_evaluate);

}  // namespace sf::cli
