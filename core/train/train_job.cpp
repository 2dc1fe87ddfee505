#include "train/train_job.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace sf {

using nlohmann::json;

// ---- curves -------------------------------------------------------------------------------------

bool RunCurves::diverged() const {
  for (double v : loss)
    if (!std::isfinite(v)) return true;
  return false;
}

namespace {

// JSON numbers, with null (how nlohmann writes NaN/Inf) read back as NaN.
double num(const json& v) { return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN(); }

std::vector<double> nums(const json& a) {
  std::vector<double> out;
  if (!a.is_array()) return out;
  out.reserve(a.size());
  for (const json& v : a) out.push_back(num(v));
  return out;
}

std::vector<std::vector<double>> rows_of(const json& a) {
  std::vector<std::vector<double>> out;
  if (!a.is_array()) return out;
  out.reserve(a.size());
  for (const json& r : a) out.push_back(nums(r));
  return out;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  if (!a.is_array()) return out;
  for (const json& v : a)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string lr_text(double lr) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", lr);
  return b;
}

}  // namespace

namespace {

// The reader proper; nlohmann's value()/operator[] throw json::type_error on a field of the wrong
// type ("task": 5, "evals": []), which curves_from_metrics turns into an error, so that a
// malformed metrics file cannot end the explorer.
Result<RunCurves> read_curves(const json& m, const std::string& label) {
  if (!m.is_object() || m.value("format", "") != "stepformer.metrics/1")
    return Error{"metrics: expected \"format\": \"stepformer.metrics/1\", found " +
                 (m.is_object() && m.contains("format") ? m["format"].dump() : std::string("none"))};
  if (!m.contains("steps") || !m["steps"].is_object()) return Error{"metrics: expected a \"steps\" object, found none"};
  RunCurves c;
  c.label = label;
  c.task = m.value("task", "");
  c.norm = m.value("norm", "pre") == "post" ? NormPlacement::Post : NormPlacement::Pre;
  const json& s = m["steps"];
  c.step = nums(s.value("step", json::array()));
  c.loss = nums(s.value("loss", json::array()));
  c.accuracy = nums(s.value("accuracy", json::array()));
  c.lr = nums(s.value("lr", json::array()));
  c.grad_norm = nums(s.value("grad_norm", json::array()));
  c.grad_norm_layer = rows_of(s.value("grad_norm_layer", json::array()));
  c.layers = strings(m.value("layers", json::array()));
  // The step list is appended after the other columns: a live copy may hold one entry less.
  const size_t n = std::min({c.step.size(), c.loss.size(), c.lr.size(), c.grad_norm.size()});
  for (auto* v : {&c.step, &c.loss, &c.accuracy, &c.lr, &c.grad_norm}) v->resize(std::min(v->size(), n));
  if (c.grad_norm_layer.size() > n) c.grad_norm_layer.resize(n);
  if (m.contains("options") && m["options"].is_object()) {
    const json& o = m["options"];
    c.schedule = o.value("schedule", "");
    c.warmup = o.value("warmup", 0);
    c.steps_planned = o.value("steps", int64_t{0});
  }
  double peak = 0;
  for (double v : c.lr)
    if (std::isfinite(v)) peak = std::max(peak, v);
  c.peak_lr = peak;
  if (m.contains("evals")) {
    c.eval_step = nums(m["evals"].value("step", json::array()));
    c.exact_match = nums(m["evals"].value("exact_match", json::array()));
    c.exact_match.resize(std::min(c.exact_match.size(), c.eval_step.size()));
    c.eval_step.resize(c.exact_match.size());
  }
  if (m.contains("probes")) {
    const json& p = m["probes"];
    c.streams = strings(p.value("streams", json::array()));
    c.probe_step = nums(p.value("step", json::array()));
    c.residual_norm = rows_of(p.value("residual_norm", json::array()));
    c.residual_norm.resize(std::min(c.residual_norm.size(), c.probe_step.size()));
    c.probe_step.resize(c.residual_norm.size());
  }
  if (m.contains("final") && m["final"].is_object()) c.final_exact_match = num(m["final"].value("exact_match", json()));
  return c;
}

}  // namespace

