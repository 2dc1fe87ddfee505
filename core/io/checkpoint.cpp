#include "io/checkpoint.h"

#include <cmath>
#include <set>

namespace sf {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace

Result<Model> model_from_tensors(const TensorFile& f, const std::string& what) {
  auto it = f.metadata.find("stepformer.config");
  if (it == f.metadata.end())
    return Error{what + ": expected the configuration as __metadata__[\"stepformer.config\"], found none"};
  auto cfg = parse_config(it->second);
  if (!cfg) return Error{what + ": " + cfg.error()};
  Weights w;
  allocate(w, *cfg);
  std::set<std::string> expected;
  for (ParamRef& p : param_table(w, *cfg)) {
    expected.insert(p.name);
    const Tensor* t = f.find(p.name);
    std::vector<int64_t> want = p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols};
    if (!t) return Error{what + ": missing tensor '" + p.name + "' of shape " + shape_str(want)};
    if (t->dtype != DType::F32) return Error{what + ": tensor '" + p.name + "' has dtype I64, expected F32"};
    if (t->shape != want)
      return Error{what + ": tensor '" + p.name + "': shape " + shape_str(t->shape) + ", expected " + shape_str(want)};
    for (int64_t i = 0; i < p.numel(); ++i) {
      const float v = t->f32[static_cast<size_t>(i)];
      if (!std::isfinite(v))
        return Error{what + ": tensor '" + p.name + "' holds " + (std::isnan(v) ? "NaN" : "Inf") + " at flat index " +
                     std::to_string(i) + "; expected finite weights"};
      p.data[i] = v;
    }
  }
  for (auto& [name, t] : f.tensors)
    if (!expected.count(name))
      return Error{what + ": unexpected tensor '" + name + "' for a " + to_string(cfg->arch) + " " +
                   to_string(cfg->norm) + "-LN model with " + to_string(cfg->positional) + " PE" +
                   (cfg->share_embeddings ? " and shared embeddings" : "")};
  return Model::make(std::move(*cfg), std::move(w));
}

Result<Model> load_model(const std::string& path) {
  auto f = read_safetensors(path);
  if (!f) return Error{f.error()};
  return model_from_tensors(*f, "'" + path + "'");
}

TensorFile model_to_tensors(const Model& m, const std::map<std::string, std::string>& extra_metadata) {
  TensorFile f;
  f.metadata = extra_metadata;
  f.metadata["stepformer.config"] = config_to_json(m.config);
  for (const ParamRef& p : param_table(m.weights, m.config)) {
    Tensor t;
    t.shape = p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols};
    t.f32.assign(p.data, p.data + p.numel());
    f.add(p.name, std::move(t));
  }
  return f;
}

Result<bool> save_model(const std::string& path, const Model& m, const std::map<std::string, std::string>& extra) {
  return write_safetensors(path, model_to_tensors(m, extra));
}

}  // namespace sf
