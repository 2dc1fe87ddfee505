#include "train/train_job.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace sf {

namespace {

std::string lr_text(double lr) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", lr);
  return b;
}

}  // namespace

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
    o.d_ff = p.attention_only ? 0 : p.d_ff > 0 ? p.d_ff : 4 * p.d_model;
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
    out.push_back({run_label(n, p.warmup, p.warmup_steps, p.lr), o, {}});
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
    if (r.probe) t->set_probe(r.probe);
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
  curves_.resize(trainers_.size());
  for (size_t i = 0; i < trainers_.size(); ++i) {
    // Only the rows recorded since the last publication are read.
    RunCurves& c = curves_[i];
    if (!update_curves(c, trainers_[i].metrics())) c = RunCurves{};
    c.label = specs_[i].label;
    p->runs.push_back(c);
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

// Blocks while paused or stopped until a request or a change of state arrives; returns the request
// to run (empty when there is none), or nothing with `stop` set when the job is being destroyed.
std::function<void()> TrainJob::next_request(TrainProgress::State st, bool& stop) {
  using S = TrainProgress;
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] {
    if (done_ || !requests_.empty() || st == S::Running) return true;
    if (st == S::Paused) return !paused_ || cancel_.load();
    return false;  // cancelled / finished / failed: only requests wake the job
  });
  stop = done_;
  if (stop || requests_.empty()) return {};
  std::function<void()> req = std::move(requests_.front());
  requests_.pop_front();
  return req;
}

// One step of every unfinished run, in order; the final evaluations once every run has finished.
// Returns the state after it (Running, Finished or Failed).
TrainProgress::State TrainJob::step_runs() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  TrainProgress::State st = TrainProgress::Running;
  try {
    bool any = false;
    for (Trainer& t : trainers_) {
      if (t.finished()) continue;
      t.step();
      ++steps_done_;
      any = true;
    }
    if (!any) {
      for (Trainer& t : trainers_) t.final_evaluation(seconds_);
      st = TrainProgress::Finished;
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(mu_);
    messages_.push_back(std::string("training failed: ") + e.what());
    st = TrainProgress::Failed;
  }
  seconds_ += std::chrono::duration<double>(clock::now() - t0).count();
  return st;
}

void TrainJob::run() {
  using clock = std::chrono::steady_clock;
  using S = TrainProgress;
  S::State st = S::Running;
  publish(st, false);
  auto last_publish = clock::now();
  for (;;) {
    bool stop = false;
    if (std::function<void()> req = next_request(st, stop)) {  // between steps: the trainers are not moving
      req();
      publish(st, st != S::Running);
      continue;
    }
    if (stop) break;
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
    st = step_runs();
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
