// Safe mode (app/gui/safe_mode.h, docs/lessons.md): a lesson's outputs go only into the exports
// folder under fresh names, hostile names included; lesson files and commands stay within limits.
#include "safe_mode.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "io/atomic_file.h"
#include "script_parse.h"
#include "test_util.h"

namespace sf::gui {
namespace {

namespace fs = std::filesystem;
using sf::test::read_text;
using sf::test::temp_path;

// A per-test folder holding the exports folder and an "outside" folder with files a hostile
// lesson aims at; removed at the end.
struct Sandbox {
  std::string root = temp_path("safe_mode");
  std::string exports = root + "/data/stepformer/exports";
  std::string outside = root + "/outside";
  Sandbox() {
    fs::remove_all(root);
    fs::create_directories(outside);
    std::ofstream(outside + "/precious.txt") << "keep me";
  }
  ~Sandbox() { fs::remove_all(root); }
  // Every file outside the exports folder, with its contents.
  std::map<std::string, std::string> outside_files() const {
    std::map<std::string, std::string> m;
    for (auto& e : fs::recursive_directory_iterator(root)) {
      const std::string p = e.path().string();
      if (p.rfind(exports, 0) == 0 || !e.is_regular_file()) continue;
      m[p] = read_text(p);
    }
    return m;
  }
};

// Writes bytes as the explorer's writers do: atomically, over the reservation.
void write_placed(const Placement& p, const std::string& bytes) { ASSERT_TRUE(write_file_atomic(p.path, bytes).ok()); }

TEST(SafeMode, PlainNameIsKeptInsideTheExportsFolder) {
  Sandbox s;
  auto p = place_export(s.exports, "attention.png", false);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->path, s.exports + "/attention.png");
  EXPECT_FALSE(p->rewritten);
  struct stat st;
  ASSERT_EQ(stat(p->path.c_str(), &st), 0);  // reserved: an empty regular file
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 0);
}

TEST(SafeMode, HostileNamesAreRewrittenInsideTheFolder) {
  Sandbox s;
  const auto before = s.outside_files();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {s.outside + "/precious.txt", "precious.txt"},  // absolute, an existing file
      {"../../outside/precious.txt", "precious-2.txt"},
      {"..", "export"},
      {".hidden", "hidden"},
      {"a b/c d.png", "c_d.png"},
      {"/etc/passwd", "passwd"},
      {"sub/../../x.png", "x.png"},
      {"", "export-2"},
      {"~/.bashrc", "bashrc"},
      // A long name whose last 120 characters start with dots: cut first, then the dots go.
      {std::string(200, 'x') + std::string(20, '.') + std::string(100, 'y'), std::string(100, 'y')},
  };
  for (const auto& [req, name] : cases) {
    auto p = place_export(s.exports, req, false);
    ASSERT_TRUE(p.ok()) << req << ": " << p.error();
    EXPECT_EQ(p->path, s.exports + "/" + name) << req;
    EXPECT_TRUE(p->rewritten) << req;
    write_placed(*p, "lesson output");
  }
  EXPECT_EQ(s.outside_files(), before);
  EXPECT_EQ(read_text(s.outside + "/precious.txt"), "keep me");
}

TEST(SafeMode, ExistingFileIsNeverOverwritten) {
  Sandbox s;
  ASSERT_TRUE(make_dirs(s.exports).ok());
  std::ofstream(s.exports + "/shot.png") << "earlier export";
  std::ofstream(s.exports + "/shot-2.png") << "another";
  auto p = place_export(s.exports, "shot.png", false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->path, s.exports + "/shot-3.png");
  EXPECT_TRUE(p->rewritten);
  write_placed(*p, "new");
  EXPECT_EQ(read_text(s.exports + "/shot.png"), "earlier export");
  EXPECT_EQ(read_text(s.exports + "/shot-2.png"), "another");
  EXPECT_EQ(read_text(s.exports + "/shot-3.png"), "new");
}

