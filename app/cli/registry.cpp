#include "commands.h"

namespace sf::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;  // function-local: safe from static-initialisation order
  return commands;
}

}  // namespace sf::cli
