// commands.h — the subcommands of the `stepformer` executable.
//
// Each command file registers itself with STEPFORMER_COMMAND, so adding a command never touches
// main.cpp. A command returns the exit code and prints errors to stderr as
// "stepformer <cmd>: <message>"; results go to stdout. Exit codes (README, "Command line"):
//   0 ok; 1 bad input (a file that cannot be read, parsed or written, a refused input text);
//   2 bad usage (unknown option, missing or malformed value); 130 interrupted by Ctrl-C (train).
// `stepformer <cmd> -h|--help` is answered in main.cpp from `usage` and `help`, before the
// command runs, so no command parses it.
#pragma once

#include <string>
#include <vector>

namespace sf::cli {

using CommandFn = int (*)(int argc, char** argv);  // argv[1] is the command name

enum ExitCode : int { kExitOk = 0, kExitBadInput = 1, kExitBadUsage = 2, kExitInterrupted = 130 };

struct Command {
  const char* name;
  const char* usage;  // synopsis and one-line purpose, shown by `stepformer help`
  const char* help;   // every option, one per line, and an example; shown by `stepformer <cmd> --help`
  CommandFn run;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  RegisterCommand(const char* name, const char* usage, const char* help, CommandFn fn) {
    command_registry().push_back({name, usage, help, fn});
  }
};

#define STEPFORMER_COMMAND(var, name, usage, help, fn) \
  static ::sf::cli::RegisterCommand var { name, usage, help, fn }

}  // namespace sf::cli
