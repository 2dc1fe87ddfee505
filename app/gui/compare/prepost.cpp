// prepost.cpp — the three panels' factory and their script commands (docs/compare.md).
#include "compare/prepost.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "app.h"
#include "compare/panels.h"
#include "paths.h"
#include "script_parse.h"

namespace sf::gui {

std::vector<std::unique_ptr<Panel>> make_prepost_panels() {
  auto hub = std::make_shared<PrePostHub>([] { glfwPostEmptyEvent(); });
  std::vector<std::unique_ptr<Panel>> out;
  out.push_back(make_compare_panel(hub));
  out.push_back(make_training_panel(hub));
  out.push_back(make_gradnorms_panel(hub));
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

// Waits for a compare-worker operation; fails with its error if it refused.
std::function<bool(std::string&)> compare_done(PrePostHub* hub, uint64_t ticket) {
  return [hub, ticket](std::string& error) {
    const auto s = hub->compare.snapshot();
    if (!hub->compare.idle() || s->ticket < ticket) return false;
    if (s->last_error_ticket == ticket && !s->log.empty()) error = s->log.back();
    return true;
  };
}

// Applies key=value options; false with `error` on an unknown key or a bad value.
bool train_options(const std::vector<std::string>& a, PairOptions& o, std::string& error) {
  for (size_t i = 1; i < a.size(); ++i) {
    const size_t eq = a[i].find('=');
    if (eq == std::string::npos) return error = "train-both: expected key=value, found '" + a[i] + "'", false;
    const std::string k = a[i].substr(0, eq), v = a[i].substr(eq + 1);
    int n = 0;
    double x = 0;
    bool b = false;
    if (k == "task")
      o.task = v;
    else if (k == "layers" && parse_int(v, n) && n >= 1 && n <= 12)
      o.depth = n;
    else if (k == "d_model" && parse_int(v, n) && n >= 2)
      o.d_model = n;
    else if (k == "heads" && parse_int(v, n) && n >= 1)
      o.n_heads = n;
    else if (k == "lr" && parse_double(v, x) && x > 0)
      o.lr = x;
    else if (k == "warmup" && parse_onoff(v, b))
      o.warmup = b;
    else if (k == "warmup_steps" && parse_int(v, n) && n >= 1)
      o.warmup_steps = n;
    else if (k == "steps" && parse_int(v, n) && n >= 1)
      o.steps = n;
    else if (k == "batch" && parse_int(v, n) && n >= 1)
      o.batch = n;
    else if (k == "seed" && parse_int(v, n) && n >= 0)
      o.seed = static_cast<uint64_t>(n);
    else if (k == "eval_examples" && parse_int(v, n) && n >= 1)
      o.eval_examples = n;
    else if (k == "attention_only" && parse_onoff(v, b))
      o.attention_only = b;
    else
      return error = "train-both: bad '" + a[i] +
                     "' (task=T layers=N d_model=D heads=H lr=X warmup=on|off warmup_steps=N steps=N batch=N seed=N "
                     "attention_only=on|off)",
             false;
  }
  return true;
}

}  // namespace

namespace {

// One script command of these panels: its words, its line, where it reports an error and what it
// waits for.
struct Call {
  App& app;
  PrePostHub* hub;
  const std::vector<std::string>& a;
  const std::string& line;
  std::string& error;
  std::function<bool(std::string&)>& until;
  const std::string& cmd() const { return a[0]; }
  void show(const char* key) const {
    if (Panel* p = app.find_panel(key)) app.show_panel(p);
  }
  // The command's count argument (def when absent); −1 with `error` when it is not a count.
  int count(int def) const {
    int n = def;
    if (a.size() > 1 && (!parse_int(a[1], n) || n < 0)) {
      error = cmd() + ": expected a count, found '" + a[1] + "'";
      return -1;
    }
    return n;
  }
};

bool is_prepost_command(const std::string& cmd) {
  return cmd == "compare" || cmd.rfind("compare-", 0) == 0 || cmd == "expect-compare" || cmd.rfind("train-", 0) == 0 ||
         cmd == "wait-training" || cmd == "expect-training" || cmd == "gradnorms" || cmd == "export-plot";
}

// ---- compare

// compare [default | pair TASK | switch | files A B | trained]
int open_comparison(Call& c) {
  PrePostHub* hub = c.hub;
  const std::vector<std::string>& a = c.a;
  c.show("compare");
  uint64_t t = 0;
  const std::string how = a.size() > 1 ? a[1] : "default";
  if (how == "default" || how == "pair") {
    const std::string task = a.size() > 2 ? a[2] : "";
    for (const ShippedPair& p : hub->pairs)
      if (task.empty() || p.task == task) {
        t = hub->open_pair(p);
        break;
      }
    if (!t) {
      if (how == "pair") return c.error = "compare pair: no shipped pair '" + task + "' in assets/models", 0;
      // No shipped pair yet: the explorer's model against itself with the placement switched.
      const auto snap = c.app.snapshot();
      if (!snap->model) return c.error = "compare: no shipped pair and no model in the explorer", 0;
      c.app.notify(Message::Warning,
                   "compare: no shipped pre/post pair yet — using the explorer's model, placement switched");
      t = hub->open_switched(snap->model, snap->model_name);
    }
  } else if (how == "switch") {
    const auto snap = c.app.snapshot();
    t = hub->open_switched(snap->model, snap->model_name);
  } else if (how == "files") {
    if (a.size() < 4) return c.error = "compare files: expected two model files", 0;
    t = hub->open_files(a[2], a[3]);
  } else if (how == "trained") {
    if (!hub->job || hub->job->progress()->models.size() < 2)
      return c.error = "compare trained: no trained pair (pause or finish a training first)", 0;
    const auto p = hub->job->progress();
    t = hub->open_models(p->models[0], p->runs[0].label + " (trained)", p->models[1], p->runs[1].label + " (trained)");
  } else {
    return c.error = "compare: expected default | pair TASK | switch | files A B | trained, found '" + how + "'", 0;
  }
  c.until = compare_done(hub, t);
  return 1;
}

// compare-input TEXT, compare-target TEXT
int set_compare_input(Call& c) {
  const auto s = c.hub->compare.snapshot();
  const std::string text = rest_after(c.line, c.cmd());
  const bool input = c.cmd() == "compare-input";
  const std::string src = input ? text : s->src, tgt = input ? s->tgt : text;
  c.until = compare_done(c.hub, c.hub->compare.post([src, tgt](CompareEngine& e) { e.set_input(src, tgt); }));
  return 1;
}

bool is_compare_move(const std::string& cmd) {
  return cmd == "compare-step" || cmd == "compare-back" || cmd == "compare-token" || cmd == "compare-prev-token" ||
         cmd == "compare-end" || cmd == "compare-home";
}

// compare-step|back|token|prev-token|end|home [N]
int move_comparison(Call& c) {
  const int n = c.count(1);
  if (n < 0) return 0;
  const std::string& cmd = c.cmd();
  const std::string op = cmd == "compare-step"         ? "forward"
                         : cmd == "compare-back"       ? "back"
                         : cmd == "compare-token"      ? "next-token"
                         : cmd == "compare-prev-token" ? "prev-token"
                         : cmd == "compare-end"        ? "end"
                                                       : "home";
  c.until = compare_done(c.hub, c.hub->move(op, n));
  return 1;
}

// compare-select kind=enc-self|dec-self|cross layer=N head=N follow=on|off
int select_in_comparison(Call& c) {
  CompareSelection& sel = c.hub->sel;
  for (size_t i = 1; i < c.a.size(); ++i) {
    const std::string& arg = c.a[i];
    const size_t eq = arg.find('=');
    const std::string k = eq == std::string::npos ? arg : arg.substr(0, eq),
                      v = eq == std::string::npos ? "" : arg.substr(eq + 1);
    int n;
    bool b;
    if (k == "layer" && parse_int(v, n) && n >= 0)
      sel.layer = n, sel.follow = false;
    else if (k == "head" && parse_int(v, n) && n >= 0)
      sel.head = n;
    else if (k == "kind" && (v == "enc-self" || v == "dec-self" || v == "cross"))
      sel.kind = v == "enc-self"   ? AttnKind::EncoderSelf
                 : v == "dec-self" ? AttnKind::DecoderSelf
                                   : AttnKind::Cross,
      sel.follow = false;
    else if (k == "follow" && parse_onoff(v, b))
      sel.follow = b;
    else
      return c.error = "compare-select: bad '" + arg + "' (kind=enc-self|dec-self|cross layer=N head=N follow=on|off)",
             0;
  }
  return 1;
}

// expect-compare aligned | finished | stage-a TEXT | stage-b TEXT
int expect_comparison(Call& c) {
  const auto s = c.hub->compare.snapshot();
  if (!s->ok()) return c.error = "expect-compare: no comparison is open", 0;
  const Comparison& cmp = *s->cmp;
  const std::string what = c.a.size() > 1 ? c.a[1] : "aligned";
  if (what == "aligned") {
    const Session &x = cmp.run(0), &y = cmp.run(1);
    const bool ok = x.current_step() == y.current_step() || x.at_end() || y.at_end();
    const AlignKey kx = align_key(x, x.cursor()), ky = align_key(y, y.cursor());
    if (!ok || !(kx <= cmp.key()) || !(ky <= cmp.key()) || !(kx == cmp.key() || ky == cmp.key()))
      return c.error = "expect-compare aligned: A is on '" + x.current().title + "', B on '" + y.current().title + "'",
             0;
    return 1;
  }
  if (what == "finished") return cmp.at_end() ? 1 : (c.error = "expect-compare finished: not at the end", 0);
  if (what == "stage-a" || what == "stage-b") {
    const std::string want = rest_after(c.line, what);
    const std::string have = cmp.run(what == "stage-a" ? 0 : 1).current().title;
    if (have.find(want) == std::string::npos)
      return c.error = "expect-compare " + what + ": '" + have + "' lacks '" + want + "'", 0;
    return 1;
  }
  return c.error = "expect-compare: expected aligned | finished | stage-a TEXT | stage-b TEXT", 0;
}

// ---- training

// train-both key=value …
int train_both(Call& c) {
  PrePostHub* hub = c.hub;
  PairOptions o = hub->train_opt;
  if (!train_options(c.a, o, c.error)) return 0;
  hub->train_opt = o;
  c.show("training");
  if (!hub->start_training()) return c.error = "train-both: " + hub->job_error, 0;
  return 1;
}

// wait-training [SECONDS]
int wait_for_training(Call& c) {
  PrePostHub* hub = c.hub;
  int seconds = 600;
  if (c.a.size() > 1 && !parse_int(c.a[1], seconds)) return c.error = "wait-training: expected seconds", 0;
  if (!hub->job) return c.error = "wait-training: no training is running", 0;
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  c.until = [hub, deadline](std::string& e) {
    if (!hub->job) return true;
    const auto p = hub->job->progress();
    if (!p->active()) {
      if (p->state == TrainProgress::Failed) e = "training failed";
      return true;
    }
    if (Clock::now() > deadline) {
      e = "wait-training: still " + std::string(to_string(p->state)) + " after the timeout";
      return true;
    }
    // A scripted run draws as fast as it can; while it only waits, ~50 frames a second are
    // plenty (and a headless run stays far from the explorer's frame limit).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return false;
  };
  return 1;
}

// train-pause, train-resume, train-cancel
int control_training(Call& c) {
  PrePostHub* hub = c.hub;
  const std::string& cmd = c.cmd();
  if (!hub->job) return c.error = cmd + ": no training job", 0;
  const TrainProgress::State want = cmd == "train-pause"    ? TrainProgress::Paused
                                    : cmd == "train-resume" ? TrainProgress::Running
                                                            : TrainProgress::Cancelled;
  if (cmd == "train-pause")
    hub->job->pause();
  else if (cmd == "train-resume")
    hub->job->resume();
  else
    hub->job->cancel();
  c.until = [hub, want](std::string&) {
    const auto p = hub->job->progress();
    return p->state == want || !p->active();
  };
  return 1;
}

// train-save STEM
int save_training(Call& c) {
  PrePostHub* hub = c.hub;
  if (c.a.size() < 2) return c.error = "train-save: expected a file stem", 0;
  if (!hub->job) return c.error = "train-save: no training job", 0;
  const size_t before = hub->job->progress()->messages.size();
  hub->job->save(c.a[1]);
  c.until = [hub, before](std::string& e) {
    const auto p = hub->job->progress();
    if (p->messages.size() <= before) return false;
    if (p->messages.back().rfind("saved", 0) != 0) e = p->messages.back();
    return true;
  };
  return 1;
}

// train-recorded TASK | none
int show_recorded_training(Call& c) {
  PrePostHub* hub = c.hub;
  if (c.a.size() < 2) return c.error = "train-recorded: expected a task (or 'none')", 0;
  c.show("training");
  if (c.a[1] == "none") return hub->recorded.clear(), 1;
  for (const ShippedPair& p : hub->pairs)
    if (p.task == c.a[1]) return hub->load_recorded(p, c.error) ? 1 : 0;
  return c.error = "train-recorded: no shipped pair '" + c.a[1] + "'", 0;
}

// expect-training [STATE]
int expect_training(Call& c) {
  if (!c.hub->job) return c.error = "expect-training: no training job", 0;
  const auto p = c.hub->job->progress();
  const std::string want = c.a.size() > 1 ? c.a[1] : "finished";
  if (want != to_string(p->state))
    return c.error = "expect-training: the job is " + std::string(to_string(p->state)) + ", expected " + want, 0;
  return 1;
}

// ---- gradient norms at initialisation

// gradnorms layers=N seeds=N d_model=D heads=H d_ff=F batch=B
int measure_gradnorms(Call& c) {
  PrePostHub* hub = c.hub;
  GradNormOptions& o = hub->gn_opt;
  for (size_t i = 1; i < c.a.size(); ++i) {
    const std::string& arg = c.a[i];
    const size_t eq = arg.find('=');
    int n = 0;
    const std::string k = eq == std::string::npos ? arg : arg.substr(0, eq),
                      v = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (!parse_int(v, n) || n < 1)
      return c.error = "gradnorms: bad '" + arg + "' (layers=N seeds=N d_model=D heads=H d_ff=F batch=B)", 0;
    if (k == "layers")
      o.layers = n;
    else if (k == "seeds")
      o.seeds = n;
    else if (k == "d_model")
      o.d_model = n, o.d_ff = 4 * n;
    else if (k == "heads")
      o.n_heads = n;
    else if (k == "d_ff")
      o.d_ff = n;
    else if (k == "batch")
      o.batch = n;
    else
      return c.error = "gradnorms: unknown option '" + k + "'", 0;
  }
  c.show("gradnorms");
  if (hub->gn_running()) hub->gn_future.wait(), hub->poll();
  hub->gn_result.reset();
  hub->start_gradnorms();
  c.until = [hub](std::string&) {
    hub->poll();
    return !hub->gn_running() && hub->gn_result != nullptr;
  };
  return 1;
}

// ---- export

// export-plot PLOT FILE
int export_plot(Call& c) {
  if (c.a.size() < 3) return c.error = "export-plot: expected PLOT FILE (.png or .csv)", 0;
  const std::vector<std::string> ids = drawn_plot_ids();
  if (std::find(ids.begin(), ids.end(), c.a[1]) == ids.end()) {
    std::string names;
    for (const std::string& i : ids) names += (names.empty() ? "" : ", ") + i;
    return c.error =
               "export-plot: no plot '" + c.a[1] + "' on screen (on screen: " + (names.empty() ? "none" : names) + ")",
           0;
  }
  if (!request_plot_export(c.a[1], c.a[2], c.error)) return 0;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  c.until = [deadline](std::string& e) {
    if (pending_plot_exports() == 0) return true;
    if (Clock::now() > deadline) return e = "export-plot: the plot was not drawn again", true;
    return false;
  };
  return 1;
}

}  // namespace

int run_prepost_command(App& app, const std::vector<std::string>& a, const std::string& line, std::string& error,
                        std::function<bool(std::string&)>& until) {
  const std::string& cmd = a[0];
  if (!is_prepost_command(cmd)) return -1;
  PrePostHub* hub = prepost_hub();
  if (!hub) return error = cmd + ": the pre-LN/post-LN views are not available", 0;
  Call c{app, hub, a, line, error, until};
  if (cmd == "compare") return open_comparison(c);
  if (cmd == "compare-input" || cmd == "compare-target") return set_compare_input(c);
  if (is_compare_move(cmd)) return move_comparison(c);
  if (cmd == "compare-select") return select_in_comparison(c);
  if (cmd == "expect-compare") return expect_comparison(c);
  if (cmd == "train-both") return train_both(c);
  if (cmd == "wait-training") return wait_for_training(c);
  if (cmd == "train-pause" || cmd == "train-resume" || cmd == "train-cancel") return control_training(c);
  if (cmd == "train-save") return save_training(c);
  if (cmd == "train-recorded") return show_recorded_training(c);
  if (cmd == "expect-training") return expect_training(c);
  if (cmd == "gradnorms") return measure_gradnorms(c);
  if (cmd == "export-plot") return export_plot(c);
  return -1;
}

}  // namespace sf::gui
