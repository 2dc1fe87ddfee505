// safe_mode.cpp — the exports folder, fresh reserved names, bounded lesson files and commands.
#include "safe_mode.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "script_parse.h"

namespace sf::gui {

std::string exports_dir() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x == '/') return std::string(x) + "/stepformer/exports";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.local/share/stepformer/exports";
  return "stepformer-exports";
}

std::string shown_path(const std::string& path) {
  const char* h = std::getenv("HOME");
  if (!h || *h != '/') return path;
  std::string home = h;
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  if (home == "/" || path.compare(0, home.size(), home) != 0) return path;
  if (path.size() == home.size()) return "~";
  return path[home.size()] == '/' ? "~" + path.substr(home.size()) : path;
}

Result<bool> make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) == 0) continue;
    struct stat st;
    if (errno == EEXIST && stat(part.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    return Error{"exports folder '" + dir + "': cannot create '" + part + "' (" +
                 (errno == EEXIST ? std::string("it exists and is not a folder") : std::strerror(errno)) + ")"};
  }
  return true;
}

namespace {

bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 120 || s[0] == '.') return false;
  for (char c : s)
    if (!plain_char(c)) return false;
  return true;
}

// The last component of `requested` (its last 120 characters), every character that is not plain
// replaced by '_', then its leading '.' and '_' removed (no hidden names, no "..") — after the cut,
// which could otherwise leave a name starting with '.'.
std::string sanitised(const std::string& requested) {
  std::string s = requested;
  while (!s.empty() && s.back() == '/') s.pop_back();
  if (const size_t slash = s.find_last_of('/'); slash != std::string::npos) s = s.substr(slash + 1);
  for (char& c : s)
    if (!plain_char(c)) c = '_';
  if (s.size() > 120) s = s.substr(s.size() - 120);
  while (!s.empty() && (s[0] == '.' || s[0] == '_')) s.erase(0, 1);
  if (s.empty() || s.find_first_not_of("._-") == std::string::npos) s = "export";
  return s;
}

// "name.ext" → ("name", ".ext"); the extension is what chooses a format (.png, .npy, …).
std::pair<std::string, std::string> split_ext(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return {name, ""};
  return {name.substr(0, dot), name.substr(dot)};
}

}  // namespace

Result<Placement> place_export(const std::string& dir, const std::string& requested, bool folder) {
  if (auto ok = make_dirs(dir); !ok) return Error{ok.error()};
  const bool kept = plain_name(requested);
  const std::string name = kept ? requested : sanitised(requested);
  const auto [stem, ext] = split_ext(name);
  for (int i = 1; i <= 1000; ++i) {
    const std::string candidate = dir + "/" + (i == 1 ? name : stem + "-" + std::to_string(i) + ext);
    if (folder) {
      if (mkdir(candidate.c_str(), 0755) == 0) return Placement{candidate, !kept || i > 1};
    } else {
      // O_EXCL fails on any existing entry, a symbolic link (even a dangling one) included.
      const int fd = open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0) {
        close(fd);
        return Placement{candidate, !kept || i > 1};
      }
    }
    if (errno != EEXIST) return Error{"export '" + candidate + "': " + std::strerror(errno)};
  }
  return Error{"export '" + name + "': 1000 files of that name already exist in " + dir};
}

Result<bool> check_lesson_text(const std::string& text, const std::string& name, const SafeLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    return Error{"lesson '" + name + "': " + std::to_string(text.size()) + " bytes, a lesson may have at most " +
                 std::to_string(limits.max_file_bytes)};
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    return Error{"lesson '" + name + "': a NUL byte at offset " + std::to_string(nul) +
                 " (expected a text file of script lines)"};
  const std::vector<ScriptLine> lines = split_script(text);
  if (static_cast<int>(lines.size()) > limits.max_lines)
    return Error{"lesson '" + name + "': " + std::to_string(lines.size()) +
                 " command lines, a lesson may have at most " + std::to_string(limits.max_lines)};
  for (const ScriptLine& l : lines)
    if (l.text.size() > limits.max_line_chars)
      return Error{"lesson '" + name + "': line " + std::to_string(l.number) + " has " + std::to_string(l.text.size()) +
                   " characters, at most " + std::to_string(limits.max_line_chars)};
  return true;
}

