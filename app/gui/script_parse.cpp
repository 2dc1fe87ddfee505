// script_parse.cpp — line and word splitting and argument conversions of explorer scripts.
#include "script_parse.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace sf::gui {

std::vector<ScriptLine> split_script(const std::string& text) {
  std::vector<ScriptLine> lines;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    // The same blanks as split_words (isspace in the C locale), so a kept line has a word.
    const size_t a = line.find_first_not_of(" \t\r\v\f");
    if (a == std::string::npos || line[a] == '#') continue;
    lines.push_back({n, line.substr(a)});
  }
  return lines;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  std::string x;
  while (in >> x) w.push_back(x);
  return w;
}

std::string rest_after(const std::string& line, const std::string& word) {
  size_t p = line.find(word);
  p = p == std::string::npos ? line.size() : p + word.size();
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  std::string r = line.substr(p);
  while (!r.empty() && (r.back() == ' ' || r.back() == '\t' || r.back() == '\r')) r.pop_back();
  // Optional quotes around the text.
  if (r.size() >= 2 && r.front() == '"' && r.back() == '"') r = r.substr(1, r.size() - 2);
  return r;
}

namespace {

// The whole string must convert: std::sto* stops at trailing junk, so the length read is checked.
template <class T, class Convert>
bool whole(const std::string& s, T& v, Convert convert) {
  try {
    size_t n;
    v = convert(s, &n);
    return n == s.size();
  } catch (...) {  // std::invalid_argument, std::out_of_range
    return false;
  }
}

}  // namespace

bool parse_int(const std::string& s, int& v) {
  return whole(s, v, [](const std::string& x, size_t* n) { return std::stoi(x, n); });
}

bool parse_float(const std::string& s, float& v) {
  return whole(s, v, [](const std::string& x, size_t* n) { return std::stof(x, n); });
}

bool parse_double(const std::string& s, double& v) {
  return whole(s, v, [](const std::string& x, size_t* n) { return std::stod(x, n); });
}

bool parse_onoff(const std::string& s, bool& v) {
  if (s == "on" || s == "true" || s == "1" || s == "yes") return v = true, true;
  if (s == "off" || s == "false" || s == "0" || s == "no") return v = false, true;
  return false;
}

bool parse_vector(const std::string& s, std::vector<float>& v, size_t max_len) {
  v.clear();
  size_t a = 0;
  while (a <= s.size()) {
    const size_t comma = std::min(s.find(',', a), s.size());
    const std::string item = s.substr(a, comma - a);
    const size_t star = item.find('*');
    float x;
    int n = 1;
    if (!parse_float(item.substr(0, star), x) || !std::isfinite(x) ||
        (star != std::string::npos && (!parse_int(item.substr(star + 1), n) || n < 1)))
      return false;
    if (static_cast<size_t>(n) > max_len - v.size()) return false;
    v.insert(v.end(), static_cast<size_t>(n), x);
    a = comma + 1;
  }
  return !v.empty();
}

}  // namespace sf::gui
