// paths.h — where the explorer and the command line find shaders/ and assets/ at run time (an
// installed copy: <prefix>/bin/../share/stepformer; a build or source tree: the checkout), and the
// explorer's settings file.
#pragma once

#include <string>
#include <vector>

namespace sf {

// The first existing of: $STEPFORMER_HOME/<sub>, <exe dir>/<sub>, <exe dir>/../<sub>,
// <exe dir>/../share/stepformer/<sub> (installed), <exe dir>/../../<sub> (build/app/stepformer in
// a checkout), the source tree's <sub>.
// Empty if none exists.
std::string find_resource_dir(const std::string& sub);

// A model argument as the user typed it: the path itself when it exists; else a path starting
// with assets/ under the resource folder that holds assets/ (so `assets/models/copy-preln.safetensors`,
// as the help's examples write it, works from any folder), or a shipped model's name (`copy-preln`
// or `copy-preln.safetensors`); else the path unchanged, for the loader to say what is wrong.
std::string find_model(const std::string& path);

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

}  // namespace sf
