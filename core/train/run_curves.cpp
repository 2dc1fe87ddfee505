#include "train/run_curves.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "io/json_number.h"

namespace sf {

using nlohmann::json;

bool RunCurves::diverged() const {
  for (double v : loss)
    if (!std::isfinite(v)) return true;
  return false;
}

namespace {

// JSON numbers, with null (how nlohmann writes NaN/Inf) read back as NaN.
double num(const json& v) { return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN(); }

// The entries [from, to) of a JSON list of numbers appended to `out`.
void append_nums(const json& a, size_t from, size_t to, std::vector<double>& out) {
  for (size_t i = from; i < to; ++i) out.push_back(num(a[i]));
}

std::vector<double> nums(const json& a) {
  std::vector<double> out;
  if (a.is_array()) append_nums(a, 0, a.size(), out);
  return out;
}

void append_rows(const json& a, size_t from, size_t to, std::vector<std::vector<double>>& out) {
  for (size_t i = from; i < to; ++i) out.push_back(nums(a[i]));
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  if (!a.is_array()) return out;
  for (const json& v : a)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// An empty list for a missing or non-list field.
const json& list(const json& o, const char* key) {
  static const json empty = json::array();
  if (!o.is_object()) return empty;
  const auto it = o.find(key);
  return it != o.end() && it->is_array() ? *it : empty;
}

// What the document says once: format, task, norm placement, schedule, layer and stream names.
Result<bool> read_header(RunCurves& c, const json& m) {
  if (!m.is_object() || m.value("format", "") != "stepformer.metrics/1")
    return Error{"metrics: expected \"format\": \"stepformer.metrics/1\", found " +
                 (m.is_object() && m.contains("format") ? m["format"].dump() : std::string("none"))};
  if (!m.contains("steps") || !m["steps"].is_object()) return Error{"metrics: expected a \"steps\" object, found none"};
  c.task = m.value("task", "");
  c.norm = m.value("norm", "pre") == "post" ? NormPlacement::Post : NormPlacement::Pre;
  c.layers = strings(m.value("layers", json::array()));
  if (m.contains("options") && m["options"].is_object()) {
    const json& o = m["options"];
    c.schedule = o.value("schedule", "");
    auto whole = [&](const char* key, auto& out) -> Result<bool> {
      if (!o.contains(key)) return true;
      using T = std::decay_t<decltype(out)>;
      const auto x = json_number<T>(o[key]);
      if (!x)
        return Error{std::string("metrics: options.") + key + " expected " + json_number_expected<T>() + ", found " +
                     o[key].dump().substr(0, 40)};
      out = *x;
      return true;
    };
    if (auto r = whole("warmup", c.warmup); !r) return r;
    if (auto r = whole("steps", c.steps_planned); !r) return r;
  }
  if (m.contains("probes") && m["probes"].is_object()) c.streams = strings(m["probes"].value("streams", json::array()));
  return true;
}

// The steps recorded since: the step list is appended after the other columns, so a live copy may
// hold one entry less there; only the rows every column has are read.
void append_steps(RunCurves& c, const json& s) {
  const json &step = list(s, "step"), &loss = list(s, "loss"), &acc = list(s, "accuracy"), &lr = list(s, "lr"),
             &gn = list(s, "grad_norm"), &gl = list(s, "grad_norm_layer");
  const size_t n = std::min({step.size(), loss.size(), lr.size(), gn.size()});
  const size_t from = std::min(c.step.size(), n);
  append_nums(step, from, n, c.step);
  append_nums(loss, from, n, c.loss);
  append_nums(lr, from, n, c.lr);
  append_nums(gn, from, n, c.grad_norm);
  append_nums(acc, std::min(c.accuracy.size(), std::min(acc.size(), n)), std::min(acc.size(), n), c.accuracy);
  append_rows(gl, std::min(c.grad_norm_layer.size(), std::min(gl.size(), n)), std::min(gl.size(), n),
              c.grad_norm_layer);
  for (size_t i = from; i < n; ++i)
    if (std::isfinite(c.lr[i])) c.peak_lr = std::max(c.peak_lr, c.lr[i]);
}

// Evaluations (step, exact match) recorded since, in pairs.
void append_evals(RunCurves& c, const json& e) {
  const json &step = list(e, "step"), &em = list(e, "exact_match");
  const size_t n = std::min(step.size(), em.size());
  const size_t from = std::min(c.eval_step.size(), n);
  append_nums(step, from, n, c.eval_step);
  append_nums(em, from, n, c.exact_match);
}

// Residual-stream probes (step, norms per stream) recorded since, in pairs.
void append_probes(RunCurves& c, const json& p) {
  const json &step = list(p, "step"), &norms = list(p, "residual_norm");
  const size_t n = std::min(step.size(), norms.size());
  const size_t from = std::min(c.probe_step.size(), n);
  append_nums(step, from, n, c.probe_step);
  append_rows(norms, from, n, c.residual_norm);
}

// Head detector scores (per step a list over layers of a list over heads, flattened layer-major)
// recorded since.
void append_heads(RunCurves& c, const json& h) {
  const json &step = list(h, "step"), &ind = list(h, "induction"), &prev = list(h, "previous_token");
  const size_t n = std::min({step.size(), ind.size(), prev.size()});
  const auto flat = [](const json& layers) {
    std::vector<double> row;
    for (const json& heads : layers)
      for (const json& v : heads) row.push_back(num(v));
    return row;
  };
  if (c.heads.empty() && n > 0)
    for (size_t l = 0; l < ind[0].size(); ++l)
      for (size_t k = 0; k < ind[0][l].size(); ++k)
        c.heads.push_back("L" + std::to_string(l) + " H" + std::to_string(k));
  for (size_t i = std::min(c.head_step.size(), n); i < n; ++i) {
    c.head_step.push_back(num(step[i]));
    c.induction.push_back(flat(ind[i]));
    c.previous_token.push_back(flat(prev[i]));
  }
}

// The reader proper; nlohmann's value()/operator[] throw json::type_error on a field of the wrong
// type ("task": 5, "evals": []), which the callers turn into an error, so that a malformed
// metrics file cannot end the explorer.
Result<bool> read_new_rows(RunCurves& c, const json& m) {
  if (c.step.empty()) {
    auto h = read_header(c, m);
    if (!h) return h;
  } else if (!m.is_object() || !m.contains("steps") || !m["steps"].is_object()) {
    return Error{"metrics: expected a \"steps\" object, found none"};
  }
  append_steps(c, m["steps"]);
  for (const char* part : {"evals", "probes"})
    if (m.contains(part) && !m[part].is_object())
      return Error{std::string("metrics: a field has the wrong type: expected \"") + part +
                   "\" to be an object, found " + m[part].type_name()};
  if (m.contains("evals")) append_evals(c, m["evals"]);
  if (m.contains("probes")) append_probes(c, m["probes"]);
  if (m.contains("heads") && m["heads"].is_object()) append_heads(c, m["heads"]);
  if (m.contains("final") && m["final"].is_object()) c.final_exact_match = num(m["final"].value("exact_match", json()));
  return true;
}

}  // namespace

Result<bool> update_curves(RunCurves& c, const json& m) {
  try {
    return read_new_rows(c, m);
  } catch (const json::exception& e) {
    return Error{std::string("metrics: a field has the wrong type: ") + e.what()};
  }
}

Result<RunCurves> curves_from_metrics(const json& m, const std::string& label) {
  RunCurves c;
  c.label = label;
  auto r = update_curves(c, m);
  if (!r) return Error{r.error()};
  return c;
}

Result<RunCurves> curves_from_metrics_file(const std::string& path, const std::string& label) {
  std::ifstream in(path);
  if (!in) return Error{"metrics '" + path + "': cannot open (missing file or no permission)"};
  std::stringstream ss;
  ss << in.rdbuf();
  json m = json::parse(ss.str(), nullptr, false);
  if (m.is_discarded()) return Error{"metrics '" + path + "': not valid JSON"};
  auto c = curves_from_metrics(m, label);
  if (!c) return Error{"metrics '" + path + "': " + c.error().substr(std::string("metrics: ").size())};
  return c;
}

}  // namespace sf
