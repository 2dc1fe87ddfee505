#include "export.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <cerrno>
#include <limits>
#include <sstream>

#include "io/trace_export.h"

namespace sf::gui {

TensorFile session_tensors(const Session& s) {
  TensorFile f;
  const Model& m = s.model();
  f.metadata["stepformer.config"] = config_to_json(m.config);
  f.metadata["stepformer.strategy"] = to_string(s.settings().strategy);
  f.metadata["stepformer.cache"] = s.use_cache() ? "on" : "off";
  f.metadata["stepformer.output"] = s.text();
  if (s.encoder()) append_encoder_tensors(m, s.encoder()->trace, f, "");
  for (const auto& st : s.steps())
    if (st && st->trace)
      append_decoder_tensors(m, *s.whole_trace(st->step), f, "steps." + std::to_string(st->step) + ".");
  return f;
}

std::string npy_bytes(const Tensor& t) {
  // numpy's spelling: (5,) and (4, 3, 3)
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + (t.dtype == DType::F32 ? "<f4" : "<i8") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64
  // and ended by a newline.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const uint16_t len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  out += header;
  if (t.dtype == DType::F32)
    out.append(reinterpret_cast<const char*>(t.f32.data()), t.f32.size() * 4);
  else
    out.append(reinterpret_cast<const char*>(t.i64.data()), t.i64.size() * 8);
  return out;
}

std::string csv_text(const Tensor& t, int64_t block) {
  std::ostringstream o;
  o.precision(9);
  const int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  const int64_t rows = t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : 1;
  const int64_t base = block >= 0 ? block * rows * cols : 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (c) o << ',';
      const size_t i = static_cast<size_t>(base + r * cols + c);
      if (t.dtype == DType::I64)
        o << t.i64[i];
      else {
        const float v = t.f32[i];
        if (v == -std::numeric_limits<float>::infinity())
          o << "-inf";
        else
          o << v;
      }
    }
    o << '\n';
  }
  return o.str();
}

bool export_session(const Session& s, const std::string& path, std::string& error) {
  const TensorFile f = session_tensors(s);
  const auto ends = [&](const char* e) {
    const size_t n = std::strlen(e);
    return path.size() >= n && path.compare(path.size() - n, n, e) == 0;
  };
  if (ends(".safetensors")) {
    auto ok = write_safetensors(path, f);
    if (!ok) error = ok.error();
    return ok.ok();
  }
  const bool npy = ends(".npy"), csv = ends(".csv");
  if (!npy && !csv) {
    error = "export '" + path + "': expected a name ending in .safetensors, .npy or .csv";
    return false;
  }
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    error = "export '" + path + "': cannot create the folder";
    return false;
  }
  for (const auto& [name, t] : f.tensors) {
    if (npy) {
      auto ok = write_file_atomic(path + "/" + name + ".npy", npy_bytes(t));
      if (!ok) return error = ok.error(), false;
    } else if (t.shape.size() <= 2) {
      auto ok = write_file_atomic(path + "/" + name + ".csv", csv_text(t));
      if (!ok) return error = ok.error(), false;
    } else {
      for (int64_t h = 0; h < t.shape[0]; ++h) {
        auto ok = write_file_atomic(path + "/" + name + ".h" + std::to_string(h) + ".csv", csv_text(t, h));
        if (!ok) return error = ok.error(), false;
      }
    }
  }
  return true;
}

}  // namespace sf::gui
