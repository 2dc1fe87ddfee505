// script_parse.h — the pure, GL-free half of the explorer's script language (docs/explorer.md):
// splitting a script into numbered command lines and a line into words, and reading the
// numbers, on/off switches and quoted texts of the arguments. script.cpp runs the commands;
// tests/fuzz/fuzz_script.cpp fuzzes this part on its own.
#pragma once

#include <string>
#include <vector>

namespace sf::gui {

struct ScriptLine {
  int number;        // 1-based line number in the file, for messages
  std::string text;  // leading blanks removed; blank lines and # comments are dropped
};

std::vector<ScriptLine> split_script(const std::string& text);
std::vector<std::string> split_words(const std::string& s);
// The rest of `line` after the first occurrence of `word`, trimmed, optional quotes removed.
std::string rest_after(const std::string& line, const std::string& word);
// Whole-string conversions: false on trailing junk, out-of-range values or an empty string.
bool parse_int(const std::string& s, int& v);
bool parse_float(const std::string& s, float& v);
bool parse_double(const std::string& s, double& v);
bool parse_onoff(const std::string& s, bool& v);  // on/off, true/false, 1/0, yes/no
// A vector: numbers separated by commas, each optionally repeated as x*n ("1.75*64" is 64
// components of 1.75, "8,0*63" is 8 then 63 zeros). False on junk, an empty item, a count < 1 or
// more than max_len components; every number finite.
bool parse_vector(const std::string& s, std::vector<float>& v, size_t max_len = 4096);

}  // namespace sf::gui