// A symbolic link inside the exports folder pointing outside (dangling or not) is an existing
// entry: the reservation takes the next name and the link's target is untouched.
TEST(SafeMode, SymbolicLinkLeavingTheFolderIsNotFollowed) {
  Sandbox s;
  ASSERT_TRUE(make_dirs(s.exports).ok());
  ASSERT_EQ(symlink((s.outside + "/precious.txt").c_str(), (s.exports + "/link.txt").c_str()), 0);
  ASSERT_EQ(symlink((s.outside + "/not-yet.txt").c_str(), (s.exports + "/dangling.txt").c_str()), 0);
  ASSERT_EQ(symlink(s.outside.c_str(), (s.exports + "/dir").c_str()), 0);
  const auto before = s.outside_files();
  for (const std::string req : {"link.txt", "dangling.txt", "dir/precious.txt", "dir"}) {
    auto p = place_export(s.exports, req, false);
    ASSERT_TRUE(p.ok()) << req;
    EXPECT_EQ(fs::path(p->path).parent_path().string(), s.exports) << req;
    EXPECT_FALSE(fs::is_symlink(p->path)) << req;
    write_placed(*p, "x");
  }
  EXPECT_EQ(s.outside_files(), before);
  EXPECT_FALSE(fs::exists(s.outside + "/not-yet.txt"));
  EXPECT_TRUE(fs::is_symlink(s.exports + "/link.txt"));
}

TEST(SafeMode, FolderOutputsReserveAFreshFolder) {
  Sandbox s;
  ASSERT_TRUE(make_dirs(s.exports + "/rec.npy").ok());
  auto p = place_export(s.exports, "../rec.npy", true);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->path, s.exports + "/rec-2.npy");
  EXPECT_TRUE(fs::is_directory(p->path));
}

TEST(SafeMode, ExportsFolderFollowsXdgDataHome) {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string keep = old ? old : "", home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("XDG_DATA_HOME", "/data/home", 1);
  EXPECT_EQ(exports_dir(), "/data/home/stepformer/exports");
  setenv("XDG_DATA_HOME", "relative", 1);  // not absolute: ignored, as the XDG spec says
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(exports_dir(), "/home/u/.local/share/stepformer/exports");
  setenv("HOME", home.c_str(), 1);
  if (old)
    setenv("XDG_DATA_HOME", keep.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
}

TEST(SafeMode, PathsUnderHomeAreShownFromTilde) {
  const char* old = std::getenv("HOME");
  const std::string keep = old ? old : "";
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(shown_path("/home/u/.local/share/stepformer/exports"), "~/.local/share/stepformer/exports");
  EXPECT_EQ(shown_path("/home/u"), "~");
  EXPECT_EQ(shown_path("/home/user/exports"), "/home/user/exports");  // a longer name, not below HOME
  EXPECT_EQ(shown_path("/data/exports"), "/data/exports");
  EXPECT_EQ(shown_path("stepformer-exports"), "stepformer-exports");
  setenv("HOME", "/home/u/", 1);  // a trailing slash names the same folder
  EXPECT_EQ(shown_path("/home/u/x"), "~/x");
  setenv("HOME", "/", 1);  // every absolute path is under "/": none is rewritten
  EXPECT_EQ(shown_path("/data/exports"), "/data/exports");
  setenv("HOME", "relative", 1);
  EXPECT_EQ(shown_path("relative/x"), "relative/x");
  if (old)
    setenv("HOME", keep.c_str(), 1);
  else
    unsetenv("HOME");
}

TEST(SafeMode, MakeDirsRefusesAFileInThePath) {
  Sandbox s;
  std::ofstream(s.root + "/file") << "x";
  auto r = make_dirs(s.root + "/file/exports");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("is not a folder"), std::string::npos) << r.error();
}

