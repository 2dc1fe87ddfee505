// safetensors.h — the file format of models, traces and fixtures.
//
// Layout: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the raw little-endian data block that the offsets index.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/tensor.h"
#include "io/atomic_file.h"

namespace sf {

enum class DType { F32, I64 };

struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<float> f32;    // when dtype == F32
  std::vector<int64_t> i64;  // when dtype == I64

  int64_t numel() const;
  static Tensor from_mat(const Mat& m);                              // shape (rows, cols)
  static Tensor from_mat(const Mat& m, std::vector<int64_t> shape);  // reshaped view of the data
  static Tensor from_ids(const std::vector<int>& ids);               // I64, shape (n)
  static Tensor from_vec(const std::vector<float>& v, std::vector<int64_t> shape);
};

struct TensorFile {
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file order

  const Tensor* find(const std::string& name) const;
  void add(std::string name, Tensor t) { tensors.emplace_back(std::move(name), std::move(t)); }
};

// One tensor as the header describes it, before any data is read (what a mapped reader needs).
struct TensorEntry {
  std::string name;
  std::string dtype;  // as stored: "F32", "F16", "BF16", "I64", "U8", "BOOL", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets inside the data block
  int64_t numel() const;
};

struct SafetensorsHeader {
  std::map<std::string, std::string> metadata;
  std::vector<TensorEntry> entries;  // in data order (by begin offset)
  uint64_t data_start = 0;           // file offset of the data block: 8 + header length
};

// Bytes per element of a safetensors dtype name ("F32" -> 4, "BF16" -> 2); 0 for an unknown name.
size_t dtype_size(const std::string& dtype);

// Validates the header of a file of `size` bytes held at `bytes` (a mapped file): everything
// read_safetensors checks except the dtype restriction — every safetensors dtype is accepted.
Result<SafetensorsHeader> parse_safetensors_header(const char* bytes, uint64_t size, const std::string& what);

// Reads and validates everything: header length within the file, JSON well formed, every entry's
// dtype known (F32, I64; other safetensors dtypes are rejected by name), offsets inside the data
// block, non-overlapping, and equal to shape x dtype size.
Result<TensorFile> read_safetensors(const std::string& path);
// Only the __metadata__ of a file (its header is read, validated, and the tensors left unread).
Result<std::map<std::string, std::string>> read_safetensors_metadata(const std::string& path);
Result<TensorFile> parse_safetensors(const std::string& bytes, const std::string& what);

// Writes through write_file_atomic (io/atomic_file.h): a crash never leaves a half-written file.
Result<bool> write_safetensors(const std::string& path, const TensorFile& file);
std::string serialize_safetensors(const TensorFile& file);

}  // namespace sf
