#include "io/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

TensorFile parse(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 8)
    throw InputError(what + ": expected at least an 8-byte header length, found a file of " +
                     std::to_string(bytes.size()) + " bytes");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (n > bytes.size() - 8)
    throw InputError(what + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes): truncated or not a safetensors file");
  json h = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), nullptr, false);
  if (h.is_discarded() || !h.is_object())
    throw InputError(what + ": expected a JSON object as header, found bytes that do not parse");
  const uint64_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;

  TensorFile f;
  struct Span {
    uint64_t b, e;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const json& e = it.value();
    if (name == "__metadata__") {
      if (!e.is_object()) throw InputError(what + ": __metadata__ expected an object of strings");
      for (auto m = e.begin(); m != e.end(); ++m) {
        if (!m.value().is_string())
          throw InputError(what + ": __metadata__['" + m.key() + "'] expected a string");
        f.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string t = "tensor '" + name + "'";
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      throw InputError(what + ": " + t + " expected dtype, shape and data_offsets");
    if (!e["dtype"].is_string()) throw InputError(what + ": " + t + " dtype expected a string");
    std::string dt = e["dtype"].get<std::string>();
    Tensor ten;
    size_t elem = 0;
    if (dt == "F32") {
      ten.dtype = DType::F32;
      elem = 4;
    } else if (dt == "I64") {
      ten.dtype = DType::I64;
      elem = 8;
    } else {
      throw InputError(what + ": " + t + " has dtype " + dt + ", expected F32 (or I64 for token ids)");
    }
    if (!e["shape"].is_array()) throw InputError(what + ": " + t + " shape expected a list");
    uint64_t numel = 1;
    for (auto& s : e["shape"]) {
      if (!s.is_number_integer() || s.get<long long>() < 0 || s.get<long long>() > (1LL << 40))
        throw InputError(what + ": " + t + " shape expected non-negative integers, found " + e["shape"].dump());
      ten.shape.push_back(s.get<int64_t>());
      numel *= static_cast<uint64_t>(s.get<int64_t>());
      if (numel > (1ULL << 40)) throw InputError(what + ": " + t + " shape " + e["shape"].dump() + " is too large");
    }
    const json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw InputError(what + ": " + t + " data_offsets expected [begin, end], found " + off.dump());
    uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
    if (b > en) throw InputError(what + ": " + t + " data_offsets [" + std::to_string(b) + ", " + std::to_string(en) + "] are reversed");
    if (en > data_size)
      throw InputError(what + ": " + t + " data_offsets end " + std::to_string(en) + " runs past the data block (" +
                       std::to_string(data_size) + " bytes): truncated file");
    if (en - b != numel * elem)
      throw InputError(what + ": " + t + " has " + std::to_string(en - b) + " bytes, expected " +
                       std::to_string(numel * elem) + " for shape " + shape_str(ten.shape) + " x " + dt);
    if (ten.dtype == DType::F32) {
      ten.f32.resize(numel);
      if (numel) std::memcpy(ten.f32.data(), data + b, numel * 4);
    } else {
      ten.i64.resize(numel);
      if (numel) std::memcpy(ten.i64.data(), data + b, numel * 8);
    }
    spans.push_back({b, en, name});
    f.tensors.emplace_back(name, std::move(ten));
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.b < b.b; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].b < spans[i - 1].e && spans[i].e > spans[i].b)
      throw InputError(what + ": tensors '" + spans[i - 1].name + "' and '" + spans[i].name +
                       "' have overlapping data_offsets");
  // Keep file order stable by offset so save(load(x)) is reproducible.
  std::stable_sort(f.tensors.begin(), f.tensors.end(), [&](auto& a, auto& b) {
    auto pos = [&](const std::string& nm) {
      for (auto& s : spans)
        if (s.name == nm) return s.b;
      return uint64_t{0};
    };
    return pos(a.first) < pos(b.first);
  });
  return f;
}

}  // namespace

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

std::string serialize_safetensors(const TensorFile& file) {
  json h = json::object();
  if (!file.metadata.empty()) h["__metadata__"] = file.metadata;
  uint64_t off = 0;
  for (auto& [name, t] : file.tensors) {
    uint64_t bytes = static_cast<uint64_t>(t.numel()) * (t.dtype == DType::F32 ? 4 : 8);
    h[name] = {{"dtype", t.dtype == DType::F32 ? "F32" : "I64"}, {"shape", t.shape}, {"data_offsets", {off, off + bytes}}};
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
