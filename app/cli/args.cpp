#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "io/atomic_file.h"

namespace sf::cli {

Args::Args(int argc, char** argv, int first, std::set<std::string> flags, std::set<std::string> options) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string value;
      bool inline_value = false;
      if (auto eq = a.find('='); eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      if (flags.count(a)) {
        present_.insert(a);
      } else if (options.count(a)) {
        if (!inline_value) {
          if (i + 1 >= argc) {
            error_ = "option " + a + " expects a value, found the end of the command line";
            return;
          }
          value = argv[++i];
        }
        present_.insert(a);
        values_[a] = value;
      } else {
        error_ = "unknown option " + a;
        return;
      }
    } else {
      positional_.push_back(a);
    }
  }
}

std::optional<std::string> Args::get(const std::string& opt) const {
  auto it = values_.find(opt);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::str(const std::string& opt, const std::string& fallback) { return get(opt).value_or(fallback); }

long long Args::integer(const std::string& opt, long long fallback, long long lo, long long hi) {
  auto v = get(opt);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno) {
    if (error_.empty()) error_ = "option " + opt + " expects an integer, found '" + *v + "'";
    return fallback;
  }
  if (x < lo || x > hi) {
    if (error_.empty())
      error_ = "option " + opt + " expects " + std::to_string(lo) + ".." + std::to_string(hi) + ", found " + *v;
    return fallback;
  }
  return x;
}

double Args::real(const std::string& opt, double fallback) {
  auto v = get(opt);
  if (!v) return fallback;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(x)) {
    if (error_.empty()) error_ = "option " + opt + " expects a number, found '" + *v + "'";
    return fallback;
  }
  return x;
}

bool Args::require(const std::string& opt) {
  if (values_.count(opt)) return true;
  if (error_.empty()) error_ = "missing required option " + opt;
  return false;
}

int check_output(const std::string& cmd, const std::string& out_option, const std::string& out,
                 const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (const auto& [option, path] : inputs)
    if (same_file(out, path)) {
      std::cerr << "stepformer " << cmd << ": " << out_option << " '" << out << "' is the same file as " << option
                << "; choose another output file (the input would be replaced)\n";
      return 2;
    }
  if (auto ok = check_writable(out); !ok) {
    std::cerr << "stepformer " << cmd << ": " << ok.error() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sf::cli
