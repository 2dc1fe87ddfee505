#include "train/metrics.h"

#include "train/adam.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sf {

using nlohmann::json;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// ---------------------------------------------------------------------------------------------
// Probes: residual-stream norms and attention entropy, summed per shard and combined.

struct ProbeSums {
  std::vector<double> norm_sum;  // per stream
  std::vector<double> norm_count;
  std::vector<std::vector<double>> ent_sum;  // per attention module, per head
  std::vector<double> ent_count;             // per attention module
};

std::vector<std::string> probe_streams(const Config& c) {
  std::vector<std::string> s;
  if (c.has_encoder()) {
    s.push_back("encoder.embed");
    for (int l = 0; l < c.n_encoder_layers; ++l) s.push_back("encoder.layers." + std::to_string(l));
  }
  s.push_back("decoder.embed");
  for (int l = 0; l < c.n_decoder_layers; ++l) s.push_back("decoder.layers." + std::to_string(l));
  return s;
}

std::vector<std::string> probe_attention(const Config& c) {
  std::vector<std::string> s;
  for (int l = 0; l < c.n_encoder_layers; ++l) s.push_back("encoder.layers." + std::to_string(l) + ".self_attn");
  for (int l = 0; l < c.n_decoder_layers; ++l) {
    s.push_back("decoder.layers." + std::to_string(l) + ".self_attn");
    if (c.has_encoder()) s.push_back("decoder.layers." + std::to_string(l) + ".cross_attn");
  }
  return s;
}

void add_stream(ProbeSums& p, size_t idx, const Mat& x, const std::vector<int>& ids, int pad) {
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    if (ids[static_cast<size_t>(r)] == pad) continue;
    p.norm_sum[idx] += x.row(r).norm();
    p.norm_count[idx] += 1;
  }
}

void add_entropy(ProbeSums& p, size_t idx, const AttentionTrace& a, const std::vector<int>& query_ids, int pad) {
  const int nq = static_cast<int>(a.weights[0].rows());
  for (int b = 0; b < a.batch; ++b) {
    for (int i = 0; i < nq; ++i) {
      if (query_ids[static_cast<size_t>(b * nq + i)] == pad) continue;
      for (int h = 0; h < a.n_heads; ++h) {
        const Mat& w = a.head_weights(b, h);
        double e = 0;
        for (Eigen::Index j = 0; j < w.cols(); ++j)
          if (w(i, j) > 0) e -= w(i, j) * std::log(static_cast<double>(w(i, j)));
        p.ent_sum[idx][static_cast<size_t>(h)] += e;
      }
      p.ent_count[idx] += 1;
    }
  }
}

ProbeSums probe_trace(const Config& c, const Trace& t) {
  ProbeSums p;
  const size_t ns = probe_streams(c).size(), na = probe_attention(c).size();
  p.norm_sum.assign(ns, 0);
  p.norm_count.assign(ns, 0);
  p.ent_sum.assign(na, std::vector<double>(static_cast<size_t>(c.n_heads), 0));
  p.ent_count.assign(na, 0);
  size_t s = 0, a = 0;
  // A stack: the embedding sum's stream, then each layer's output stream and self-attention
  // entropy; `also(layer)` adds what only that stack has (the decoder's cross-attention).
  const auto stack = [&](const auto& st, int pad, const auto& also) {
    const std::vector<int>& ids = st.embed.ids;
    add_stream(p, s++, st.embed.sum, ids, pad);
    for (const auto& l : st.layers) {
      add_stream(p, s++, l.last_block(c).output, ids, pad);
      add_entropy(p, a++, l.self_attn, ids, pad);
      also(l);
    }
  };
  if (c.has_encoder()) stack(t.encoder, c.src_vocab.pad(), [](const auto&) {});
  stack(t.decoder, c.tgt_vocab.pad(), [&](const auto& l) {
    if (c.has_encoder()) add_entropy(p, a++, l.cross_attn, t.decoder.embed.ids, c.tgt_vocab.pad());
  });
  return p;
}

}  // namespace

double round5(double x) {
  if (!std::isfinite(x)) return x;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", x);
  return std::strtod(buf, nullptr);
}

std::string param_layer(const std::string& name) {
  for (const char* stack : {"encoder.layers.", "decoder.layers."}) {
    if (!starts_with(name, stack)) continue;
    const size_t dot = name.find('.', std::string(stack).size());
    return name.substr(0, dot);
  }
  return "";
}

std::string param_group(const std::string& name) {
  const std::string layer = param_layer(name);
  if (!layer.empty()) {
    const size_t dot = name.find('.', layer.size() + 1);
    return name.substr(0, dot);  // "encoder.layers.0.self_attn"
  }
  if (name.find("_embed.") != std::string::npos) return "embeddings";
  if (starts_with(name, "generator.")) return "generator";
  return name.substr(0, name.rfind('.'));  // "encoder.norm"
}

