#include "train/trainer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <thread>

#include "io/checkpoint.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "train/backward.h"
#include "train/batch.h"
#include "train/loss.h"

namespace sf {

using nlohmann::json;

namespace {

// Metrics are plotted, not replayed: 5 significant digits keep the files small.
double round5(double x) {
  if (!std::isfinite(x)) return x;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", x);
  return std::strtod(buf, nullptr);
}

std::string u64_hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

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

// ---------------------------------------------------------------------------------------------
// Options

json to_json(const TrainOptions& o) {
  json j;
  j["task"] = o.task;
  j["task_min_len"] = o.task_options.min_len;
  j["task_max_len"] = o.task_options.max_len;
  j["task_symbols"] = o.task_options.n_symbols;
  j["arch"] = to_string(o.arch);
  j["arch_set"] = o.arch_set;
  j["norm"] = to_string(o.norm);
  j["encoder_layers"] = o.encoder_layers;
  j["decoder_layers"] = o.decoder_layers;
  j["d_model"] = o.d_model;
  j["n_heads"] = o.n_heads;
  j["d_ff"] = o.d_ff;
  j["activation"] = to_string(o.activation);
  j["positional"] = to_string(o.positional);
  j["batch"] = o.batch;
  j["steps"] = o.steps;
  j["seed"] = o.seed;
  j["schedule"] = o.schedule.kind == Schedule::Warmup ? "warmup" : "constant";
  j["factor"] = o.schedule.factor;
  j["warmup"] = o.schedule.warmup;
  j["constant_lr"] = o.schedule.rate;
  j["cooldown"] = o.schedule.cooldown;
  j["clip"] = o.clip;
  j["label_smoothing"] = o.label_smoothing;
  j["dropout"] = o.dropout;
  j["eval_every"] = o.eval_every;
  j["eval_examples"] = o.eval_examples;
  j["final_eval_examples"] = o.final_eval_examples;
  j["probe_every"] = o.probe_every;
  j["threads"] = o.threads;
  j["command"] = o.command;
  return j;
}

Result<TrainOptions> train_options_from_json(const json& j) {
  try {
    TrainOptions o;
    o.task = j.at("task").get<std::string>();
    o.task_options.min_len = j.at("task_min_len").get<int>();
    o.task_options.max_len = j.at("task_max_len").get<int>();
    o.task_options.n_symbols = j.at("task_symbols").get<int>();
    o.arch = j.at("arch").get<std::string>() == "decoder-only" ? Arch::DecoderOnly : Arch::EncoderDecoder;
    o.arch_set = j.at("arch_set").get<bool>();
    o.norm = j.at("norm").get<std::string>() == "pre" ? NormPlacement::Pre : NormPlacement::Post;
    o.encoder_layers = j.at("encoder_layers").get<int>();
    o.decoder_layers = j.at("decoder_layers").get<int>();
    o.d_model = j.at("d_model").get<int>();
    o.n_heads = j.at("n_heads").get<int>();
    o.d_ff = j.at("d_ff").get<int>();
    o.activation = j.at("activation").get<std::string>() == "gelu" ? Activation::Gelu : Activation::Relu;
    o.positional = j.at("positional").get<std::string>() == "learned" ? Positional::Learned : Positional::Sinusoidal;
    o.batch = j.at("batch").get<int>();
    o.steps = j.at("steps").get<int64_t>();
    o.seed = j.at("seed").get<uint64_t>();
    o.schedule.kind = j.at("schedule").get<std::string>() == "constant" ? Schedule::Constant : Schedule::Warmup;
    o.schedule.factor = j.at("factor").get<double>();
    o.schedule.warmup = j.at("warmup").get<int>();
    o.schedule.rate = j.at("constant_lr").get<double>();
    o.schedule.cooldown = j.value("cooldown", 0);
    o.clip = j.at("clip").get<float>();
    o.label_smoothing = j.at("label_smoothing").get<float>();
    o.dropout = j.at("dropout").get<float>();
    o.eval_every = j.at("eval_every").get<int>();
    o.eval_examples = j.at("eval_examples").get<int>();
    o.final_eval_examples = j.at("final_eval_examples").get<int>();
    o.probe_every = j.at("probe_every").get<int>();
    o.threads = j.at("threads").get<int>();
    o.command = j.value("command", "");
    return o;
  } catch (const std::exception& e) {
    return Error{std::string("training options: ") + e.what()};
  }
}

Result<Task> options_task(const TrainOptions& o) {
  auto t = make_task(o.task, o.task_options);
  if (!t) return t;
  if (o.arch_set && o.arch != t->arch) {
    if (o.arch == Arch::EncoderDecoder)
      return Error{"task '" + o.task + "' is decoder-only; expected --arch decoder-only, found encoder-decoder"};
    return as_decoder_only(*t);
  }
  return t;
}

Config model_config(const TrainOptions& o, const Task& t) {
  Config c;
  c.arch = t.arch;
  c.d_model = o.d_model;
  c.n_heads = o.n_heads;
  c.n_encoder_layers = t.arch == Arch::EncoderDecoder ? o.encoder_layers : 0;
  c.n_decoder_layers = o.decoder_layers;
  c.d_ff = o.d_ff;
  c.max_len = t.model_max_len();
  c.norm = o.norm;
  c.activation = o.activation;
  c.positional = o.positional;
  c.share_embeddings = false;
  c.tgt_vocab = *Vocab::make(t.tgt_vocab(), t.tokenizer, "tgt_vocab");
  if (c.has_encoder()) c.src_vocab = *Vocab::make(t.src_vocab(), t.tokenizer, "src_vocab");
  return c;
}

// ---------------------------------------------------------------------------------------------
// Probes: residual-stream norms and attention entropy, summed per shard and combined.

namespace {

struct ProbeSums {
  std::vector<double> norm_sum;              // per stream
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
  if (c.has_encoder()) {
    const std::vector<int>& ids = t.encoder.embed.ids;
    const int pad = c.src_vocab.pad();
    add_stream(p, s++, t.encoder.embed.sum, ids, pad);
    for (const auto& l : t.encoder.layers) {
      add_stream(p, s++, l.ffn_block.output, ids, pad);
      add_entropy(p, a++, l.self_attn, ids, pad);
    }
  }
  const std::vector<int>& ids = t.decoder.embed.ids;
  const int pad = c.tgt_vocab.pad();
  add_stream(p, s++, t.decoder.embed.sum, ids, pad);
  for (const auto& l : t.decoder.layers) {
    add_stream(p, s++, l.ffn_block.output, ids, pad);
    add_entropy(p, a++, l.self_attn, ids, pad);
    if (c.has_encoder()) add_entropy(p, a++, l.cross_attn, ids, pad);
  }
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Trainer

struct Trainer::Shard {
  Batch batch;
  Trace trace;
  Weights grads;
  LossResult loss;
  uint64_t dropout_seed = 0;
};

namespace {

void draw_mask(Mat& m, int rows, int d, float p, Rng& rng) {
  m.resize(rows, d);
  const float keep = 1.0f / (1.0f - p);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform() < p ? 0.0f : keep;
}

}  // namespace

void draw_dropout_masks(Trace& t, const Config& c, int batch, int n, int m, float p, uint64_t seed) {
  Rng rng(seed);
  const int d = c.d_model;
  if (c.has_encoder()) {
    const int rows = batch * n;
    t.encoder.layers.resize(static_cast<size_t>(c.n_encoder_layers));
    draw_mask(t.encoder.embed.dropout_mask, rows, d, p, rng);
    for (auto& l : t.encoder.layers)
      for (ResidualTrace* r : {&l.self_block, &l.ffn_block}) draw_mask(r->dropout_mask, rows, d, p, rng);
  }
  const int rows = batch * m;
  t.decoder.layers.resize(static_cast<size_t>(c.n_decoder_layers));
  draw_mask(t.decoder.embed.dropout_mask, rows, d, p, rng);
  for (auto& l : t.decoder.layers) {
    draw_mask(l.self_block.dropout_mask, rows, d, p, rng);
    if (c.has_encoder()) draw_mask(l.cross_block.dropout_mask, rows, d, p, rng);
    draw_mask(l.ffn_block.dropout_mask, rows, d, p, rng);
  }
}

Result<Trainer> Trainer::create(TrainOptions o) {
  if (o.d_model <= 0 || o.n_heads <= 0 || o.d_model % o.n_heads != 0)
    return Error{"d_model (" + std::to_string(o.d_model) + ") must be a positive multiple of the head count (" +
                 std::to_string(o.n_heads) + ")"};
  if (o.d_model % 2 != 0 && o.positional == Positional::Sinusoidal)
    return Error{"sinusoidal positions need an even d_model, found " + std::to_string(o.d_model)};
  if (o.decoder_layers < 1 || o.encoder_layers < 1 || o.d_ff < 1 || o.batch < 1 || o.steps < 0 || o.threads < 1)
    return Error{"expected layers >= 1, d_ff >= 1, batch >= 1, steps >= 0 and threads >= 1"};
  if (o.dropout < 0 || o.dropout >= 1) return Error{"dropout: expected 0 <= p < 1, found " + std::to_string(o.dropout)};
  auto task = options_task(o);
  if (!task) return Error{task.error()};
  o.arch = task->arch;
  o.schedule.d_model = o.d_model;
  o.schedule.total = o.steps;
  Trainer t;
  t.opt_ = o;
  t.task_ = std::move(*task);
  Config c = model_config(o, t.task_);
  Weights w;
  init_xavier(w, c, o.seed);
  t.model_ = Model::make(std::move(c), std::move(w));
  t.adam_.init(t.model_.config);
  t.rng_.reseed(o.seed ^ 0x7261696e696e67ULL);  // a stream of its own, apart from the initialisation's
  t.validation_ =
      t.task_.sample_many(kValidationSeed, std::max(o.eval_examples, o.final_eval_examples), Split::Validation);

  const Config& mc = t.model_.config;
  json& m = t.metrics_;
  m["format"] = "stepformer.metrics/1";
  m["task"] = o.task;
  m["arch"] = to_string(mc.arch);
  m["norm"] = to_string(mc.norm);
  m["command"] = o.command;
  m["options"] = to_json(o);
  m["config"] = json::parse(config_to_json(mc));
  m["parameters"] = count_params(t.model_.weights, mc);
  std::vector<std::string> groups, layers;
  for (const ParamRef& p : param_table(t.model_.weights, mc)) {
    const std::string g = param_group(p.name), l = param_layer(p.name);
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    if (!l.empty() && std::find(layers.begin(), layers.end(), l) == layers.end()) layers.push_back(l);
  }
  m["groups"] = groups;
  m["layers"] = layers;
  m["steps"] = {{"step", json::array()},     {"loss", json::array()},      {"accuracy", json::array()},
                {"lr", json::array()},       {"grad_norm", json::array()}, {"grad_norm_layer", json::array()},
                {"grad_norm_group", json::array()}, {"tokens", json::array()}};
  m["probes"] = {{"every", o.probe_every},          {"streams", probe_streams(mc)},
                 {"attention", probe_attention(mc)}, {"step", json::array()},
                 {"residual_norm", json::array()},   {"attention_entropy", json::array()}};
  m["evals"] = {{"examples", o.eval_examples}, {"step", json::array()}, {"exact_match", json::array()}};
  return t;
}

StepStats Trainer::step() {
  const Config& c = model_.config;
  const int pad = c.tgt_vocab.pad();
  std::vector<Example> ex;
  ex.reserve(static_cast<size_t>(opt_.batch));
  for (int i = 0; i < opt_.batch; ++i) ex.push_back(task_.sample(rng_, Split::Train));
  const Batch batch = make_batch(c, ex);

  const int T = std::min(opt_.threads, batch.size);
  std::vector<Shard> shards(static_cast<size_t>(T));
  for (int s = 0, b0 = 0; s < T; ++s) {
    const int count = batch.size / T + (s < batch.size % T ? 1 : 0);
    shards[static_cast<size_t>(s)].batch = batch.rows(b0, count, pad);
    // Drawn only with dropout on, so that dropout-free runs keep their batch sequence.
    if (opt_.dropout > 0) shards[static_cast<size_t>(s)].dropout_seed = rng_.next();
    b0 += count;
  }
  auto run = [&](Shard& sh) {
    const Batch& b = sh.batch;
    if (opt_.dropout > 0) draw_dropout_masks(sh.trace, c, b.size, b.n, b.m, opt_.dropout, sh.dropout_seed);
    EncoderContext enc;
    if (c.has_encoder()) {
      encode(model_, b.src, b.size, &sh.trace.encoder);
      enc = {&sh.trace.encoder.output, &b.src};
    }
    const Mat logits = decode(model_, b.tgt_in, b.size, enc, nullptr, &sh.trace.decoder);
    Mat dlogits;
    sh.loss = cross_entropy(logits, b.tgt_y, pad, opt_.label_smoothing, &dlogits, batch.target_tokens);
    allocate(sh.grads, c);
    zero_grads(sh.grads, c);
    model_backward(model_, sh.trace, dlogits, sh.grads);
  };
  std::vector<std::thread> workers;
  for (int s = 1; s < T; ++s) workers.emplace_back(run, std::ref(shards[static_cast<size_t>(s)]));
  run(shards[0]);
  for (auto& w : workers) w.join();

  Weights& grads = shards[0].grads;
  double loss_sum = 0;
  int correct = 0;
  for (int s = 0; s < T; ++s) {
    if (s > 0) add_grads(grads, shards[static_cast<size_t>(s)].grads, c);
    loss_sum += shards[static_cast<size_t>(s)].loss.sum;
    correct += shards[static_cast<size_t>(s)].loss.correct;
  }
  StepStats st;
  st.tokens = batch.target_tokens;
  st.loss = batch.target_tokens ? loss_sum / batch.target_tokens : 0.0;
  st.accuracy = batch.target_tokens ? static_cast<double>(correct) / batch.target_tokens : 0.0;
  st.grad_norm = grad_norm(grads, c);
  st.lr = opt_.schedule.at(adam_.t + 1);
  record(st, grads);  // gradient norms before clipping: what the comparison view plots
  if (opt_.clip > 0 && st.grad_norm > opt_.clip) scale_grads(grads, c, static_cast<float>(opt_.clip / st.grad_norm));
  adam_.step(model_.weights, grads, c, st.lr);
  st.step = adam_.t;
  json& s = metrics_["steps"];
  s["step"].push_back(st.step);

  if (opt_.probe_every > 0 && (st.step % opt_.probe_every == 0 || st.step == 1)) probe(shards);
  if (opt_.eval_every > 0 && st.step % opt_.eval_every == 0) {
    st.evaluated = true;
    st.exact_match = evaluate(opt_.eval_examples).exact_match();
    metrics_["evals"]["step"].push_back(st.step);
    metrics_["evals"]["exact_match"].push_back(round5(st.exact_match));
  }
  return st;
}

void Trainer::record(const StepStats& st, const Weights& grads) {
  json& s = metrics_["steps"];
  s["loss"].push_back(round5(st.loss));
  s["accuracy"].push_back(round5(st.accuracy));
  s["lr"].push_back(round5(st.lr));
  s["grad_norm"].push_back(round5(st.grad_norm));
  s["tokens"].push_back(st.tokens);
  const auto& groups = metrics_["groups"];
  const auto& layers = metrics_["layers"];
  std::vector<double> g(groups.size(), 0.0), l(layers.size(), 0.0);
  size_t gi = 0, li = 0;
  for (const ParamRef& p : param_table(grads, model_.config)) {
    double sq = 0;
    for (int64_t j = 0; j < p.numel(); ++j) sq += static_cast<double>(p.data[j]) * p.data[j];
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

void Trainer::probe(const std::vector<Shard>& shards) {
  const Config& c = model_.config;
  ProbeSums total;
  for (size_t i = 0; i < shards.size(); ++i) {
    ProbeSums p = probe_trace(c, shards[i].trace);
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
  json& p = metrics_["probes"];
  p["step"].push_back(adam_.t);
  p["residual_norm"].push_back(norms);
  p["attention_entropy"].push_back(ent);
}

EvalResult Trainer::evaluate(int n) const {
  n = std::min(n, static_cast<int>(validation_.size()));
  return sf::evaluate(model_, std::vector<Example>(validation_.begin(), validation_.begin() + n));
}

EvalResult Trainer::final_evaluation(double seconds) {
  EvalResult r = evaluate(opt_.final_eval_examples);
  metrics_["final"] = {{"step", adam_.t},
                       {"examples", r.examples},
                       {"exact_match", r.exact_match()},
                       {"seconds", round5(seconds)}};
  return r;
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

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
  for (const char* key : {"stepformer.checkpoint", "stepformer.train_options", "stepformer.step", "stepformer.rng",
                          "stepformer.metrics"})
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
  const std::string rs = f->metadata["stepformer.rng"];
  if (rs.size() != 64) return Error{what + ": RNG state: expected 64 hex digits, found " + std::to_string(rs.size())};
  std::array<uint64_t, 4> st{};
  for (int i = 0; i < 4; ++i) st[static_cast<size_t>(i)] = std::stoull(rs.substr(static_cast<size_t>(i) * 16, 16), nullptr, 16);
  t->rng_.set_state(st);
  t->adam_.t = std::stoll(f->metadata["stepformer.step"]);
  t->metrics_ = std::move(mj);
  return t;
}

}  // namespace sf
