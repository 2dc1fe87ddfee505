// fuzz_script.cpp — libFuzzer harness: the explorer's script language, its pure parsing half
// (app/gui/script_parse.h): lines, words, quoted texts, numbers and switches. Every kept line
// must have a first word (the command), which script.cpp indexes without checking.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "script_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sf::gui;
  for (const ScriptLine& l : split_script(std::string(reinterpret_cast<const char*>(data), size))) {
    const auto words = split_words(l.text);
    if (words.empty()) std::abort();
    (void)rest_after(l.text, words[0]);
    for (const std::string& w : words) {
      int i;
      float f;
      double d;
      bool b;
      (void)parse_int(w, i);
      (void)parse_float(w, f);
      (void)parse_double(w, d);
      (void)parse_onoff(w, b);
      if (const size_t eq = w.find('='); eq != std::string::npos) (void)parse_int(w.substr(eq + 1), i);
    }
  }
  return 0;
}
