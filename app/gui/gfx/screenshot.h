// screenshot.h — the back buffer (or a rectangle of it) to a PNG file, via stb_image_write.
#pragma once

#include <string>

namespace sf::gui {

// Writes RGBA pixels (top row first) as PNG; atomic (temporary file + rename).
bool write_png_rgba(const std::string& path, const unsigned char* rgba, int w, int h, std::string& error);

// Reads the rectangle (x, y, w, h) of the back buffer, in ImGui coordinates (top-left origin,
// framebuffer pixels), and writes it. Call after rendering and before swapping.
bool save_framebuffer_png(const std::string& path, int x, int y, int w, int h, int fb_height, std::string& error);

}  // namespace sf::gui
