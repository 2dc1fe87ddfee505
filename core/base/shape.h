// shape.h — how a tensor's shape is written in messages, formulas and panels: "(2, 3)".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sf {

std::string shape_str(const std::vector<int64_t>& s);  // "(2, 3)"; "()" for a scalar

}  // namespace sf