TEST(SafeMode, LessonFilesAreBounded) {
  Sandbox s;
  SafeLimits L;
  L.max_file_bytes = 1000;
  L.max_lines = 3;
  const std::string big = s.root + "/big.txt";
  std::ofstream(big) << std::string(1001, '#');
  auto r = read_lesson_file(big, L);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("1001 bytes"), std::string::npos) << r.error();
  const std::string bin = s.root + "/bin.txt";
  std::ofstream(bin, std::ios::binary) << std::string("model x\n\0\x01\x02", 11);
  r = read_lesson_file(bin, L);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("NUL byte at offset 8"), std::string::npos) << r.error();
  const std::string many = s.root + "/many.txt";
  std::ofstream(many) << "home\nhome\n# comment\nhome\nhome\n";
  r = read_lesson_file(many, L);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("4 command lines"), std::string::npos) << r.error();
  const std::string ok = s.root + "/ok.txt";
  std::ofstream(ok) << "home\n# comment\nhome\nend\n";
  r = read_lesson_file(ok, L);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, "home\n# comment\nhome\nend\n");
  EXPECT_FALSE(read_lesson_file(s.root, L).ok());  // a folder
  EXPECT_FALSE(read_lesson_file(s.root + "/missing.txt", L).ok());
  ASSERT_EQ(mkfifo((s.root + "/fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_lesson_file(s.root + "/fifo", L).ok());  // refused, not waited on
}

TEST(SafeMode, CommandsAreBounded) {
  const SafeLimits L;
  std::string e;
  const auto ok = [&](const std::string& line) {
    e.clear();
    return check_safe_command(split_words(line), L, e);
  };
  EXPECT_TRUE(ok("wait 600"));
  EXPECT_FALSE(ok("wait 601"));
  EXPECT_NE(e.find("at most 600"), std::string::npos) << e;
  EXPECT_FALSE(ok("wait 2147483647"));
  EXPECT_TRUE(ok("step 200"));
  EXPECT_FALSE(ok("next-token 201"));
  EXPECT_FALSE(ok("compare-step 100000"));
  EXPECT_FALSE(ok("quit"));
  EXPECT_FALSE(ok("train-save /tmp/x"));
  EXPECT_TRUE(ok("train-both task=reverse steps=3000"));
  EXPECT_FALSE(ok("train-both task=reverse steps=3001"));
  EXPECT_NE(e.find("steps in a lesson is at most 3000"), std::string::npos) << e;
  EXPECT_FALSE(ok("train-both batch=100000"));
  EXPECT_FALSE(ok("gradnorms layers=1000"));
  EXPECT_TRUE(ok("gradnorms layers=6 seeds=3"));
  EXPECT_FALSE(ok("wait-training 100000"));
  EXPECT_FALSE(ok("max-len 1000000"));
  EXPECT_FALSE(ok("beam-width 17"));
  EXPECT_TRUE(ok("screenshot /etc/passwd"));  // allowed: the path is rewritten, not refused
}

TEST(SafeMode, OutputWords) {
  EXPECT_EQ(output_word(split_words("screenshot a.png")), 1);
  EXPECT_EQ(output_word(split_words("export-recording r.npy")), 1);
  EXPECT_EQ(output_word(split_words("export-panel attention a.png")), 2);
  EXPECT_EQ(output_word(split_words("export-heatmap attention a.png")), 2);
  EXPECT_EQ(output_word(split_words("export-plot loss a.csv")), 2);
  EXPECT_EQ(output_word(split_words("model x.safetensors")), 0);
  EXPECT_TRUE(output_is_folder(split_words("export-recording r.npy")));
  EXPECT_TRUE(output_is_folder(split_words("export-recording r.csv")));
  EXPECT_FALSE(output_is_folder(split_words("export-recording r.safetensors")));
}

TEST(ScriptParse, Vectors) {
  std::vector<float> v;
  ASSERT_TRUE(parse_vector("1.75*64", v));
  EXPECT_EQ(v, std::vector<float>(64, 1.75f));
  ASSERT_TRUE(parse_vector("8,0*3,-1.5", v));
  EXPECT_EQ(v, (std::vector<float>{8, 0, 0, 0, -1.5f}));
  EXPECT_FALSE(parse_vector("", v));
  EXPECT_FALSE(parse_vector("1,,2", v));
  EXPECT_FALSE(parse_vector("1*0", v));
  EXPECT_FALSE(parse_vector("1*5000", v));
  EXPECT_FALSE(parse_vector("nan", v));
  EXPECT_FALSE(parse_vector("1,x", v));
  EXPECT_FALSE(parse_vector("1*2147483647,1*2147483647", v));
}

}  // namespace
}  // namespace sf::gui
