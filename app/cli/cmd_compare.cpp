// `stepformer compare`: two models on one input, stepped in lockstep (core/analysis/compare.h) — the
// explorer's compare view in the terminal. Prints the aligned stages, the decoded sequences and the
// per-layer statistics (residual-stream norm, LayerNorm mean/variance, attention entropy per head).
#include <cstdio>
#include <iostream>
#include <memory>

#include "args.h"
#include "io/checkpoint.h"
#include "paths.h"
#include "commands.h"
#include "analysis/compare.h"
#include "analysis/layer_stats.h"

namespace sf::cli {

namespace {

const char* kCompareUsage =
    "usage: stepformer compare --a A.safetensors (--b B.safetensors | --switch) --src \"...\" [--tgt \"...\"]\n"
    "         [--max-len N] [--stages]\n"
    "  --switch   B is A's weights with the LayerNorm placement switched (an experiment)\n"
    "  --stages   print every aligned stage pair, not only the per-layer statistics\n";

void print_stats(const char* name, const Session& s) {
  const ModelStats st = layer_stats(s);
  std::printf("%s: %s-LN, decoded \"%s\"\n", name, to_string(s.model().config.norm), s.text().c_str());
  std::printf("  layer       block            |x| out   LN mean    LN var   entropy per head (nats)\n");
  for (const auto* stack : {&st.encoder, &st.decoder})
    for (const LayerStat& l : *stack)
      for (const BlockStat& b : l.blocks) {
        std::printf("  %s %d   %-16s %8.4f  %8.4f  %8.4f  ", l.side == Side::Encoder ? "enc" : "dec", l.layer,
                    to_string(b.block), b.mean_norm_out(), b.mean_ln_mean(), b.mean_ln_var());
        for (double e : b.entropy) std::printf(" %.4f", e);
        std::printf("\n");
      }
}

}  // namespace

static int cmd_compare(int argc, char** argv) {
  Args a(argc, argv, 2, {"--switch", "--stages"}, {"--a", "--b", "--src", "--tgt", "--max-len"});
  if (a.ok()) a.require("--a");
  if (a.ok()) a.require("--src");
  if (a.ok() && a.has("--b") == a.has("--switch")) {
    std::cerr << "stepformer compare: expected exactly one of --b B.safetensors and --switch\n" << kCompareUsage;
    return 2;
  }
  DecodeSettings d;
  d.max_len = static_cast<int>(a.integer("--max-len", 0, 0, 100000));
  if (!a.ok()) {
    std::cerr << "stepformer compare: " << a.error() << "\n" << kCompareUsage;
    return 2;
  }
  if (a.has("--tgt")) d.strategy = Strategy::Forced;
  auto ma = load_model(find_model(a.str("--a")));
  if (!ma) {
    std::cerr << "stepformer compare: " << ma.error() << "\n";
    return 1;
  }
  auto A = std::make_shared<const Model>(std::move(*ma));
  std::shared_ptr<const Model> B;
  if (a.has("--switch")) {
    const NormPlacement other = A->config.norm == NormPlacement::Pre ? NormPlacement::Post : NormPlacement::Pre;
    B = std::make_shared<const Model>(with_norm_placement(*A, other));
  } else {
    auto mb = load_model(find_model(a.str("--b")));
    if (!mb) {
      std::cerr << "stepformer compare: " << mb.error() << "\n";
      return 1;
    }
    B = std::make_shared<const Model>(std::move(*mb));
  }
  auto c = Comparison::create(A, B, a.str("--src"), a.str("--tgt"), d);
  if (!c) {
    std::cerr << "stepformer compare: " << c.error() << "\n";
    return 1;
  }
  for (const std::string& w : c->warnings()) std::cerr << "warning: " << w << "\n";
  if (a.has("--stages")) {
    std::printf("point  A: %-52s B:\n", to_string(A->config.norm));
    do {
      std::printf("%5d  %-55s %s\n", c->position(), c->run(0).current().title.c_str(),
                  c->run(1).current().title.c_str());
    } while (c->forward());
  } else {
    c->run_to_end();
  }
  print_stats("A", c->run(0));
  print_stats("B", c->run(1));
  return 0;
}

STEPFORMER_COMMAND(reg_compare, "compare",
                   "stepformer compare --a A.safetensors (--b B.safetensors | --switch) --src \"...\" [--stages]\n"
                   "    two models on one input in lockstep: aligned stages, decoded text, per-layer statistics",
                   "options:\n"
                   "  --a A.safetensors  the first model (a Hugging Face folder also works) (required)\n"
                   "  --b B.safetensors  the second model (or --switch)\n"
                   "  --switch           B is A's weights with the LayerNorm placement switched (an experiment)\n"
                   "  --src \"...\"        the source text (required)\n"
                   "  --tgt \"...\"        force both decodes on this target text\n"
                   "  --max-len N        stop after N generated tokens\n"
                   "  --stages           print every aligned stage pair, not only the per-layer statistics\n"
                   "example:\n"
                   "  stepformer compare --a assets/models/copy-preln.safetensors "
                   "--b assets/models/copy-postln.safetensors --src \"1 2 3\"\n",
                   cmd_compare);

}  // namespace sf::cli
