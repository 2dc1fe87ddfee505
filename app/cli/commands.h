// commands.h — the subcommands of the `stepformer` executable.
//
// Each command file registers itself with STEPFORMER_COMMAND, so adding a command never touches
// main.cpp. A command returns the exit code (0 ok, 1 failed on input, 2 bad command line) and
// prints errors to stderr as "stepformer <cmd>: <message>".
#pragma once

#include <string>
#include <vector>

namespace sf::cli {

using CommandFn = int (*)(int argc, char** argv);  // argv[1] is the command name

struct Command {
  const char* name;
  const char* usage;  // one or more lines, shown by `stepformer help`
  CommandFn run;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  RegisterCommand(const char* name, const char* usage, CommandFn fn) { command_registry().push_back({name, usage, fn}); }
};

#define STEPFORMER_COMMAND(var, name, usage, fn) static ::sf::cli::RegisterCommand var{name, usage, fn}

}  // namespace sf::cli
