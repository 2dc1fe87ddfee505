// hub.cpp — the compare worker thread, shipped pairs, the training job and the gradient-norm task.
//
// [SECTION] compare engine (worker thread)
// [SECTION] compare worker
// [SECTION] shipped pairs
// [SECTION] hub
#include "compare/hub.h"

#include <algorithm>
#include <chrono>

#include "analysis/head_detector.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "train/examples.h"
#include "paths.h"
#include "worker.h"

namespace sf::gui {

// [SECTION] compare engine (worker thread)

void CompareEngine::info(const std::string& m) {
  log.push_back(m);
  if (log.size() > 100) log.erase(log.begin(), log.begin() + 20);
}

void CompareEngine::error(const std::string& m) {
  info("error: " + m);
  last_error_ticket = ticket;
}

bool CompareEngine::load(std::shared_ptr<const Model> a, const std::string& name_a, std::shared_ptr<const Model> b,
                         const std::string& name_b, const std::string& path_a) {
  model[0] = std::move(a);
  model[1] = std::move(b);
  name[0] = name_a;
  name[1] = name_b;
  cmp.reset();
  // Keep the typed input when both models read it without unknown words; else A's example.
  bool fits = !src.empty();
  for (int i = 0; i < 2 && fits; ++i) {
    const Config& c = model[i]->config;
    fits = prepare_input(*model[i], src, tgt).ok() &&
           (c.has_encoder() ? c.src_vocab : c.tgt_vocab).tokenize(src).unknown.empty();
  }
  if (!fits) {
    std::map<std::string, std::string> metadata;
    if (!path_a.empty() && !dir_exists(path_a))
      if (auto md = read_safetensors_metadata(path_a); md.ok()) metadata = std::move(*md);
    src = model_example_text(model[0]->config, metadata);
    tgt.clear();
  }
  if (settings.strategy == Strategy::Forced && tgt.empty()) settings.strategy = Strategy::Greedy;
  info("compare: A = " + name_a + " (" + to_string(model[0]->config.norm) + "-LN), B = " + name_b + " (" +
       to_string(model[1]->config.norm) + "-LN)");
  return set_input(src, tgt);
}

bool CompareEngine::set_input(const std::string& s, const std::string& t) {
  src = s;
  tgt = t;
  if (!model[0] || !model[1]) {
    error("compare: open two models first");
    return false;
  }
  DecodeSettings d = settings;
  d.strategy = t.empty() ? Strategy::Greedy : Strategy::Forced;
  auto c = Comparison::create(model[0], model[1], s, t, d);
  if (!c) {
    error("compare: input refused: " + c.error() + (cmp ? " — the previous input stays" : ""));
    return false;
  }
  settings = d;
  cmp = std::move(*c);
  for (const std::string& w : cmp->warnings()) info("warning: " + w);
  return true;
}

// [SECTION] compare worker

namespace {

std::shared_ptr<const CompareSnap> publish_comparison(CompareEngine& e, uint64_t generation) {
  auto s = std::make_shared<CompareSnap>();
  stamp(*s, e, generation);
  s->src = e.src;
  s->tgt = e.tgt;
  if (e.cmp) {
    try {
      s->cmp = std::make_shared<const Comparison>(*e.cmp);
      s->position = e.cmp->position();
      s->known = static_cast<int>(e.cmp->timeline().size());
      s->point = describe(e.cmp->key());
      for (int i = 0; i < 2; ++i) {
        auto v = std::make_shared<Snapshot>();
        v->generation = s->generation;
        v->model = e.model[i];
        v->model_name = e.name[i];
        v->src_text = e.src;
        v->tgt_text = e.tgt;
        v->session = std::make_shared<const Session>(e.cmp->run(i));
        build_views(*v);
        s->run[i].view = std::move(v);
        s->run[i].stats = layer_stats(e.cmp->run(i));
        s->run[i].name = e.name[i];
        s->run[i].model = e.model[i];
      }
    } catch (const std::exception& ex) {
      s->log.push_back(std::string("error: internal error while building the compare views: ") + ex.what());
    }
  }
  return s;
}

}  // namespace

CompareWorker::CompareWorker(std::function<void()> wake) : JobThread(publish_comparison, std::move(wake)) {}

// [SECTION] shipped pairs

std::vector<ShippedPair> shipped_pairs() {
  std::vector<ShippedPair> out;
  const std::string suffix = "-preln.safetensors";
  for (const std::string& p : shipped_models()) {
    const std::string b = base_name(p);
    if (b.size() <= suffix.size() || b.compare(b.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    ShippedPair sp;
    sp.task = b.substr(0, b.size() - suffix.size());
    sp.pre = p;
    sp.post = p.substr(0, p.size() - suffix.size()) + "-postln.safetensors";
    if (!file_exists(sp.post)) continue;
    const auto metrics = [](const std::string& m) {
      const std::string x = m.substr(0, m.size() - std::string(".safetensors").size()) + ".metrics.json";
      return file_exists(x) ? x : std::string();
    };
    sp.pre_metrics = metrics(sp.pre);
    sp.post_metrics = metrics(sp.post);
    out.push_back(sp);
  }
  return out;
}

// [SECTION] hub

namespace {
PrePostHub* g_hub = nullptr;
}

PrePostHub* prepost_hub() { return g_hub; }

PrePostHub::PrePostHub(std::function<void()> wake) : compare(std::move(wake)) {
  g_hub = this;
  pairs = shipped_pairs();
  gn_opt.layers = 6;
  gn_opt.seeds = 10;
  std::snprintf(save_stem, sizeof save_stem, "stepformer-export/trained");
}

PrePostHub::~PrePostHub() {
  job.reset();  // cancels and joins
  retiring_.clear();
  if (gn_future.valid()) gn_future.wait();
  if (g_hub == this) g_hub = nullptr;
}

uint64_t PrePostHub::open_pair(const ShippedPair& p) {
  const std::string a = p.pre, b = p.post;
  return compare.post([a, b](CompareEngine& e) {
    auto ma = load_model(a), mb = load_model(b);
    if (!ma || !mb) return e.error("compare: cannot load model: " + (ma ? mb.error() : ma.error()));
    e.load(std::make_shared<const Model>(std::move(*ma)), base_name(a), std::make_shared<const Model>(std::move(*mb)),
           base_name(b), a);
  });
}

uint64_t PrePostHub::open_files(const std::string& a, const std::string& b) {
  return compare.post([a, b](CompareEngine& e) {
    auto ma = load_model(a), mb = load_model(b);
    if (!ma || !mb) return e.error("compare: cannot load model: " + (ma ? mb.error() : ma.error()));
    e.load(std::make_shared<const Model>(std::move(*ma)), base_name(a), std::make_shared<const Model>(std::move(*mb)),
           base_name(b), a);
  });
}

uint64_t PrePostHub::open_models(std::shared_ptr<const Model> a, const std::string& name_a,
                                 std::shared_ptr<const Model> b, const std::string& name_b) {
  return compare.post([a, b, name_a, name_b](CompareEngine& e) { e.load(a, name_a, b, name_b); });
}

uint64_t PrePostHub::open_switched(std::shared_ptr<const Model> m, const std::string& name) {
  return compare.post([m, name](CompareEngine& e) {
    if (!m) return e.error("compare: no model is loaded in the explorer to switch");
    const NormPlacement other = m->config.norm == NormPlacement::Pre ? NormPlacement::Post : NormPlacement::Pre;
    auto sw = std::make_shared<const Model>(with_norm_placement(*m, other));
    e.load(m, name, sw, name + " → " + to_string(other) + "-LN (switched)");
    e.info("B is A's weights with the LayerNorm placement switched: an experiment, not an equivalent model");
  });
}

uint64_t PrePostHub::move(const std::string& what, int times) {
  return compare.post([what, times](CompareEngine& e) {
    if (!e.cmp) return e.error("compare: nothing to step — open a pair of models first");
    for (int i = 0; i < times; ++i) {
      bool ok = true;
      if (what == "forward")
        ok = e.cmp->forward();
      else if (what == "back")
        ok = e.cmp->back();
      else if (what == "next-token")
        ok = e.cmp->next_token();
      else if (what == "prev-token")
        ok = e.cmp->prev_token();
      else if (what == "end")
        e.cmp->run_to_end();
      else if (what == "home")
        e.cmp->home();
      if (!ok) {
        e.info(e.cmp->message());
        break;
      }
    }
  });
}

bool PrePostHub::start_training() {
  if (job) {
    // The progress is held while it is read: the job thread may publish a new one meanwhile and
    // drop its own reference (a range-for over job->progress()->runs reads a freed object).
    const auto progress = job->progress();
    if (keep_history)
      for (const RunCurves& r : progress->runs)
        if (!r.step.empty()) history.push_back(r);
    if (history.size() > 8) history.erase(history.begin(), history.begin() + static_cast<long>(history.size() - 8));
    if (progress->active()) {
      job->cancel();
      retiring_.push_back(std::move(job));
    }
    job.reset();
  }
  std::vector<TrainRunSpec> specs = pair_specs(train_opt);
  for (TrainRunSpec& s : specs) s.probe = record_head_scores;  // each head's detector scores, plotted
  auto j = TrainJob::start(std::move(specs));
  if (!j) {
    job_error = j.error();
    return false;
  }
  job_error.clear();
  job = std::move(*j);
  return true;
}

std::vector<RunCurves> PrePostHub::plotted_runs() const {
  std::vector<RunCurves> out;
  if (keep_history)
    for (const RunCurves& r : history) {
      out.push_back(r);
      out.back().label = "earlier: " + r.label;
    }
  if (show_recorded)
    for (const RunCurves& r : recorded) out.push_back(r);
  if (job) {
    const auto progress = job->progress();  // held while its runs are read: the job may replace it
    for (const RunCurves& r : progress->runs) out.push_back(r);
  }
  return out;
}

bool PrePostHub::load_recorded(const ShippedPair& p, std::string& error) {
  std::vector<RunCurves> rs;
  for (const std::string* m : {&p.pre_metrics, &p.post_metrics}) {
    if (m->empty()) {
      error = "no recorded metrics for " + p.task + " (expected " + p.task +
              "-preln.metrics.json and -postln.metrics.json)";
      return false;
    }
    auto c = curves_from_metrics_file(*m, "");
    if (!c) {
      error = c.error();
      return false;
    }
    c->label = "recorded " + p.task + " " + (c->norm == NormPlacement::Pre ? "pre-LN" : "post-LN") +
               (c->schedule == "warmup" ? ", warm-up " + std::to_string(c->warmup) : ", no warm-up");
    rs.push_back(std::move(*c));
  }
  recorded = std::move(rs);
  recorded_name = p.task;
  show_recorded = true;
  return true;
}

void PrePostHub::start_gradnorms() {
  if (gn_running()) return;
  gn_started_ = std::chrono::steady_clock::now();
  GradNormOptions o = gn_opt;
  gn_future = std::async(std::launch::async, [o] { return gradnorms_pair(o); });
}

void PrePostHub::poll() {
  for (auto it = retiring_.begin(); it != retiring_.end();)
    it = (*it)->progress()->active() ? it + 1 : retiring_.erase(it);
  if (gn_future.valid() && gn_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    gn_result = std::make_shared<const GradNormPair>(gn_future.get());
    gn_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - gn_started_).count();
  }
}

}  // namespace sf::gui
