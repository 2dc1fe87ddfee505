// tensor_placement.h — stored tensors copied straight from a mapped safetensors file into a
// model's parameter storage: once, in file order, widening F16/BF16 to F32 on the way, and
// handing each file page back to the kernel once it has been read (io/mapped_file.h).
//
// Both loaders use it: stepformer's own files (every tensor a plain copy, io/checkpoint.cpp) and
// Hugging Face hub files (transposed Conv1D weights, the fused c_attn split into Q/K/V, ...,
// io/hf_weights.cpp).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/result.h"
#include "base/tensor.h"
#include "io/mapped_file.h"
#include "io/safetensors.h"

namespace sf {

// Where (part of) a stored tensor goes. The stored tensor is read as a matrix (R, C): a 1-D
// tensor is (1, C), a 2-D one (R, C), and leading dimensions of 1 are dropped.
//   transpose false: dest(r, c) = src(row0 + r, col0 + c)   (nn.Linear (out, in), biases, tables,
//                                                           GPT-NeoX's per-head rows of query_key_value)
//   transpose true:  dest(r, c) = src(c, col0 + r)          (GPT-2's Conv1D (in, out) -> (out, in))
//
// dest16 (instead of dest): a matrix kept in the file's 16-bit form (base/half.h), copied as
// stored; the stored dtype must be `storage` (BF16 or F16), and transpose false.
struct Placement {
  float* dest;  // row-major (rows, cols)
  int rows, cols;
  bool transpose = false;
  int col0 = 0;
  int row0 = 0;  // (transpose false only)
  uint16_t* dest16 = nullptr;
  WeightStorage storage = WeightStorage::F32;
};

struct TensorPlan {
  std::vector<int64_t> shape;  // the shape the file must hold
  std::vector<Placement> to;   // where it goes; empty: validated for shape, not read (tied copies)
  bool required = true;        // false: may be absent (the destination keeps its value)
  bool ignore = false;         // any dtype and shape, never read (buffers: causal masks, position_ids)
  // Optional: the tensor widened to F32 (R, C); returns "" or what is wrong with it (Marian's
  // stored position table must equal the one stepformer computes).
  std::function<std::string(const Mat&)> check = nullptr;
};

// What a placement pass found: the stored float dtypes, for ModelSource.
struct PlacementReport {
  std::vector<std::string> dtypes;    // distinct float dtypes read, in file order ("F32", "F16", ...)
  bool converted() const;             // any non-F32 dtype was widened
  std::string dtype_summary() const;  // "F32", "F16", "F16+F32"
};

// Names the header's entries through `canonical` (e.g. strips a "transformer." prefix), then
// places every planned tensor. Errors (each names the tensor, what was expected, what was found):
// a name with no plan (`describe` tells what kind of file was expected), a canonical name twice,
// a wrong shape, a dtype other than F32/F16/BF16, a NaN/Inf, a required tensor missing.
Result<PlacementReport> place_tensors(MappedFile& file, const SafetensorsHeader& header,
                                      std::map<std::string, TensorPlan>& plans, const std::string& what,
                                      const std::function<std::string(const std::string&)>& canonical,
                                      const std::string& describe);

// One shard of a sharded checkpoint: the same checks, except that a required tensor may sit in
// another shard. `seen` (canonical name -> stored name) gathers the names across the shards and
// `report` the dtypes; after the last shard, check_all_placed reports what no shard held.
Result<bool> place_shard(MappedFile& file, const SafetensorsHeader& header, std::map<std::string, TensorPlan>& plans,
                         const std::string& what, const std::function<std::string(const std::string&)>& canonical,
                         const std::string& describe, std::map<std::string, std::string>& seen,
                         PlacementReport& report);
Result<bool> check_all_placed(const std::map<std::string, TensorPlan>& plans,
                              const std::map<std::string, std::string>& seen, const std::string& what);

}  // namespace sf
