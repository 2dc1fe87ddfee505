#include "io/tensor_placement.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "base/shape.h"

namespace sf {

namespace {

// n elements of `dtype` at src (any alignment) -> out (F32).
void widen(const char* src, const std::string& dtype, size_t n, float* out) {
  if (dtype == "F32") {
    std::memcpy(out, src, n * 4);
  } else if (dtype == "F16") {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      out[i] = half_to_float(h, WeightStorage::F16);
    }
  } else {  // BF16: the upper half of a float
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(out + i, &bits, 4);
    }
  }
}

bool is_float_dtype(const std::string& d) { return d == "F32" || d == "F16" || d == "BF16"; }

// The index of the first NaN/Inf among n floats, or -1. A float is NaN or Inf exactly when its
// 8 exponent bits are all ones; the OR over that test vectorises (a float compare would not).
int64_t first_non_finite(const float* x, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, x + i, 4);
    any |= static_cast<uint32_t>((b & 0x7f800000u) == 0x7f800000u);
  }
  if (!any) return -1;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return static_cast<int64_t>(i);
  return -1;
}

// Reads one stored tensor (R, C) into its placements.
class Placer {
 public:
  Placer(MappedFile& file, uint64_t data_start, const TensorEntry& e, const std::string& what)
      : file_(file), e_(e), what_(what), elem_(dtype_size(e.dtype)) {
    src_ = file.data() + data_start + e.begin;
    file_begin_ = data_start + e.begin;
    C_ = e.shape.empty() ? 1 : e.shape.back();
    R_ = C_ == 0 ? 0 : e.numel() / C_;
  }

  void place(const Placement& p, bool release_as_you_go) {
    if (p.dest16) return place16(p, release_as_you_go);
    if (!p.transpose && p.col0 == 0 && p.cols == C_) return contiguous(p, release_as_you_go);
    if (!p.transpose) {
      for (int r = 0; r < p.rows; ++r) read(p.row0 + r, p.col0, p.cols, p.dest + int64_t{r} * p.cols);
      return;
    }
    // dest (rows, cols) = src(0..cols, col0..col0+rows)ᵀ, a block of source rows at a time.
    constexpr int kBlock = 16;
    Mat buf(kBlock, p.rows);
    Eigen::Map<Mat> dest(p.dest, p.rows, p.cols);
    for (int i = 0; i < p.cols; i += kBlock) {
      const int b = std::min(kBlock, p.cols - i);
      for (int j = 0; j < b; ++j) read(i + j, p.col0, p.rows, buf.row(j).data());
      dest.middleCols(i, b) = buf.topRows(b).transpose();
    }
  }

  Mat whole() {
    Mat m(R_, C_);
    for (int64_t r = 0; r < R_; ++r) read(r, 0, C_, m.row(r).data());
    return m;
  }

 private:
  // src(r, c0 .. c0 + n) -> out, checked finite.
  void read(int64_t r, int64_t c0, int64_t n, float* out) {
    widen(src_ + (r * C_ + c0) * static_cast<int64_t>(elem_), e_.dtype, static_cast<size_t>(n), out);
    check(out, static_cast<size_t>(n), r * C_ + c0);
  }

  // Rows [row0, row0 + rows) are one block of the file: copy in chunks, giving pages back behind us.
  void contiguous(const Placement& p, bool release_as_you_go) {
    const int64_t total = int64_t{p.rows} * p.cols, first = int64_t{p.row0} * C_;
    constexpr int64_t kChunk = 1 << 20;  // elements (4 MB of F32)
    for (int64_t i = 0; i < total; i += kChunk) {
      const int64_t n = std::min(kChunk, total - i);
      widen(src_ + (first + i) * static_cast<int64_t>(elem_), e_.dtype, static_cast<size_t>(n), p.dest + i);
      check(p.dest + i, static_cast<size_t>(n), first + i);
      if (release_as_you_go)
        file_.release_before(file_begin_ + static_cast<uint64_t>((first + i + n) * static_cast<int64_t>(elem_)));
    }
  }

  // A 16-bit matrix copied as stored: rows [row0, row0 + rows), columns [col0, col0 + cols).
  void place16(const Placement& p, bool release_as_you_go) {
    if (e_.dtype != to_string(p.storage))
      throw InputError(what_ + ": tensor '" + e_.name + "' has dtype " + e_.dtype + ", expected " +
                       to_string(p.storage) + " like the checkpoint's other matrices");
    const int64_t first = int64_t{p.row0} * C_ + p.col0;
    if (p.col0 == 0 && p.cols == C_) {  // one block of the file: in chunks, pages handed back behind us
      const int64_t total = int64_t{p.rows} * p.cols;
      constexpr int64_t kChunk = 1 << 21;  // elements (4 MB of 16-bit values)
      for (int64_t i = 0; i < total; i += kChunk) {
        const int64_t n = std::min(kChunk, total - i);
        copy16(first + i, n, p.dest16 + i, p.storage);
        if (release_as_you_go) file_.release_before(file_begin_ + static_cast<uint64_t>((first + i + n) * 2));
      }
      return;
    }
    for (int r = 0; r < p.rows; ++r) copy16(first + int64_t{r} * C_, p.cols, p.dest16 + int64_t{r} * p.cols, p.storage);
  }

