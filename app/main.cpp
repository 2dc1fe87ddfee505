// stepformer — step through a Transformer. With no arguments, the explorer opens; otherwise the
// first argument names a command-line tool.
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.h"

namespace {

void usage() {
  std::cout << "stepformer — step through a Transformer\n\n"
               "  stepformer init --config C.json --seed S --out M.safetensors   new model, Xavier-uniform weights\n"
               "  stepformer info M.safetensors                                  configuration and parameter counts\n"
               "  stepformer trace --model M --src \"...\" [--tgt \"...\"] --out T.safetensors\n"
               "                                                                 record every intermediate tensor\n"
               "  stepformer walk --model M --src \"...\" [--tgt \"...\"]          walk-through in the terminal\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "init") return sf::cli::cmd_init(argc, argv);
  if (cmd == "info") return sf::cli::cmd_info(argc, argv);
  if (cmd == "trace") return sf::cli::cmd_trace(argc, argv);
  if (cmd == "walk") return sf::cli::cmd_walk(argc, argv);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    usage();
    return 0;
  }
  std::cerr << "stepformer: unknown command '" << cmd << "'\n";
  usage();
  return 2;
}
