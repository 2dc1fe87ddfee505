// scratch_dir.h — a temporary folder for a test process or a fuzz harness, so that a test run
// leaves nothing behind: made under $TMPDIR (ctest sets it to the run's scratch folder,
// tests/CMakeLists.txt; else /tmp) with a unique name, and removed with everything in it when the
// ScratchDir ends, unless keep() was called. No GoogleTest here: the libFuzzer harnesses use it too
// (test_util.h adds the per-test-process folder that is kept when a test fails).
#pragma once

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace sf::test {

class ScratchDir {
 public:
  // `label` names the folder (stepformer_<label>_XXXXXX); characters other than letters, digits,
  // '.', '-' and '_' become '_' (a parameterised test's name holds '/').
  explicit ScratchDir(const std::string& label) : owner_(::getpid()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string name = "stepformer_" + label + "_XXXXXX";
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + name;
    if (!::mkdtemp(dir.data())) {
      std::perror(("ScratchDir: cannot make a folder from the template " + dir).c_str());
      std::abort();
    }
    dir_ = dir;
  }
  // Removes the folder, only in the process that made it (a forked child, as in a death test,
  // leaves it to its parent).
  ~ScratchDir() {
    if (keep_ || ::getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void keep() { keep_ = true; }
  bool owned_here() const { return ::getpid() == owner_; }

 private:
  std::string dir_;
  pid_t owner_;
  bool keep_ = false;
};

}  // namespace sf::test