json new_metrics(const TrainOptions& o, const Model& model) {
  const Config& mc = model.config;
  json m;
  m["format"] = "stepformer.metrics/1";
  m["task"] = o.task;
  m["arch"] = to_string(mc.arch);
  m["norm"] = to_string(mc.norm);
  m["command"] = o.command;
  m["options"] = to_json(o);
  m["config"] = json::parse(config_to_json(mc));
  m["parameters"] = count_params(model.weights, mc);
  std::vector<std::string> groups, layers;
  for (const ParamRef& p : param_table(model.weights, mc)) {
    const std::string g = param_group(p.name), l = param_layer(p.name);
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    if (!l.empty() && std::find(layers.begin(), layers.end(), l) == layers.end()) layers.push_back(l);
  }
  m["groups"] = groups;
  m["layers"] = layers;
  m["steps"] = {{"step", json::array()},
                {"loss", json::array()},
                {"accuracy", json::array()},
                {"lr", json::array()},
                {"grad_norm", json::array()},
                {"grad_norm_layer", json::array()},
                {"grad_norm_group", json::array()},
                {"tokens", json::array()}};
  m["probes"] = {{"every", o.probe_every}, {"streams", probe_streams(mc)},   {"attention", probe_attention(mc)},
                 {"step", json::array()},  {"residual_norm", json::array()}, {"attention_entropy", json::array()}};
  m["evals"] = {{"examples", o.eval_examples}, {"step", json::array()}, {"exact_match", json::array()}};
  return m;
}

namespace {

std::string mismatch_at(const json& saved, const json& fresh, const std::string& where) {
  for (auto it = fresh.begin(); it != fresh.end(); ++it) {
    const json& want = it.value();
    if (!want.is_object() && !want.is_array()) continue;  // a number or a name: written, never read
    const std::string at = where.empty() ? it.key() : where + "." + it.key();
    const auto got = saved.find(it.key());
    if (got == saved.end()) {  // a series or an object the writer creates; a fixed list it reads
      if (want.is_array() && !want.empty()) return "expected \"" + at + "\", found none";
      continue;
    }
    if (want.is_object()) {
      if (!got->is_object()) return "expected \"" + at + "\" to be an object, found " + got->type_name();
      if (std::string m = mismatch_at(*got, want, at); !m.empty()) return m;
    } else if (want.empty()) {
      if (!got->is_array()) return "expected \"" + at + "\" to be a list, found " + got->type_name();
    } else if (*got != want) {
      return "expected \"" + at + "\" to be " + want.dump().substr(0, 80) + ", found " + got->dump().substr(0, 80);
    }
  }
  return "";
}

}  // namespace

std::string metrics_mismatch(const json& saved, const json& fresh) {
  if (!saved.is_object()) return std::string("expected an object, found ") + saved.type_name();
  if (std::string m = mismatch_at(saved, fresh, ""); !m.empty()) return m;
  const auto heads = saved.find("heads");  // the head detectors' record (analysis/head_detector.h)
  if (heads == saved.end()) return "";
  if (!heads->is_object()) return std::string("expected \"heads\" to be an object, found ") + heads->type_name();
  for (auto it = heads->begin(); it != heads->end(); ++it)
    if (it.key() != "every" && it.key() != "probe" && !it.value().is_array())
      return "expected \"heads." + it.key() + "\" to be a list, found " + it.value().type_name();
  return "";
}

void record_step(json& metrics, const StepStats& st, const Weights& grads, const Config& c,
                 const std::vector<double>& squares) {
  json& s = metrics["steps"];
  s["loss"].push_back(round5(st.loss));
  s["accuracy"].push_back(round5(st.accuracy));
  s["lr"].push_back(round5(st.lr));
  s["grad_norm"].push_back(round5(st.grad_norm));
  s["tokens"].push_back(st.tokens);
  const auto& groups = metrics["groups"];
  const auto& layers = metrics["layers"];
  std::vector<double> g(groups.size(), 0.0), l(layers.size(), 0.0);
  size_t gi = 0, li = 0;
  const std::vector<ParamRef> table = param_table(grads, c);
  for (size_t i = 0; i < table.size(); ++i) {
    const ParamRef& p = table[i];
    const double sq = squares[i];
    const std::string gn = param_group(p.name), ln = param_layer(p.name);
    while (groups[gi].get<std::string>() != gn) gi = (gi + 1) % groups.size();
    g[gi] += sq;
    if (!ln.empty()) {
      while (layers[li].get<std::string>() != ln) li = (li + 1) % layers.size();
      l[li] += sq;
    }
  }
  json gj = json::array(), lj = json::array();
  for (double v : g) gj.push_back(round5(std::sqrt(v)));
  for (double v : l) lj.push_back(round5(std::sqrt(v)));
  s["grad_norm_group"].push_back(gj);
  s["grad_norm_layer"].push_back(lj);
}

void record_probes(json& metrics, int64_t step, const Config& c, const std::vector<const Trace*>& traces) {
  ProbeSums total;
  for (size_t i = 0; i < traces.size(); ++i) {
    ProbeSums p = probe_trace(c, *traces[i]);
    if (i == 0) {
      total = std::move(p);
      continue;
    }
    for (size_t k = 0; k < p.norm_sum.size(); ++k) {
      total.norm_sum[k] += p.norm_sum[k];
      total.norm_count[k] += p.norm_count[k];
    }
    for (size_t k = 0; k < p.ent_sum.size(); ++k) {
      for (size_t h = 0; h < p.ent_sum[k].size(); ++h) total.ent_sum[k][h] += p.ent_sum[k][h];
      total.ent_count[k] += p.ent_count[k];
    }
  }
  json norms = json::array(), ent = json::array();
  for (size_t k = 0; k < total.norm_sum.size(); ++k)
    norms.push_back(round5(total.norm_count[k] ? total.norm_sum[k] / total.norm_count[k] : 0.0));
  for (size_t k = 0; k < total.ent_sum.size(); ++k) {
    json heads = json::array();
    for (double v : total.ent_sum[k]) heads.push_back(round5(total.ent_count[k] ? v / total.ent_count[k] : 0.0));
    ent.push_back(heads);
  }
  json& p = metrics["probes"];
  p["step"].push_back(step);
  p["residual_norm"].push_back(norms);
  p["attention_entropy"].push_back(ent);
}

}  // namespace sf
