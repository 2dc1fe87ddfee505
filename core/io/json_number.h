// json_number.h — a JSON number as a C++ arithmetic type, when that type can hold it.
//
// nlohmann's get<int>() of 1e26, or a float's of 1e300, is a cast whose result C++ leaves
// undefined; a file written elsewhere (a saved run's options, a metrics file) may hold any number.
// Readers of such files take their numbers through json_number and name what they expected.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

namespace sf {

// v as a T: a whole number within T's range for an integer type (an integer in the JSON: 3.0 is
// not one), a finite number within T's range for a floating-point type; nullopt for anything else.
template <class T>
std::optional<T> json_number(const nlohmann::json& v) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned())
      return v.get<uint64_t>() <= static_cast<uint64_t>(L::max()) ? std::optional<T>(static_cast<T>(v.get<uint64_t>()))
                                                                  : std::nullopt;
    if (!v.is_number_integer()) return std::nullopt;
    const int64_t i = v.get<int64_t>();
    const bool fits = i < 0 ? L::is_signed && i >= static_cast<int64_t>(L::min())
                            : static_cast<uint64_t>(i) <= static_cast<uint64_t>(L::max());
    return fits ? std::optional<T>(static_cast<T>(i)) : std::nullopt;
  } else {
    if (!v.is_number()) return std::nullopt;
    const double d = v.get<double>();
    return std::isfinite(d) && std::fabs(d) <= static_cast<double>(L::max()) ? std::optional<T>(static_cast<T>(d))
                                                                             : std::nullopt;
  }
}

// What json_number<T> accepts, for a message: "an integer from -2147483648 to 2147483647" or
// "a finite number".
template <class T>
std::string json_number_expected() {
  if constexpr (std::is_integral_v<T>)
    return "an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
           std::to_string(std::numeric_limits<T>::max());
  else
    return "a finite number";
}

}  // namespace sf
