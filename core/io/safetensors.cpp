#include "io/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/shape.h"

namespace sf {

using nlohmann::json;

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tensor Tensor::from_mat(const Mat& m) { return from_mat(m, {m.rows(), m.cols()}); }

Tensor Tensor::from_mat(const Mat& m, std::vector<int64_t> shape) {
  Tensor t;
  t.shape = std::move(shape);
  t.f32.assign(m.data(), m.data() + m.size());
  return t;
}

Tensor Tensor::from_ids(const std::vector<int>& ids) {
  Tensor t;
  t.dtype = DType::I64;
  t.shape = {static_cast<int64_t>(ids.size())};
  t.i64.assign(ids.begin(), ids.end());
  return t;
}

Tensor Tensor::from_vec(const std::vector<float>& v, std::vector<int64_t> shape) {
  Tensor t;
  t.shape = std::move(shape);
  t.f32 = v;
  return t;
}

const Tensor* TensorFile::find(const std::string& name) const {
  for (auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr uint64_t kMaxElements = 1ULL << 40;

// A JSON value for a message: at most 80 characters (a fuzzed shape can be megabytes long).
std::string short_dump(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// The header's dtypes and their element sizes (the safetensors specification's list).
constexpr std::pair<const char*, size_t> kDTypes[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
    {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};

// The 8-byte little-endian header length n, checked against the file and the limit.
uint64_t header_length(const char* bytes, uint64_t size, const std::string& what) {
  if (size < 8)
    throw InputError(what + ": expected at least an 8-byte header length, found a file of " + std::to_string(size) +
                     " bytes");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > size - 8)
    throw InputError(what + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(size) + " bytes): truncated or not a safetensors file");
  // The reference implementation's limit; a JSON DOM takes several times its text.
  if (n > kMaxHeaderBytes)
    throw InputError(what + ": header length " + std::to_string(n) + " exceeds the limit of " +
                     std::to_string(kMaxHeaderBytes) + " bytes");
  return n;
}

// __metadata__: an object of strings.
void read_metadata(const json& e, const std::string& what, SafetensorsHeader& f) {
  if (!e.is_object()) throw InputError(what + ": __metadata__ expected an object of strings");
  for (auto m = e.begin(); m != e.end(); ++m) {
    if (!m.value().is_string()) throw InputError(what + ": __metadata__['" + m.key() + "'] expected a string");
    f.metadata[m.key()] = m.value().get<std::string>();
  }
}

// One tensor's entry: a known dtype, a shape of at most 8 dimensions and 2^40 elements, and
// data_offsets inside the data block that hold exactly its bytes.
TensorEntry tensor_entry(const std::string& name, const json& e, uint64_t data_size, const std::string& what) {
  const std::string t = "tensor '" + name + "'";
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    throw InputError(what + ": " + t + " expected dtype, shape and data_offsets");
  if (!e["dtype"].is_string()) throw InputError(what + ": " + t + " dtype expected a string");
  TensorEntry ten;
  ten.name = name;
  ten.dtype = e["dtype"].get<std::string>();
  const size_t elem = dtype_size(ten.dtype);
  if (elem == 0) {
    std::string known;
    for (auto& [d, sz] : kDTypes) known += (known.empty() ? "" : ", ") + std::string(d);
    throw InputError(what + ": " + t + " has dtype " + short_dump(e["dtype"]) + ", expected one of " + known);
  }
  if (!e["shape"].is_array()) throw InputError(what + ": " + t + " shape expected a list");
  // The element count is checked against kMaxElements before each multiplication, so it never
  // overflows (a shape such as [2^40, 2^30] must not wrap around to a small count).
  uint64_t numel = 1;
  for (auto& s : e["shape"]) {
    if (!s.is_number_integer() || s.get<long long>() < 0 || static_cast<uint64_t>(s.get<long long>()) > kMaxElements)
      throw InputError(what + ": " + t + " shape expected non-negative integers up to 2^40, found " +
                       short_dump(e["shape"]));
    const auto d = static_cast<uint64_t>(s.get<int64_t>());
    if (ten.shape.size() >= 8) throw InputError(what + ": " + t + " shape has more than 8 dimensions");
    ten.shape.push_back(static_cast<int64_t>(d));
    if (d != 0 && numel > kMaxElements / d)
      throw InputError(what + ": " + t + " shape " + short_dump(e["shape"]) + " is too large (over 2^40 elements)");
    numel *= d;
  }
  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    throw InputError(what + ": " + t + " data_offsets expected [begin, end], found " + short_dump(off));
  uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
  if (b > en)
    throw InputError(what + ": " + t + " data_offsets [" + std::to_string(b) + ", " + std::to_string(en) +
                     "] are reversed");
  if (en > data_size)
    throw InputError(what + ": " + t + " data_offsets end " + std::to_string(en) + " runs past the data block (" +
                     std::to_string(data_size) + " bytes): truncated file");
  if (en - b != numel * elem)
    throw InputError(what + ": " + t + " has " + std::to_string(en - b) + " bytes, expected " +
                     std::to_string(numel * elem) + " for shape " + shape_str(ten.shape) + " x " + ten.dtype);
  ten.begin = b;
  ten.end = en;
  return ten;
}

// Sorts the entries by begin (file order, so save(load(x)) is reproducible and a mapped reader
// walks the file forwards) and refuses overlaps: a non-empty span overlaps an earlier one iff it
// starts before the furthest end seen so far (not only the previous span's end: [0,100] then [0,0]
// then [50,60]).
void sort_and_check_overlaps(std::vector<TensorEntry>& entries, const std::string& what) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const TensorEntry& a, const TensorEntry& b) { return a.begin < b.begin; });
  uint64_t furthest = 0;
  const TensorEntry* owner = nullptr;
  for (const TensorEntry& sp : entries) {
    if (sp.end == sp.begin) continue;
    if (owner && sp.begin < furthest)
      throw InputError(what + ": tensors '" + owner->name + "' and '" + sp.name + "' have overlapping data_offsets");
    if (sp.end > furthest) furthest = sp.end, owner = &sp;
  }
}

SafetensorsHeader parse_header(const char* bytes, uint64_t size, const std::string& what) {
  const uint64_t n = header_length(bytes, size, what);
  json h = json::parse(bytes + 8, bytes + 8 + n, nullptr, false);
  if (h.is_discarded() || !h.is_object())
    throw InputError(what + ": expected a JSON object as header, found bytes that do not parse");
  const uint64_t data_size = size - 8 - n;
  SafetensorsHeader f;
  f.data_start = 8 + n;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__")
      read_metadata(it.value(), what, f);
    else
      f.entries.push_back(tensor_entry(it.key(), it.value(), data_size, what));
  }
  sort_and_check_overlaps(f.entries, what);
  return f;
}