  // n stored values from flat index flat0 -> out, checked finite: a BF16 or F16 is NaN or Inf
  // exactly when its exponent bits are all ones.
  void copy16(int64_t flat0, int64_t n, uint16_t* out, WeightStorage s) {
    std::memcpy(out, src_ + flat0 * 2, static_cast<size_t>(n) * 2);
    const uint16_t exp = s == WeightStorage::BF16 ? 0x7f80u : 0x7c00u;
    uint32_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= static_cast<uint32_t>((out[i] & exp) == exp);
    if (!any) return;
    for (int64_t i = 0; i < n; ++i)
      if ((out[i] & exp) == exp) {
        const bool nan = std::isnan(half_to_float(out[i], s));
        throw InputError(what_ + ": tensor '" + e_.name + "' holds " + (nan ? "NaN" : "Inf") + " at flat index " +
                         std::to_string(flat0 + i) + "; expected finite weights");
      }
  }

  void check(const float* x, size_t n, int64_t flat0) {
    const int64_t bad = first_non_finite(x, n);
    if (bad >= 0)
      throw InputError(what_ + ": tensor '" + e_.name + "' holds " + (std::isnan(x[bad]) ? "NaN" : "Inf") +
                       " at flat index " + std::to_string(flat0 + bad) + "; expected finite weights");
  }

  MappedFile& file_;
  const TensorEntry& e_;
  const std::string& what_;
  size_t elem_;
  const char* src_;
  uint64_t file_begin_;
  int64_t R_, C_;
};

void place_file(MappedFile& file, const SafetensorsHeader& header, std::map<std::string, TensorPlan>& plans,
                const std::string& what, const std::function<std::string(const std::string&)>& canonical,
                const std::string& describe, std::map<std::string, std::string>& seen, PlacementReport& report) {
  for (const TensorEntry& e : header.entries) {
    const std::string name = canonical(e.name);
    auto it = plans.find(name);
    if (it == plans.end()) throw InputError(what + ": unexpected tensor '" + e.name + "'" + describe);
    if (auto [s, fresh] = seen.emplace(name, e.name); !fresh)
      throw InputError(what + ": tensors '" + s->second + "' and '" + e.name + "' are both '" + name + "'");
    const TensorPlan& plan = it->second;
    if (plan.ignore) continue;
    if (!is_float_dtype(e.dtype))
      throw InputError(what + ": tensor '" + e.name + "' has dtype " + e.dtype + ", expected F32 (or F16, BF16)");
    if (e.shape != plan.shape)
      throw InputError(what + ": tensor '" + e.name + "': shape " + shape_str(e.shape) + ", expected " +
                       shape_str(plan.shape));
    if (std::find(report.dtypes.begin(), report.dtypes.end(), e.dtype) == report.dtypes.end())
      report.dtypes.push_back(e.dtype);
    Placer placer(file, header.data_start, e, what);
    if (plan.check) {
      const std::string bad = plan.check(placer.whole());
      if (!bad.empty()) throw InputError(what + ": tensor '" + e.name + "': " + bad);
    }
    for (const Placement& p : plan.to) placer.place(p, plan.to.size() == 1);
    file.release_before(header.data_start + e.end);
  }
}

void check_placed(const std::map<std::string, TensorPlan>& plans, const std::map<std::string, std::string>& seen,
                  const std::string& what) {
  for (auto& [name, plan] : plans)
    if (plan.required && !plan.ignore && !seen.count(name))
      throw InputError(what + ": missing tensor '" + name + "' of shape " + shape_str(plan.shape));
}

PlacementReport place(MappedFile& file, const SafetensorsHeader& header, std::map<std::string, TensorPlan>& plans,
                      const std::string& what, const std::function<std::string(const std::string&)>& canonical,
                      const std::string& describe) {
  PlacementReport report;
  std::map<std::string, std::string> seen;  // canonical -> stored name
  place_file(file, header, plans, what, canonical, describe, seen, report);
  check_placed(plans, seen, what);
  return report;
}

}  // namespace

bool PlacementReport::converted() const {
  return std::any_of(dtypes.begin(), dtypes.end(), [](const std::string& d) { return d != "F32"; });
}

std::string PlacementReport::dtype_summary() const {
  std::vector<std::string> d = dtypes;
  std::sort(d.begin(), d.end());
  std::string s;
  for (auto& x : d) s += (s.empty() ? "" : "+") + x;
  return s.empty() ? "F32" : s;
}

Result<PlacementReport> place_tensors(MappedFile& file, const SafetensorsHeader& header,
                                      std::map<std::string, TensorPlan>& plans, const std::string& what,
                                      const std::function<std::string(const std::string&)>& canonical,
                                      const std::string& describe) {
  try {
    return place(file, header, plans, what, canonical, describe);
  } catch (const InputError& e) {
    return Error{e.what()};
  }
}

Result<bool> place_shard(MappedFile& file, const SafetensorsHeader& header, std::map<std::string, TensorPlan>& plans,
                         const std::string& what, const std::function<std::string(const std::string&)>& canonical,
                         const std::string& describe, std::map<std::string, std::string>& seen,
                         PlacementReport& report) {
  try {
    place_file(file, header, plans, what, canonical, describe, seen, report);
    return true;
  } catch (const InputError& e) {
    return Error{e.what()};
  }
}

Result<bool> check_all_placed(const std::map<std::string, TensorPlan>& plans,
                              const std::map<std::string, std::string>& seen, const std::string& what) {
  try {
    check_placed(plans, seen, what);
    return true;
  } catch (const InputError& e) {
    return Error{e.what()};
  }
}

}  // namespace sf
