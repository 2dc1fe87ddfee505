// explorer.h — entry point of the ImGui explorer (`stepformer` with no command).
#pragma once

namespace sf::gui {

// True when argv holds only explorer flags (or nothing): main() then opens the explorer.
bool is_explorer_invocation(int argc, char** argv);

// Runs the explorer: --script FILE, --screenshot FILE, --bench-frames N, --model FILE, --scale S,
// --presentation, --size WxH. Returns the process exit code.
int run_explorer(int argc, char** argv);

}  // namespace sf::gui