TensorFile parse(const std::string& bytes, const std::string& what) {
  SafetensorsHeader h = parse_header(bytes.data(), bytes.size(), what);
  const char* data = bytes.data() + h.data_start;
  TensorFile f;
  f.metadata = std::move(h.metadata);
  for (const TensorEntry& e : h.entries) {
    Tensor ten;
    ten.shape = e.shape;
    const size_t numel = static_cast<size_t>(e.numel());
    if (e.dtype == "F32") {
      ten.f32.resize(numel);
      if (numel) std::memcpy(ten.f32.data(), data + e.begin, numel * 4);
    } else if (e.dtype == "I64") {
      ten.dtype = DType::I64;
      ten.i64.resize(numel);
      if (numel) std::memcpy(ten.i64.data(), data + e.begin, numel * 8);
    } else {
      throw InputError(what + ": tensor '" + e.name + "' has dtype " + e.dtype +
                       ", expected F32 (or I64 for token ids)");
    }
    f.tensors.emplace_back(e.name, std::move(ten));
  }
  return f;
}

}  // namespace

size_t dtype_size(const std::string& dtype) {
  for (auto& [d, size] : kDTypes)
    if (dtype == d) return size;
  return 0;
}

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Result<SafetensorsHeader> parse_safetensors_header(const char* bytes, uint64_t size, const std::string& what) {
  try {
    return parse_header(bytes, size, what);
  } catch (const InputError& e) {
    return Error{e.what()};
  }
}

Result<TensorFile> parse_safetensors(const std::string& bytes, const std::string& what) {
  try {
    return parse(bytes, what);
  } catch (const InputError& e) {
    return Error{e.what()};
  }
}

Result<TensorFile> read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"'" + path + "': cannot open (missing file or no permission)"};
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_safetensors(ss.str(), "'" + path + "'");
}

Result<std::map<std::string, std::string>> read_safetensors_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"'" + path + "': cannot open (missing file or no permission)"};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  unsigned char len[8] = {0};
  if (size < 8 || !in.read(reinterpret_cast<char*>(len), 8))
    return Error{"'" + path + "': expected a safetensors file (8-byte header length), found " + std::to_string(size) +
                 " bytes"};
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > size - 8) n = size - 8;  // parse_safetensors_header says what is wrong
  // A header over the limit is refused by parse_safetensors_header before it reads past the length.
  const uint64_t keep = n > kMaxHeaderBytes ? 0 : n;
  std::string bytes(8 + keep, '\0');
  std::copy(len, len + 8, bytes.begin());
  if (!in.read(&bytes[8], static_cast<std::streamsize>(keep))) return Error{"'" + path + "': the header is cut short"};
  // The header is validated against the whole file's size; the data block is not read.
  auto h = parse_safetensors_header(bytes.data(), size, "'" + path + "'");
  if (!h) return Error{h.error()};
  return std::move(h->metadata);
}

std::string serialize_safetensors(const TensorFile& file) {
  json h = json::object();
  if (!file.metadata.empty()) h["__metadata__"] = file.metadata;
  uint64_t off = 0;
  for (auto& [name, t] : file.tensors) {
    uint64_t bytes = static_cast<uint64_t>(t.numel()) * (t.dtype == DType::F32 ? 4 : 8);
    h[name] = {
        {"dtype", t.dtype == DType::F32 ? "F32" : "I64"}, {"shape", t.shape}, {"data_offsets", {off, off + bytes}}};
    off += bytes;
  }
  std::string header = h.dump();
  while ((header.size() + 8) % 8) header += ' ';  // 8-byte alignment of the data block
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  out.reserve(out.size() + off);
  for (auto& [name, t] : file.tensors) {
    if (t.dtype == DType::F32)
      out.append(reinterpret_cast<const char*>(t.f32.data()), t.f32.size() * 4);
    else
      out.append(reinterpret_cast<const char*>(t.i64.data()), t.i64.size() * 8);
  }
  return out;
}

Result<bool> write_safetensors(const std::string& path, const TensorFile& file) {
  return write_file_atomic(path, serialize_safetensors(file));
}

}  // namespace sf
