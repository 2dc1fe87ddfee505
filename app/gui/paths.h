// paths.h — where the explorer finds shaders/ and assets/ at run time, and its settings file.
#pragma once

#include <string>
#include <vector>

namespace sf::gui {

// The first existing of: $STEPFORMER_HOME/<sub>, <exe dir>/<sub>, <exe dir>/../<sub>,
// <exe dir>/../../<sub>, <exe dir>/../share/stepformer/<sub>, the source tree's <sub>.
// Empty if none exists.
std::string find_resource_dir(const std::string& sub);

// Shipped models in assets/models, in the order the app prefers them (copy-preln first,
// reverse-preln next, then the rest alphabetically).
std::vector<std::string> shipped_models();

// $XDG_CONFIG_HOME/stepformer/imgui.ini (or ~/.config/...); the folder is created.
std::string settings_path();

bool file_exists(const std::string& path);
bool dir_exists(const std::string& path);
// A Hugging Face model folder: a directory holding config.json (the loader says what else is missing).
bool is_model_dir(const std::string& path);
std::string base_name(const std::string& path);  // trailing slashes ignored: "a/b/" gives "b"

}  // namespace sf::gui
