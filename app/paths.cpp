#include "paths.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace sf {

bool dir_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_model_dir(const std::string& p) { return dir_exists(p) && file_exists(p + "/config.json"); }

namespace {

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

}  // namespace

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string base_name(const std::string& path) {
  const size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path;
  const std::string p = path.substr(0, end + 1);
  const size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string find_resource_dir(const std::string& sub) {
  std::vector<std::string> candidates;
  if (const char* home = std::getenv("STEPFORMER_HOME")) candidates.push_back(std::string(home) + "/" + sub);
  const std::string e = exe_dir();
  for (const char* up : {"/", "/../", "/../share/stepformer/", "/../../"}) candidates.push_back(e + up + sub);
#ifdef STEPFORMER_SOURCE_DIR
  candidates.push_back(std::string(STEPFORMER_SOURCE_DIR) + "/" + sub);
#endif
  for (auto& c : candidates) {
    if (!dir_exists(c)) continue;
    char real[PATH_MAX];  // /usr/share/stepformer/shaders rather than /usr/bin/../share/stepformer/shaders
    return realpath(c.c_str(), real) ? std::string(real) : c;
  }
  return "";
}

std::string find_model(const std::string& path) {
  if (path.empty() || file_exists(path) || dir_exists(path) || path[0] == '/') return path;
  std::vector<std::string> candidates;
  const std::string assets = "assets/";
  if (path.compare(0, assets.size(), assets) == 0) {  // assets/models/x.safetensors, from another folder
    if (const std::string dir = find_resource_dir("assets"); !dir.empty())
      candidates.push_back(dir + "/" + path.substr(assets.size()));
  } else if (path.find('/') != std::string::npos) {
    return path;
  } else if (const std::string models = find_resource_dir("assets/models"); !models.empty()) {
    candidates.push_back(models + "/" + path);
    candidates.push_back(models + "/" + path + ".safetensors");
  }
  for (const std::string& c : candidates)
    if (file_exists(c) || is_model_dir(c)) return c;
  return path;
}

std::vector<std::string> shipped_models() {
  std::vector<std::string> out;
  const std::string dir = find_resource_dir("assets/models");
  if (dir.empty()) return out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      const std::string ext = ".safetensors";
      if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0) out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  auto rank = [](const std::string& p) {
    const std::string b = base_name(p);
    if (b == "copy-preln.safetensors") return 0;
    if (b == "reverse-preln.safetensors") return 1;
    return 2;
  };
  std::sort(out.begin(), out.end(),
            [&](const std::string& a, const std::string& b) { return rank(a) != rank(b) ? rank(a) < rank(b) : a < b; });
  return out;
}

std::string settings_path() {
  std::string base;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    base = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::string(h) + "/.config";
  else
    return "stepformer-imgui.ini";
  mkdir(base.c_str(), 0755);
  const std::string dir = base + "/stepformer";
  mkdir(dir.c_str(), 0755);
  return dir + "/imgui.ini";
}

}  // namespace sf