Result<RunCurves> curves_from_metrics(const json& m, const std::string& label) {
  try {
    return read_curves(m, label);
  } catch (const json::exception& e) {
    return Error{std::string("metrics: a field has the wrong type: ") + e.what()};
  }
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

// ---- pair options -------------------------------------------------------------------------------

std::string run_label(NormPlacement n, bool warmup, int warmup_steps, double lr) {
  return std::string(n == NormPlacement::Pre ? "pre-LN" : "post-LN") + ", " +
         (warmup ? "warm-up " + std::to_string(warmup_steps) : std::string("no warm-up")) + ", lr " + lr_text(lr);
}

std::vector<TrainRunSpec> pair_specs(const PairOptions& p) {
  std::vector<TrainRunSpec> out;
  for (NormPlacement n : {NormPlacement::Pre, NormPlacement::Post}) {
    TrainOptions o;
    o.task = p.task;
    o.norm = n;
    o.encoder_layers = o.decoder_layers = p.depth;
    o.d_model = p.d_model;
    o.n_heads = p.n_heads;
    o.d_ff = p.d_ff > 0 ? p.d_ff : 4 * p.d_model;
    o.batch = p.batch;
    o.steps = p.steps;
    o.seed = p.seed;
    o.schedule.d_model = p.d_model;
    if (p.warmup) {
      // Vaswani §5.3: lr = factor · d^−½ · min(step^−½, step · warmup^−3/2), largest at step = warmup,
      // where it is factor · d^−½ · warmup^−½. Choose the factor that makes that peak `lr`.
      o.schedule.kind = Schedule::Warmup;
      o.schedule.warmup = std::max(1, p.warmup_steps);
      o.schedule.factor =
          p.lr * std::sqrt(static_cast<double>(p.d_model)) * std::sqrt(static_cast<double>(o.schedule.warmup));
    } else {
      o.schedule.kind = Schedule::Constant;
      o.schedule.rate = p.lr;
    }
    o.eval_every = p.eval_every > 0 ? p.eval_every : static_cast<int>(std::max<int64_t>(1, p.steps / 4));
    o.eval_examples = p.eval_examples;
    o.final_eval_examples = p.eval_examples;
    o.probe_every = p.probe_every;
    o.threads = 1;
    o.command = "stepformer explorer training view";
    out.push_back({run_label(n, p.warmup, p.warmup_steps, p.lr), o});
  }
  return out;
}

const char* to_string(TrainProgress::State s) {
  switch (s) {
    case TrainProgress::Starting:
      return "starting";
    case TrainProgress::Running:
      return "running";
    case TrainProgress::Paused:
      return "paused";
    case TrainProgress::Cancelled:
      return "cancelled";
    case TrainProgress::Finished:
      return "finished";
    case TrainProgress::Failed:
      return "failed";
  }
  return "?";
}

// ---- the job ------------------------------------------------------------------------------------

Result<std::unique_ptr<TrainJob>> TrainJob::start(std::vector<TrainRunSpec> runs) {
  if (runs.empty()) return Error{"training: expected at least one run, found none"};
  std::unique_ptr<TrainJob> job(new TrainJob());
  for (const TrainRunSpec& r : runs) {
    auto t = Trainer::create(r.options);
    if (!t) return Error{r.label + ": " + t.error()};
    job->steps_total_ += r.options.steps;
    job->trainers_.push_back(std::move(*t));
  }
  job->specs_ = std::move(runs);
  auto p = std::make_shared<TrainProgress>();
  p->steps_total = job->steps_total_;
  job->progress_ = p;
  job->thread_ = std::thread([j = job.get()] { j->run(); });
  return job;
}

TrainJob::~TrainJob() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    cancel_ = true;
    done_ = true;  // also: stop serving requests
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TrainJob::pause() {
  paused_ = true;
  cv_.notify_all();
}

void TrainJob::resume() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    paused_ = false;
  }
  cv_.notify_all();
}

void TrainJob::cancel() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    cancel_ = true;
  }
  cv_.notify_all();
}

std::shared_ptr<const TrainProgress> TrainJob::progress() const {
  std::lock_guard<std::mutex> lk(mu_);
  return progress_;
}

bool TrainJob::wait(double seconds) const {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, std::chrono::duration<double>(seconds), [&] { return !progress_->active(); });
}

