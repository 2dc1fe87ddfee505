// stepformer — step through a Transformer. With no arguments (or only explorer flags such as
// --script, --screenshot, --bench-frames) it opens the explorer (app/gui/); otherwise the first
// argument names a command-line tool (each registers itself in app/cli/); see `stepformer help`.
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>

#include "base/allocator.h"
#include "base/startup.h"
#include "base/threads.h"
#include "cli/commands.h"
#include "paths.h"
#ifdef STEPFORMER_WITH_GUI
#include "gui/explorer.h"
#endif

namespace {

void usage(std::ostream& out) {
  out << "stepformer — step through a Transformer\n\n";
#ifdef STEPFORMER_WITH_GUI
  out << "  stepformer [--model M] [--script S] [--lesson NAME|FILE] [--screenshot OUT.png] [--bench-frames N] "
         "[--scale S] [--presentation] "
         "[--size WxH] [--threads N]\n"
         "    open the explorer (no command); see docs/explorer.md\n"
         "  stepformer M.safetensors\n"
         "    open the explorer on that model (a model file or Hugging Face folder)\n";
#endif
  auto cmds = sf::cli::command_registry();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return std::string(a.name) < b.name; });
  for (auto& c : cmds) out << "  " << c.usage << "\n";
  out << "\n  stepformer <command> --help   every option of a command, with an example\n"
         "  stepformer --version\n"
         "  --threads N   with the explorer and every command but train: cores for the matrix products,\n"
         "                0 = every core (the default); train's --threads counts batch shards, one core each\n"
         "exit status: 0 ok, 1 bad input, 2 bad usage, 130 interrupted (train, Ctrl-C)\n";
}

// `-h`/`--help` anywhere after the command (a value that is literally "--help" is not supported).
bool asks_for_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") return true;
  return false;
}

void command_help(const sf::cli::Command& c) {
  std::cout << "usage: " << c.usage << "\n\n" << c.help;
  if (std::string(c.name) != "train")
    std::cout << "  --threads N          cores for the matrix products, 0 = every core (the default)\n";
  std::cout << "exit status: 0 ok, 1 bad input (unreadable, malformed or unwritable file, refused text), "
               "2 bad usage"
            << (std::string(c.name) == "train" ? ", 130 interrupted (Ctrl-C)" : "") << "\n";
}

// `--threads N` for the explorer and every command but `train` (whose --threads counts batch
// shards): taken out of argv here, so no command parses it, and set for the whole process (the
// GUI's worker thread takes it too). Prints a message and returns false on a bad value.
bool take_threads_option(int& argc, char** argv) {
  sf::set_default_threads(0);  // every core unless told otherwise
  if (argc > 1 && std::string(argv[1]) == "train") return true;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--threads") continue;
    int n = 0;
    if (i + 1 >= argc || !sf::parse_threads(argv[i + 1], n)) {
      std::cerr << "stepformer: --threads expects an integer 0..1024 (0: every core), found '"
                << (i + 1 < argc ? argv[i + 1] : "nothing") << "'\n";
      return false;
    }
    sf::set_default_threads(n);
    for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];  // argv[argc] (null) moves down too
    argc -= 2;
    --i;
  }
  return true;
}

const sf::cli::Command* find_command(const std::string& name) {
  for (auto& c : sf::cli::command_registry())
    if (name == c.name) return &c;
  return nullptr;
}

#ifdef STEPFORMER_WITH_GUI
// A lone argument the explorer opens: a .safetensors file or a Hugging Face model folder.
bool opens_in_explorer(const std::string& arg) {
  const std::string ext = ".safetensors";
  return (arg.size() > ext.size() && arg.compare(arg.size() - ext.size(), ext.size(), ext) == 0) ||
         sf::is_model_dir(arg);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // First: it may start the program again. `train` shards a step over threads that allocate at
  // once: an arena each (base/startup.h).
  const bool training = argc >= 2 && std::string_view(argv[1]) == "train";
  sf::restart_with_runtime_settings(argv, training ? sf::Arenas::PerThread : sf::Arenas::One);
  sf::tune_allocator();
  if (!take_threads_option(argc, argv)) return 2;
#ifdef STEPFORMER_WITH_GUI
  if (sf::gui::is_explorer_invocation(argc, argv)) return sf::gui::run_explorer(argc, argv);
  // `stepformer M.safetensors` (the desktop entry's "Open with"): the explorer on that model.
  if (argc == 2 && !find_command(argv[1]) && opens_in_explorer(argv[1])) {
    char model_flag[] = "--model";
    char* args[] = {argv[0], model_flag, argv[1], nullptr};
    return sf::gui::run_explorer(3, args);
  }
#endif
  if (argc < 2) {
    usage(std::cout);
    return 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    std::cout << "stepformer " << STEPFORMER_VERSION << "\n";
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (argc > 2) {  // `stepformer help decode`
      if (const auto* c = find_command(argv[2])) {
        command_help(*c);
        return 0;
      }
      std::cerr << "stepformer help: unknown command '" << argv[2] << "'\n";
      return 2;
    }
    usage(std::cout);
    return 0;
  }
  if (const auto* c = find_command(cmd)) {
    if (asks_for_help(argc, argv)) {
      command_help(*c);
      return 0;
    }
    return c->run(argc, argv);
  }
  std::cerr << "stepformer: unknown command '" << cmd << "'\n\n";
  usage(std::cerr);
  return 2;
}
