// commands.h — the subcommands of the `stepformer` executable. Each returns the exit code and
// prints errors to stderr as "stepformer <cmd>: <message>".
#pragma once

namespace sf::cli {

int cmd_init(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_trace(int argc, char** argv);
int cmd_walk(int argc, char** argv);

}  // namespace sf::cli
