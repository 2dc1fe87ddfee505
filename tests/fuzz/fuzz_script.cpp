// fuzz_script.cpp — libFuzzer harness: the explorer's script language, its GL-free half
// (app/gui/script_parse.h): lines, words, quoted texts, numbers, switches and vectors. Every kept
// line must have a first word (the command), which script.cpp indexes without checking. The same
// input also goes through the lesson path in safe mode (app/gui/lesson.h, safe_mode.h): the file
// checks, the step split, the layout plan, the command limits, and the placement of every output
// a line names, which must land inside the exports folder (a scratch folder here, removed after).
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lesson.h"
#include "safe_mode.h"
#include "script_parse.h"

namespace {

void remove_tree(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      const std::string p = dir + "/" + n;
      if (rmdir(p.c_str()) != 0) unlink(p.c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sf::gui;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const ScriptLine& l : split_script(text)) {
    const auto words = split_words(l.text);
    if (words.empty()) std::abort();
    (void)rest_after(l.text, words[0]);
    for (const std::string& w : words) {
      int i;
      float f;
      double d;
      bool b;
      std::vector<float> v;
      (void)parse_int(w, i);
      (void)parse_float(w, f);
      (void)parse_double(w, d);
      (void)parse_onoff(w, b);
      if (const size_t eq = w.find('='); eq != std::string::npos) {
        (void)parse_int(w.substr(eq + 1), i);
        if (parse_vector(w.substr(eq + 1), v) && (v.empty() || v.size() > 4096)) std::abort();
      }
    }
  }

  // Safe mode, as a lesson runs it.
  SafeLimits limits;
  if (!check_lesson_text(text, "fuzz", limits)) return 0;
  auto lesson = parse_lesson(text, "fuzz");
  if (!lesson) return 0;
  char tmpl[] = "/tmp/sf_fuzz_exports_XXXXXX";
  const char* root = mkdtemp(tmpl);
  if (!root) return 0;
  const std::string exports = std::string(root) + "/exports";
  int placed = 0;
  for (const LessonStep& s : lesson->steps)
    for (const ScriptLine& l : s.lines) {
      const auto words = split_words(l.text);
      if (words[0] == "layout") {
        if (auto plan = parse_layout(words))
          for (const LayoutItem& it : plan->items)
            if (it.x < -1e-5f || it.y < plan->caption - 1e-5f || it.x + it.w > 1.0001f || it.y + it.h > 1.0001f)
              std::abort();
      }
      std::string error;
      if (!check_safe_command(words, limits, error)) {
        if (error.empty()) std::abort();
        continue;
      }
      const size_t k = static_cast<size_t>(output_word(words));
      if (k == 0 || words.size() <= k || ++placed > 8) continue;
      auto p = place_export(exports, words[k], output_is_folder(words));
      if (!p) continue;
      // Inside the exports folder, one plain component, never hidden.
      const std::string name = p->path.substr(exports.size() + 1);
      if (p->path.compare(0, exports.size() + 1, exports + "/") != 0 || name.empty() || name[0] == '.' ||
          name.find('/') != std::string::npos)
        std::abort();
    }
  remove_tree(exports);
  rmdir(root);
  return 0;
}