std::vector<std::string> TrainJob::save_paths(const std::string& stem) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < specs_.size(); ++i) {
    const TrainOptions& o = specs_[i].options;
    std::string p = stem + (o.norm == NormPlacement::Pre ? "-preln" : "-postln") +
                    (o.schedule.kind == Schedule::Warmup ? "" : "-nowarmup");
    int dup = 0;
    for (const std::string& q : out)
      if (q.rfind(p, 0) == 0) ++dup;
    if (dup) p += "-" + std::to_string(dup + 1);
    out.push_back(p + ".safetensors");
  }
  return out;
}

void TrainJob::save(const std::string& stem) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    requests_.push_back([this, stem] {
      const std::vector<std::string> paths = save_paths(stem);
      std::string ok;
      for (size_t i = 0; i < trainers_.size(); ++i) {
        const std::string& p = paths[i];
        const std::string metrics = p.substr(0, p.size() - std::string(".safetensors").size()) + ".metrics.json";
        auto r = trainers_[i].save_model(p);
        if (r) r = trainers_[i].save_metrics(metrics);
        if (!r) {
          messages_.push_back("save failed: " + r.error());
          return;
        }
        ok += (ok.empty() ? "" : ", ") + p;
      }
      messages_.push_back("saved " + ok);
    });
  }
  cv_.notify_all();
}

void TrainJob::publish(TrainProgress::State st, bool with_models) {
  auto p = std::make_shared<TrainProgress>();
  p->state = st;
  for (size_t i = 0; i < trainers_.size(); ++i) {
    auto c = curves_from_metrics(trainers_[i].metrics(), specs_[i].label);
    RunCurves rc = c ? std::move(*c) : RunCurves{};
    rc.label = specs_[i].label;
    p->runs.push_back(std::move(rc));
    if (with_models) p->models.push_back(std::make_shared<const Model>(trainers_[i].model()));
  }
  p->steps_done = steps_done_.load();
  p->steps_total = steps_total_;
  p->seconds = seconds_;
  {
    std::lock_guard<std::mutex> lk(mu_);
    p->messages = messages_;
    p->generation = ++generation_;
    progress_ = std::move(p);
  }
  cv_.notify_all();
}

void TrainJob::run() {
  using clock = std::chrono::steady_clock;
  using S = TrainProgress;
  S::State st = S::Running;
  publish(st, false);
  auto last_publish = clock::now();
  for (;;) {
    // Wait while paused or finished, until a request or a change of state arrives.
    std::function<void()> req;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] {
        if (done_ || !requests_.empty() || st == S::Running) return true;
        if (st == S::Paused) return !paused_ || cancel_.load();
        return false;  // cancelled / finished / failed: only requests wake the job
      });
      if (done_) break;
      if (!requests_.empty()) {
        req = std::move(requests_.front());
        requests_.pop_front();
      }
    }
    if (req) {  // between steps: the trainers are not moving
      req();
      publish(st, st != S::Running);
      continue;
    }
    if (cancel_) {
      st = S::Cancelled;
      publish(st, true);
      continue;
    }
    if (paused_ != (st == S::Paused)) {
      st = paused_ ? S::Paused : S::Running;
      publish(st, st == S::Paused);
      continue;
    }

    // One step of every unfinished run, in order.
    const auto t0 = clock::now();
    bool any = false;
    try {
      for (Trainer& t : trainers_) {
        if (t.finished()) continue;
        t.step();
        ++steps_done_;
        any = true;
      }
      if (!any) {
        for (Trainer& t : trainers_) t.final_evaluation(seconds_);
        st = S::Finished;
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(mu_);
      messages_.push_back(std::string("training failed: ") + e.what());
      st = S::Failed;
    }
    seconds_ += std::chrono::duration<double>(clock::now() - t0).count();
    if (st != S::Running) {
      publish(st, true);
      continue;
    }
    if (clock::now() - last_publish > std::chrono::milliseconds(200)) {
      publish(st, false);
      last_publish = clock::now();
    }
  }
  // Destroyed while active: say so to anyone still holding the progress.
  if (st == S::Running || st == S::Paused) publish(S::Cancelled, false);
}

}  // namespace sf
