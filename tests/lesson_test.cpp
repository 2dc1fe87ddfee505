// Lessons (app/gui/lesson.h, docs/lessons.md): steps split at `caption step`, the `layout` plan
// (panels side by side, never overlapping), finding lessons; the shipped lessons parse and stay
// within the safe-mode limits.
#include "lesson.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "safe_mode.h"
#include "test_util.h"

namespace sf::gui {
namespace {

namespace fs = std::filesystem;
using sf::test::temp_path;

TEST(Lesson, StepsSplitAtCaptionStep) {
  const std::string text =
      "# a lesson\n"
      "caption lesson Masks\n"
      "presentation on\n"
      "caption step Padding\n"
      "caption text A batch pads short inputs.\n"
      "model copy-preln\n"
      "\n"
      "caption step Causal\n"
      "panel masks\n";
  auto l = parse_lesson(text, "dir/04-masks.txt");
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ(l->title, "Masks");
  ASSERT_EQ(l->prelude.size(), 1u);
  EXPECT_EQ(l->prelude[0].text, "presentation on");
  ASSERT_EQ(l->steps.size(), 2u);
  EXPECT_EQ(l->steps[0].title, "Padding");
  ASSERT_EQ(l->steps[0].lines.size(), 3u);  // the caption step line itself, text, model
  EXPECT_EQ(l->steps[0].lines[2].text, "model copy-preln");
  EXPECT_EQ(l->steps[0].lines[2].number, 6);
  EXPECT_EQ(l->steps[1].title, "Causal");
  EXPECT_EQ(lesson_title(text), "Masks");
  auto untitled = parse_lesson("caption step A\n", "dir/x.txt");
  ASSERT_TRUE(untitled.ok());
  EXPECT_EQ(untitled->title, "x.txt");
  auto none = parse_lesson("model x\nhome\n", "y.txt");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("caption step"), std::string::npos);
}

TEST(Lesson, LayoutRowsSideBySide) {
  auto p = parse_layout(split_words("layout caption=0.2 attention:3 qkv:1 / 40% masks pe"));
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_FLOAT_EQ(p->caption, 0.2f);
  ASSERT_EQ(p->items.size(), 4u);
  // First row: the room left (60 % of 0.8) split 3 : 1; second row 40 % of 0.8, split equally.
  EXPECT_EQ(p->items[0].panel, "attention");
  EXPECT_FLOAT_EQ(p->items[0].x, 0.0f);
  EXPECT_FLOAT_EQ(p->items[0].y, 0.2f);
  EXPECT_FLOAT_EQ(p->items[0].w, 0.75f);
  EXPECT_NEAR(p->items[0].h, 0.48f, 1e-6);
  EXPECT_FLOAT_EQ(p->items[1].x, 0.75f);
  EXPECT_FLOAT_EQ(p->items[1].w, 0.25f);
  EXPECT_EQ(p->items[2].panel, "masks");
  EXPECT_NEAR(p->items[2].y, 0.68f, 1e-6);
  EXPECT_NEAR(p->items[2].h, 0.32f, 1e-6);
  EXPECT_FLOAT_EQ(p->items[3].x, 0.5f);
  // No two rectangles overlap and together they fill the room below the caption.
  float area = 0;
  for (size_t i = 0; i < p->items.size(); ++i) {
    const LayoutItem& a = p->items[i];
    area += a.w * a.h;
    EXPECT_LE(a.x + a.w, 1.0f + 1e-6f);
    EXPECT_LE(a.y + a.h, 1.0f + 1e-6f);
    for (size_t j = i + 1; j < p->items.size(); ++j) {
      const LayoutItem& b = p->items[j];
      const bool apart =
          a.x + a.w <= b.x + 1e-6f || b.x + b.w <= a.x + 1e-6f || a.y + a.h <= b.y + 1e-6f || b.y + b.h <= a.y + 1e-6f;
      EXPECT_TRUE(apart) << a.panel << " overlaps " << b.panel;
    }
  }
  EXPECT_NEAR(area, 0.8f, 1e-5);
}

TEST(Lesson, LayoutErrorsAreNamed) {
  const auto err = [](const std::string& line) {
    auto p = parse_layout(split_words(line));
    return p.ok() ? std::string() : p.error();
  };
  EXPECT_NE(err("layout a / / b").find("empty row"), std::string::npos);
  EXPECT_NE(err("layout a a").find("named twice"), std::string::npos);
  EXPECT_NE(err("layout a:0").find("positive number"), std::string::npos);
  EXPECT_NE(err("layout caption=0.9 a").find("[0.1, 0.6]"), std::string::npos);
  EXPECT_NE(err("layout 70% a / 40% b").find("add up"), std::string::npos);
  EXPECT_NE(err("layout a 30% b").find("comes first"), std::string::npos);
  EXPECT_NE(err("layout").find("empty row"), std::string::npos);
}

TEST(Lesson, FindsBuiltInLessonsByNameOrNumber) {
  const std::string dir = temp_path("lessons");
  fs::remove_all(dir);
  fs::create_directories(dir + "/sub");
  std::ofstream(dir + "/02-masks.txt") << "caption step a\n";
  std::ofstream(dir + "/01-self-attention.txt") << "caption step a\n";
  std::ofstream(dir + "/notes.md") << "x";
  std::ofstream(dir + "/sub/mine.txt") << "caption step a\n";
  const auto all = list_lessons(dir);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], dir + "/01-self-attention.txt");
  EXPECT_EQ(find_lesson("masks", "", dir), dir + "/02-masks.txt");
  EXPECT_EQ(find_lesson("01-self-attention", "", dir), dir + "/01-self-attention.txt");
  EXPECT_EQ(find_lesson("mine.txt", dir + "/sub", dir), dir + "/sub/mine.txt");
  EXPECT_EQ(find_lesson("nothing", "", dir), "");
  EXPECT_EQ(find_lesson("../masks", "", dir), "");
  fs::remove_all(dir);
}

// Every shipped lesson parses, has at least two steps with a caption text, and is within the
// safe-mode limits (file size, lines, counts).
TEST(Lesson, ShippedLessonsAreWellFormed) {
  const auto files = list_lessons(std::string(STEPFORMER_SOURCE_DIR) + "/assets/lessons");
  ASSERT_GE(files.size(), 6u);
  const SafeLimits L;
  for (const std::string& f : files) {
    auto text = read_lesson_file(f, L);
    ASSERT_TRUE(text.ok()) << text.error();
    auto l = parse_lesson(*text, f);
    ASSERT_TRUE(l.ok()) << l.error();
    EXPECT_GE(l->steps.size(), 2u) << f;
    EXPECT_FALSE(lesson_title(*text).empty()) << f;
    for (const LessonStep& s : l->steps) {
      bool has_text = false;
      for (const ScriptLine& line : s.lines) {
        const auto w = split_words(line.text);
        std::string e;
        EXPECT_TRUE(check_safe_command(w, L, e)) << f << ":" << line.number << ": " << e;
        if (w[0] == "caption" && w.size() > 1 && w[1] == "text") has_text = true;
        if (w[0] == "layout") {
          EXPECT_TRUE(parse_layout(w).ok()) << f << ":" << line.number;
        }
      }
      EXPECT_TRUE(has_text) << f << ": step '" << s.title << "' has no caption text";
    }
  }
}

}  // namespace
}  // namespace sf::gui
