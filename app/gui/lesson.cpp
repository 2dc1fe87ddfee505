// lesson.cpp — splitting a lesson into steps, the `layout` plan, finding lesson files.
#include "lesson.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

namespace sf::gui {

namespace {

bool is_caption(const ScriptLine& l, const char* what) {
  const std::vector<std::string> w = split_words(l.text);
  return w.size() >= 2 && w[0] == "caption" && w[1] == what;
}

bool regular_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Result<Lesson> parse_lesson(const std::string& text, const std::string& source) {
  Lesson lesson;
  lesson.source = source;
  for (ScriptLine& l : split_script(text)) {
    if (is_caption(l, "lesson")) {
      lesson.title = rest_after(l.text, "lesson");
      continue;
    }
    if (is_caption(l, "step")) lesson.steps.push_back({rest_after(l.text, "step"), {}});
    if (lesson.steps.empty())
      lesson.prelude.push_back(std::move(l));
    else
      lesson.steps.back().lines.push_back(std::move(l));
  }
  if (lesson.steps.empty())
    return Error{"lesson '" + source + "': no step (a lesson's steps each begin with a line 'caption step TITLE')"};
  if (lesson.title.empty()) {
    const size_t slash = source.find_last_of('/');
    lesson.title = slash == std::string::npos ? source : source.substr(slash + 1);
  }
  return lesson;
}

std::string lesson_title(const std::string& text) {
  for (const ScriptLine& l : split_script(text))
    if (is_caption(l, "lesson")) return rest_after(l.text, "lesson");
  return "";
}

Result<LayoutPlan> parse_layout(const std::vector<std::string>& words) {
  struct Cell {
    std::string panel;
    float weight;
  };
  struct Row {
    float height = 0;  // 0: an equal share
    std::vector<Cell> cells;
  };
  LayoutPlan plan;
  std::vector<Row> rows(1);
  const std::string usage = " (layout [caption=F] [H%] panel[:W] panel[:W] … [/ [H%] panel …])";
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "/") {
      rows.emplace_back();
      continue;
    }
    if (w.rfind("caption=", 0) == 0) {
      float f;
      if (!parse_float(w.substr(8), f) || f < 0.1f || f > 0.6f)
        return Error{"layout: caption= expects a share of the height in [0.1, 0.6], found '" + w.substr(8) + "'"};
      plan.caption = f;
      continue;
    }
    if (w.size() > 1 && w.back() == '%') {
      float h;
      if (!rows.back().cells.empty() || !parse_float(w.substr(0, w.size() - 1), h) || h <= 0 || h > 100)
        return Error{"layout: a row's height (H%) comes first in its row and is in (0, 100], found '" + w + "'" +
                     usage};
      rows.back().height = h / 100.0f;
      continue;
    }
    const size_t colon = w.find(':');
    Cell c{w.substr(0, colon), 1.0f};
    if (colon != std::string::npos && (!parse_float(w.substr(colon + 1), c.weight) || c.weight <= 0 || c.weight > 100))
      return Error{"layout: '" + w + "': the width after ':' is a positive number" + usage};
    if (c.panel.empty()) return Error{"layout: '" + w + "' names no panel" + usage};
    for (const Row& r : rows)
      for (const Cell& o : r.cells)
        if (o.panel == c.panel) return Error{"layout: panel '" + c.panel + "' is named twice"};
    rows.back().cells.push_back(c);
  }
  for (const Row& r : rows)
    if (r.cells.empty()) return Error{"layout: an empty row" + usage};
  // Rows share the height below the caption: given heights first, the rest equally.
  float given = 0;
  int free_rows = 0;
  for (const Row& r : rows) r.height > 0 ? given += r.height : ++free_rows;
  const float below = 1.0f - plan.caption;
  if (given > 1.0001f || (free_rows > 0 && given >= 0.9999f))
    return Error{"layout: the rows' heights add up to more than the room below the caption" + usage};
  float y = plan.caption;
  for (const Row& r : rows) {
    const float h = below * (r.height > 0 ? r.height : (1.0f - given) / static_cast<float>(free_rows));
    float total = 0, x = 0;
    for (const Cell& c : r.cells) total += c.weight;
    for (const Cell& c : r.cells) {
      const float w = c.weight / total;
      plan.items.push_back({c.panel, x, y, w, h});
      x += w;
    }
    y += h;
  }
  return plan;
}

std::vector<std::string> list_lessons(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n[0] != '.' && n.compare(n.size() - 4, 4, ".txt") == 0 && regular_file(dir + "/" + n))
        out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string find_lesson(const std::string& name, const std::string& from_dir, const std::string& dir) {
  if (name.empty()) return "";
  if (regular_file(name)) return name;
  if (name[0] != '/' && !from_dir.empty() && regular_file(from_dir + "/" + name)) return from_dir + "/" + name;
  if (dir.empty() || name.find('/') != std::string::npos) return "";
  if (regular_file(dir + "/" + name + ".txt")) return dir + "/" + name + ".txt";
  for (const std::string& p : list_lessons(dir)) {
    const std::string base = p.substr(p.find_last_of('/') + 1);
    const std::string stem = base.substr(0, base.size() - 4);
    const size_t dash = stem.find('-');
    if (base == name || (dash != std::string::npos && stem.substr(dash + 1) == name)) return p;
  }
  return "";
}

}  // namespace sf::gui
