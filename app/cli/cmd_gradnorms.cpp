// `stepformer gradnorms`: gradient norm per layer at initialisation, pre-LN vs post-LN
// (Xiong et al. 2020), averaged over seeds.
#include <cstdio>
#include <iostream>

#include "args.h"
#include "commands.h"
#include "train/gradnorms.h"

namespace sf::cli {

static int cmd_gradnorms(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--layers", "--norm", "--seeds", "--d-model", "--heads", "--d-ff", "--batch", "--task"});
  GradNormOptions o;
  o.layers = static_cast<int>(a.integer("--layers", 6, 1, 64));
  o.seeds = static_cast<int>(a.integer("--seeds", 10, 1, 1000));
  o.d_model = static_cast<int>(a.integer("--d-model", 64, 2, 4096));
  o.n_heads = static_cast<int>(a.integer("--heads", 4, 1, 256));
  o.d_ff = static_cast<int>(a.integer("--d-ff", 4 * o.d_model, 1, 1 << 16));
  o.batch = static_cast<int>(a.integer("--batch", 32, 1, 4096));
  o.task = a.str("--task", "copy");
  const std::string norm = a.str("--norm", "pre");
  if (!a.ok() || (norm != "pre" && norm != "post") || o.d_model % o.n_heads != 0 || o.d_model % 2 != 0) {
    std::cerr << "stepformer gradnorms: "
              << (!a.ok() ? a.error() : "expected --norm pre|post and an even d_model divisible by --heads")
              << "\nusage: stepformer gradnorms --layers L --norm pre|post --seeds S [--d-model D --heads H "
                 "--d-ff F --batch B --task T]\n";
    return 2;
  }
  o.norm = norm == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  const GradNormResult r = gradnorms_at_init(o);
  if (r.encoder_ffn.empty()) {
    std::cerr << "stepformer gradnorms: task '" << o.task << "' must be an encoder-decoder task\n";
    return 1;
  }
  std::printf(
      "%s-LN, %d+%d layers, d_model %d, %d heads, d_ff %d, task %s, batch %d, mean over %d seeds "
      "(initial loss %.3f)\n",
      norm.c_str(), o.layers, o.layers, o.d_model, o.n_heads, o.d_ff, o.task.c_str(), o.batch, o.seeds, r.loss);
  std::printf("layer   |grad enc ffn.fc2.W|  |grad dec ffn.fc2.W|   enc stream |x|   dec stream |x|\n");
  for (size_t l = 0; l < r.encoder_ffn.size(); ++l)
    std::printf("%5zu   %20.5f  %20.5f   %14.3f   %14.3f\n", l, r.encoder_ffn[l], r.decoder_ffn[l], r.encoder_stream[l],
                r.decoder_stream[l]);
  return 0;
}

STEPFORMER_COMMAND(reg_gradnorms, "gradnorms",
                   "stepformer gradnorms --layers 6 --norm pre|post --seeds 10 [--d-model D --heads H --d-ff F]\n"
                   "    gradient norm per layer at initialisation, averaged over seeds (Xiong et al. 2020)",
                   "options:\n"
                   "  --layers L     encoder and decoder layers each, 1..64 (default 6)\n"
                   "  --norm pre|post  LayerNorm placement (default pre)\n"
                   "  --seeds S      fresh initialisations to average over, 1..1000 (default 10)\n"
                   "  --d-model D    model width, even and divisible by --heads (default 64)\n"
                   "  --heads H      attention heads (default 4)\n"
                   "  --d-ff F       feed-forward width (default 4·D)\n"
                   "  --batch B      examples in the one batch (default 32)\n"
                   "  --task T       an encoder-decoder task: copy, reverse, sort, add, dates (default copy)\n"
                   "example:\n"
                   "  stepformer gradnorms --layers 6 --norm post --seeds 3\n",
                   cmd_gradnorms);

}  // namespace sf::cli
