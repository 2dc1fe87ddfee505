// prepost.h — the explorer's pre-LN vs post-LN views: compare mode, the training view
// and gradient norms at initialisation, as three panels sharing one PrePostHub (hub.h), plus the
// script commands that drive them. See docs/compare.md.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui.h"

namespace sf::gui {

class App;

// "compare", "training", "gradnorms" (in that order); they share one hub.
std::vector<std::unique_ptr<Panel>> make_prepost_panels();

// Script commands of these views (docs/compare.md). Returns −1 when `a[0]` is not one of them,
// else 1 (done) or 0 (error set). A command that starts background work sets `until`, which the
// script runner polls each frame before the next line.
int run_prepost_command(App& app, const std::vector<std::string>& a, const std::string& line, std::string& error,
                        std::function<bool(std::string&)>& until);

}  // namespace sf::gui
