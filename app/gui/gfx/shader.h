// shader.h — GLSL programs loaded from files in shaders/ (never string literals).
#pragma once

#include <string>

#include "gfx/gl.h"

namespace sf::gui {

// Reads `dir/name`, replacing each line `#include "file"` with the text of `dir/file`.
// Returns false with a message naming the file on failure.
bool read_shader_source(const std::string& dir, const std::string& name, std::string& out, std::string& error);

// Compiles and links a vertex + fragment program from two files in `dir`; 0 and a message
// (file name and the driver's log) on failure.
GLuint load_program(const std::string& dir, const std::string& vert, const std::string& frag, std::string& error);

}  // namespace sf::gui
