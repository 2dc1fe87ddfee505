// stepformer — step through a Transformer. With no arguments (or only explorer flags such as
// --script, --screenshot, --bench-frames) it opens the explorer (app/gui/); otherwise the first
// argument names a command-line tool (each registers itself in app/cli/); see `stepformer help`.
#include <algorithm>
#include <iostream>
#include <string>

#include "base/allocator.h"
#include "cli/commands.h"
#ifdef STEPFORMER_WITH_GUI
#include "gui/explorer.h"
#endif

namespace {

void usage(std::ostream& out) {
  out << "stepformer — step through a Transformer\n\n";
#ifdef STEPFORMER_WITH_GUI
  out << "  stepformer [--model M] [--script S] [--screenshot OUT.png] [--bench-frames N] [--scale S] [--presentation]\n"
         "    open the explorer (no command); see docs/explorer.md\n";
#endif
  auto cmds = sf::cli::command_registry();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return std::string(a.name) < b.name; });
  for (auto& c : cmds) out << "  " << c.usage << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  sf::tune_allocator();
#ifdef STEPFORMER_WITH_GUI
  if (sf::gui::is_explorer_invocation(argc, argv)) return sf::gui::run_explorer(argc, argv);
#endif
  if (argc < 2) {
    usage(std::cout);
    return 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    usage(std::cout);
    return 0;
  }
  for (auto& c : sf::cli::command_registry())
    if (cmd == c.name) return c.run(argc, argv);
  std::cerr << "stepformer: unknown command '" << cmd << "'\n\n";
  usage(std::cerr);
  return 2;
}