Result<std::string> read_lesson_file(const std::string& path, const SafeLimits& limits) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error{"lesson '" + path + "': cannot open (" + std::strerror(errno) + ")"};
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Error{"lesson '" + path + "': not a regular file"};
  }
  if (static_cast<size_t>(st.st_size) > limits.max_file_bytes) {
    close(fd);
    return Error{"lesson '" + path + "': " + std::to_string(st.st_size) + " bytes, a lesson may have at most " +
                 std::to_string(limits.max_file_bytes)};
  }
  std::string text;
  char buf[16384];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limits.max_file_bytes) break;  // the file grew while being read
  }
  close(fd);
  if (auto ok = check_lesson_text(text, path, limits); !ok) return Error{ok.error()};
  return text;
}

namespace {

// `key=value` options: each key in `bounds` must have an integer value ≤ its bound.
struct Bound {
  const char* key;
  int max;
};

bool bounded_options(const std::vector<std::string>& w, std::initializer_list<Bound> bounds, std::string& error) {
  for (size_t i = 1; i < w.size(); ++i) {
    const size_t eq = w[i].find('=');
    if (eq == std::string::npos) continue;
    const std::string k = w[i].substr(0, eq);
    for (const Bound& b : bounds) {
      if (k != b.key) continue;
      int n;
      if (!parse_int(w[i].substr(eq + 1), n) || n > b.max)
        return error = w[0] + ": " + k + " in a lesson is at most " + std::to_string(b.max) + ", found '" +
                       w[i].substr(eq + 1) + "'",
               false;
    }
  }
  return true;
}

bool bounded_arg(const std::vector<std::string>& w, int max, const char* what, std::string& error) {
  int n;
  if (w.size() < 2 || !parse_int(w[1], n) || n <= max) return true;  // a bad number is the command's own error
  return error = w[0] + ": a lesson " + what + " at most " + std::to_string(max) + ", found " + w[1], false;
}

}  // namespace

bool check_safe_command(const std::vector<std::string>& w, const SafeLimits& L, std::string& error) {
  if (w.empty()) return true;
  const std::string& c = w[0];
  if (c == "quit") return error = "quit: a lesson cannot close the app (close the lesson from its caption)", false;
  if (c == "train-save") return error = "train-save: a lesson cannot save models (exports only)", false;
  if (c == "wait-box") return error = "wait-box: a lesson waits a bounded number of frames (wait N)", false;
  if (c == "hover" || c == "click")
    return error = c + ": a lesson cannot use the pointer (it could reach File → Quit)", false;
  if (c == "wait") return bounded_arg(w, L.max_wait_frames, "waits", error);
  if (c == "wait-training") return bounded_arg(w, L.max_wait_seconds, "waits for training", error);
  if (c == "step" || c == "back" || c == "next-token" || c == "prev-token" || c == "compare-step" ||
      c == "compare-back" || c == "compare-token" || c == "compare-prev-token")
    return bounded_arg(w, L.max_count, "moves", error);
  if (c == "max-len") return bounded_arg(w, L.max_len, "decodes", error);
  if (c == "beam-width") return bounded_arg(w, L.max_beam, "keeps beams", error);
  if (c == "train-both")
    return bounded_options(w,
                           {{"steps", L.max_train_steps},
                            {"batch", L.max_train_batch},
                            {"d_model", L.max_d_model},
                            {"heads", L.max_heads},
                            {"eval_examples", 10 * L.max_train_batch},
                            {"warmup_steps", L.max_train_steps}},
                           error);
  if (c == "gradnorms")
    return bounded_options(w,
                           {{"layers", L.max_layers},
                            {"seeds", L.max_seeds},
                            {"d_model", L.max_d_model},
                            {"heads", L.max_heads},
                            {"d_ff", 4 * L.max_d_model},
                            {"batch", L.max_train_batch}},
                           error);
  return true;
}

int output_word(const std::vector<std::string>& w) {
  if (w.empty()) return 0;
  if (w[0] == "screenshot" || w[0] == "export-recording") return 1;
  if (w[0] == "export-panel" || w[0] == "export-heatmap" || w[0] == "export-plot") return 2;
  return 0;
}

bool output_is_folder(const std::vector<std::string>& w) {
  if (w.size() < 2 || w[0] != "export-recording") return false;
  const std::string& p = w[1];
  const auto ends = [&](const char* e) {
    const size_t n = std::strlen(e);
    return p.size() >= n && p.compare(p.size() - n, n, e) == 0;
  };
  return ends(".npy") || ends(".csv");
}

}  // namespace sf::gui
