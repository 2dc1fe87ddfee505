// `stepformer init` and `stepformer info`.
#include <fstream>
#include <iostream>
#include <sstream>

#include "args.h"
#include "io/checkpoint.h"
#include "paths.h"
#include "commands.h"

namespace sf::cli {

static int cmd_init(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--config", "--seed", "--out"});
  a.require("--config");
  a.require("--out");
  const long long seed = a.integer("--seed", 0, 0, (1LL << 62));
  if (!a.ok()) {
    std::cerr << "stepformer init: " << a.error()
              << "\nusage: stepformer init --config C.json --seed S --out M.safetensors\n";
    return 2;
  }
  const std::string path = a.str("--config");
  if (const int code = check_output("init", "--out", a.str("--out"), {{"--config", path}})) return code;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "stepformer init: '" << path << "': cannot open (missing file or no permission)\n";
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto cfg = parse_config(ss.str());
  if (!cfg) {
    std::cerr << "stepformer init: '" << path << "': " << cfg.error() << "\n";
    return 1;
  }
  Weights w;
  init_xavier(w, *cfg, static_cast<uint64_t>(seed));
  Model m = Model::make(std::move(*cfg), std::move(w));
  if (auto ok = save_model(a.str("--out"), m); !ok) {
    std::cerr << "stepformer init: " << ok.error() << "\n";
    return 1;
  }
  std::cout << "wrote " << a.str("--out") << ": " << count_params(m.weights, m.config) << " parameters, seed " << seed
            << "\n";
  return 0;
}

static int cmd_info(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {});
  if (!a.ok() || a.positional().size() != 1) {
    std::cerr << "stepformer info: " << (a.ok() ? "expected one model file" : a.error())
              << "\nusage: stepformer info M.safetensors | DIR\n";
    return 2;
  }
  const std::string path = find_model(a.positional()[0]);  // a shipped model's name: its file
  auto m = load_model(path);
  if (!m) {
    std::cerr << "stepformer info: " << m.error() << "\n";
    return 1;
  }
  const Config& c = m->config;
  const ModelSource& s = m->source;
  std::cout << path << "\n"
            << "  family       " << s.family << (s.architecture.empty() ? "" : " (" + s.architecture + ")") << "\n"
            << "  stored dtype " << s.stored_dtype << (s.held().empty() ? "" : " (" + s.held() + ")") << "\n";
  if (s.is_hub()) {
    std::cout << "  files        ";
    for (size_t i = 0; i < s.files.size(); ++i) {
      const size_t slash = s.files[i].find_last_of('/');
      std::cout << (i ? ", " : "") << (slash == std::string::npos ? s.files[i] : s.files[i].substr(slash + 1));
    }
    std::cout << "\n";
  }
  std::cout << "  arch         " << to_string(c.arch) << "\n"
            << "  norm         " << to_string(c.norm) << "-LN\n"
            << "  d_model      " << c.d_model << "   n_heads " << c.n_heads << "   d_k " << c.d_k() << "   d_ff "
            << c.d_ff << (c.has_ffn() ? "" : " (attention-only: no feed-forward sublayers)") << "\n"
            << (c.encoder_heads() != c.n_heads || c.encoder_d_ff() != c.d_ff
                    ? "  encoder      n_heads " + std::to_string(c.encoder_heads()) + "   d_ff " +
                          std::to_string(c.encoder_d_ff()) + "   (the line above: the decoder)\n"
                    : "")
            << "  layers       " << c.n_encoder_layers << " encoder + " << c.n_decoder_layers << " decoder\n"
            << "  positional   " << to_string(c.positional) << "   max_len " << c.max_len << "\n"
            << "  activation   " << to_string(c.activation) << "   tokenizer " << s.tokenizer << "   shared embeddings "
            << (c.share_embeddings ? "yes" : "no") << "\n";
  if (c.positional == Positional::Rotary)
    std::cout << "  rotary       theta " << c.rope.theta << "   rotating " << c.rotary_dim() << " of " << c.d_k()
              << " dims per head   scaling " << to_string(c.rope.scaling) << "\n"
              << "  decoder      norm " << to_string(c.norm_kind) << "   mlp " << to_string(c.mlp) << "   residual "
              << to_string(c.residual) << "   K/V heads " << c.kv_heads() << "   sliding window "
              << (c.sliding_window > 0 ? std::to_string(c.sliding_window) : std::string("none")) << "\n";
  if (c.has_encoder()) std::cout << "  src vocab    " << c.src_vocab.size() << " tokens\n";
  std::cout << "  tgt vocab    " << c.tgt_vocab.size() << " tokens\n\n  parameters by component\n";
  for (auto& pc : count_params_by_component(m->weights, c))
    std::cout << "    " << pc.component << std::string(pc.component.size() < 36 ? 36 - pc.component.size() : 1, ' ')
              << pc.count << "\n";
  std::cout << "    total" << std::string(31, ' ') << count_params(m->weights, c) << "\n";
  return 0;
}

STEPFORMER_COMMAND(reg_init, "init",
                   "stepformer init --config C.json --seed S --out M.safetensors\n"
                   "    a new model with Xavier-uniform weights (deterministic for a seed)",
                   "options:\n"
                   "  --config C.json      the model configuration (format in docs/model-format.md) (required)\n"
                   "  --seed S             the initialisation seed, 0..2^62 (default 0)\n"
                   "  --out M.safetensors  where to write the model (required)\n"
                   "example:\n"
                   "  stepformer init --config tests/gui/model.json --seed 1 --out /tmp/m.safetensors\n",
                   cmd_init);
STEPFORMER_COMMAND(reg_info, "info",
                   "stepformer info M.safetensors | DIR\n"
                   "    configuration, where the weights came from, parameter count per component",
                   "arguments:\n"
                   "  M.safetensors        a stepformer model or checkpoint file, or\n"
                   "  DIR                  a Hugging Face model folder (gpt2, marian, bert: config.json,\n"
                   "                       model.safetensors, tokenizer files; docs/real-models.md)\n"
                   "examples:\n"
                   "  stepformer info assets/models/copy-preln.safetensors\n"
                   "  stepformer info tests/fixtures/hf/gpt2-tiny\n",
                   cmd_info);

}  // namespace sf::cli
