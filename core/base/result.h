// result.h — errors from outside input travel as values, not asserts.
//
// A Result<T> holds either a T or a message that names the thing, what was expected and what was
// found ("tensor 'generator.weight': shape (9, 16), expected (12, 16)").
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace sf {

struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error e) : error_(std::move(e.message)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

// Used inside loaders, where a deep validation is easier to write with early exits; every public
// entry point catches it and returns a Result.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace sf
