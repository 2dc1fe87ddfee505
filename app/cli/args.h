// args.h — a small, strict command-line parser: unknown flags and missing values are errors that
// name the flag, never silently ignored.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sf::cli {

class Args {
 public:
  // `flags`: flags without a value; `options`: flags that take one value.
  Args(int argc, char** argv, int first, std::set<std::string> flags, std::set<std::string> options);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool has(const std::string& flag) const { return present_.count(flag) > 0; }
  std::optional<std::string> get(const std::string& opt) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed getters: on a bad value they record an error naming the option and the value found.
  std::string str(const std::string& opt, const std::string& fallback = "");
  long long integer(const std::string& opt, long long fallback, long long lo, long long hi);
  double real(const std::string& opt, double fallback);
  // Records "missing required option --x" when absent.
  bool require(const std::string& opt);

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> present_;
  std::vector<std::string> positional_;
  std::string error_;
};

// Before any work is done: the output file must not be one of the inputs (writing it would
// replace the input) and its folder must accept a new file. `inputs` pairs an option name with
// its path. Prints "stepformer <cmd>: ..." and returns the exit code (2: the same file as an
// input, 1: folder missing or not writable), or 0 when the output can be written.
int check_output(const std::string& cmd, const std::string& out_option, const std::string& out,
                 const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace sf::cli
