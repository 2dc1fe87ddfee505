// trainer_checkpoint.cpp — the trainer's files: the model alone, the metrics, and checkpoints
// (model + Adam moments + step, RNG state, options and metrics) that resume bit-identically.
#include "train/trainer.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <map>

#include "io/checkpoint.h"
#include "train/metrics.h"

namespace sf {

using nlohmann::json;

namespace {

std::string u64_hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// s as a whole number in `base`, every character a digit of it (no sign, no space, in range).
template <class T>
bool whole_number(const std::string& s, int base, T& out) {
  const char *first = s.data(), *last = s.data() + s.size();
  const auto [end, ec] = std::from_chars(first, last, out, base);
  return !s.empty() && ec == std::errc() && end == last;
}

}  // namespace

Result<bool> Trainer::save_model(const std::string& path) const {
  return sf::save_model(path, model_, {{"stepformer.task", opt_.task}, {"stepformer.command", opt_.command}});
}

Result<bool> Trainer::save_metrics(const std::string& path) const { return write_file_atomic(path, metrics_.dump()); }

Result<bool> Trainer::save_checkpoint(const std::string& path) const {
  TensorFile f = model_to_tensors(model_, {{"stepformer.task", opt_.task}});
  const Config& c = model_.config;
  const auto M = param_table(adam_.m, c), V = param_table(adam_.v, c);
  for (size_t i = 0; i < M.size(); ++i) {
    for (const auto* moments : {&M, &V}) {
      const ParamRef& p = (*moments)[i];
      Tensor t;
      t.shape = p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols};
      t.f32.assign(p.data, p.data + p.numel());
      f.add(std::string(moments == &M ? "adam.m." : "adam.v.") + p.name, std::move(t));
    }
  }
  const auto rs = rng_.state();
  f.metadata["stepformer.checkpoint"] = "1";
  f.metadata["stepformer.train_options"] = to_json(opt_).dump();
  f.metadata["stepformer.step"] = std::to_string(adam_.t);
  f.metadata["stepformer.rng"] = u64_hex(rs[0]) + u64_hex(rs[1]) + u64_hex(rs[2]) + u64_hex(rs[3]);
  f.metadata["stepformer.metrics"] = metrics_.dump();
  return write_safetensors(path, f);
}

Result<Trainer> Trainer::resume(const std::string& path) {
  auto f = read_safetensors(path);
  if (!f) return Error{f.error()};
  const std::string what = "checkpoint '" + path + "'";
  for (const char* key :
       {"stepformer.checkpoint", "stepformer.train_options", "stepformer.step", "stepformer.rng", "stepformer.metrics"})
    if (!f->metadata.count(key))
      return Error{what + ": expected __metadata__[\"" + key + "\"] (a training checkpoint), found none"};
  json oj = json::parse(f->metadata["stepformer.train_options"], nullptr, false);
  json mj = json::parse(f->metadata["stepformer.metrics"], nullptr, false);
  if (oj.is_discarded() || mj.is_discarded()) return Error{what + ": options or metrics are not valid JSON"};
  auto o = train_options_from_json(oj);
  if (!o) return Error{what + ": " + o.error()};
  auto t = create(*o);
  if (!t) return Error{what + ": " + t.error()};
  TensorFile model_part;
  model_part.metadata = f->metadata;
  std::map<std::string, const Tensor*> adam_part;
  for (auto& [name, tensor] : f->tensors) {
    if (starts_with(name, "adam."))
      adam_part[name] = &tensor;
    else
      model_part.add(name, tensor);
  }
  auto m = model_from_tensors(model_part, what);
  if (!m) return Error{m.error()};
  if (m->config.forward_only())
    return Error{what +
                 ": its configuration has a choice training does not implement (rotary positions, "
                 "RMSNorm, a gated MLP, grouped-query attention, a sliding window or a parallel residual); "
                 "such models run forward only"};
  if (config_to_json(m->config) != config_to_json(t->model_.config))
    return Error{what + ": the model configuration does not match its training options"};
  t->model_ = std::move(*m);
  const Config& c = t->model_.config;
  auto M = param_table(t->adam_.m, c), V = param_table(t->adam_.v, c);
  for (size_t i = 0; i < M.size(); ++i) {
    for (auto* moments : {&M, &V}) {
      ParamRef& p = (*moments)[i];
      const std::string name = std::string(moments == &M ? "adam.m." : "adam.v.") + p.name;
      auto it = adam_part.find(name);
      if (it == adam_part.end() || it->second->numel() != p.numel() || it->second->dtype != DType::F32)
        return Error{what + ": missing or mis-shaped optimiser tensor '" + name + "'"};
      std::copy(it->second->f32.begin(), it->second->f32.end(), p.data);
    }
  }
  const std::string& rs = f->metadata["stepformer.rng"];
  std::array<uint64_t, 4> st{};
  for (size_t i = 0; i < st.size(); ++i)
    if (rs.size() != 64 || !whole_number(rs.substr(i * 16, 16), 16, st[i]))
      return Error{what + ": RNG state: expected 64 hex digits, found \"" + rs.substr(0, 80) + "\""};
  t->rng_.set_state(st);
  const std::string& step = f->metadata["stepformer.step"];
  if (!whole_number(step, 10, t->adam_.t) || t->adam_.t < 0)
    return Error{what + ": step: expected a whole number of steps, found \"" + step.substr(0, 40) + "\""};
  if (const std::string m = metrics_mismatch(mj, new_metrics(*o, t->model_)); !m.empty())
    return Error{what + ": its metrics are not this run's record: " + m};
  t->metrics_ = std::move(mj);
  return t;
}

}  // namespace sf
