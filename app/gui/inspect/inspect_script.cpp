// inspect_script.cpp — the script commands of the Inspect panel (docs/explorer.md):
//   inspect [lens|attribution|heads|rollout]   open the panel on a tab
//   lens-cell POINT POS | none                 follow the top token of a lens cell through the depth
//   attribute POS [TOKEN [OTHER]]              direct logit attribution (TOKEN default: the top one)
//   detect [R [SEED]]                          run the head detectors on R random tokens repeated
//   detect-head enc|dec LAYER HEAD             open a head's attention on the probe
//   rollout [enc|dec] [LAYER]                  attention rollout through LAYER
//   ablate none | LIST [zero|mean]             remove heads / MLPs (L.H, L.xH, L.mlp, …) and re-run
//   patch WHAT ANSWER WRONG | CLEAN | CORRUPT  activation patching (texts between the bars)
//   patch-start WHAT ANSWER WRONG | CLEAN | …  the same, without waiting for the job to end
//   patch-cell LAYER INDEX                     open one cell's patched run
//   patch-cancel                               stop the running patching job
//   inspect-csv FILE                           the current tab's grid as CSV
// Each but patch-start waits until the panel's worker has published what it asked for.
#include "app.h"
#include "io/atomic_file.h"
#include "inspect_panel.h"
#include "script_parse.h"

namespace sf::gui {

namespace {

InspectPanel* inspect_panel(App& app) { return dynamic_cast<InspectPanel*>(app.find_panel("inspect")); }

// Polls until the panel has recorded the explorer's current input and published everything.
std::function<bool(std::string&)> wait_for(App& app, InspectPanel* p) {
  return [&app, p](std::string& error) {
    p->sync(*app.snapshot());
    if (!p->settled()) return false;
    const auto d = p->data();
    for (auto it = d->log.rbegin(); it != d->log.rend(); ++it)
      if (it->level == Message::Error && it->ticket == d->last_error_ticket && d->last_error_ticket == d->ticket) {
        error = it->text;
        break;
      }
    return true;
  };
}

bool parse_stack(const std::string& s, int& stack) {
  if (s == "enc" || s == "encoder") return stack = 0, true;
  if (s == "dec" || s == "decoder") return stack = 1, true;
  return false;
}

bool is_inspect_command(const std::string& cmd) {
  return cmd == "inspect" || cmd == "lens-cell" || cmd == "attribute" || cmd == "detect" || cmd == "detect-head" ||
         cmd == "rollout" || cmd == "inspect-csv" || cmd == "ablate" || cmd == "patch" || cmd == "patch-start" ||
         cmd == "patch-cell" || cmd == "patch-cancel";
}

// One script command of the panel: its words, the panel, the explorer's snapshot, where it reports
// an error and what it waits for.
struct InspectCall {
  App& app;
  InspectPanel* p;
  const Snapshot& snap;
  const std::vector<std::string>& a;
  std::string& error;
  std::function<bool(std::string&)>& until;
  const Config& cfg() const { return snap.model->config; }
  int fail(const std::string& e) const { return error = a[0] + ": " + e, 0; }
  void tab(InspectTab t) const {
    p->select_tab(t);
    if (t == InspectTab::Heads) p->want_heads(snap.model);
  }
  // Waits until the panel has published what the command asked for.
  int wait() const {
    until = wait_for(app, p);
    return 1;
  }
};

// inspect [TAB]
int open_tab(const InspectCall& c) {
  InspectTab t = InspectTab::Lens;
  if (c.a.size() > 1) {
    int found = -1;
    for (int i = 0; i < kInspectTabs; ++i)
      if (c.a[1] == to_string(static_cast<InspectTab>(i))) found = i;
    if (found < 0)
      return c.fail("expected lens, attribution, heads, rollout, ablation or patching, found '" + c.a[1] + "'");
    t = static_cast<InspectTab>(found);
  }
  c.tab(t);
  return c.wait();
}

// lens-cell POINT POS | none
int pin_lens_cell(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  c.tab(InspectTab::Lens);
  int pt, pos;
  if (a.size() == 2 && a[1] == "none")
    c.p->pin_lens(-1, -1);
  else if (a.size() != 3 || !parse_int(a[1], pt) || !parse_int(a[2], pos) || pt < 0 || pos < 0)
    return c.fail("expected POINT POS (a row and a column of the lens) or 'none'");
  else
    c.p->pin_lens(pt, pos);
  return c.wait();
}

// attribute POS [TOKEN [OTHER]]: records first (the position's top token is the default), then
// attributes.
int attribute(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  const Config& cfg = c.cfg();
  c.tab(InspectTab::Attribution);
  int pos;
  if (a.size() < 2 || a.size() > 4 || !parse_int(a[1], pos) || pos < 0) return c.fail("expected POS [TOKEN [OTHER]]");
  if (!cfg.has_decoder()) return c.fail("direct logit attribution needs a decoder (this model is encoder-only)");
  int tok = -1, other = -1;
  if (a.size() > 2 && (tok = find_token(cfg.tgt_vocab, a[2])) < 0)
    return c.fail("'" + a[2] + "' is not in the model's output vocabulary");
  if (a.size() > 3 && (other = find_token(cfg.tgt_vocab, a[3])) < 0)
    return c.fail("'" + a[3] + "' is not in the model's output vocabulary");
  auto wait = wait_for(c.app, c.p);
  bool posted = false;
  InspectPanel* p = c.p;
  c.until = [wait, p, pos, tok, other, posted](std::string& e) mutable {
    if (!wait(e)) return false;
    if (posted || !e.empty()) return true;
    const auto d = p->data();
    const int n = d->run ? static_cast<int>(d->run->ids.size()) : 0;
    if (pos >= n)
      return e = "attribute: position " + std::to_string(pos) + " is out of range (0.." + std::to_string(n - 1) + ")",
             true;
    p->attribute(pos, tok >= 0 ? tok : d->run->top.back()[size_t(pos)].ids.front(), other);
    posted = true;
    return false;
  };
  return 1;
}

// detect [R [SEED]]
int detect_heads(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  int r = 20, seed = 1;
  if ((a.size() > 1 && (!parse_int(a[1], r) || r < 2)) || (a.size() > 2 && (!parse_int(a[2], seed) || seed < 0)))
    return c.fail("expected [R [SEED]]: R ≥ 2 random tokens, a seed ≥ 0");
  c.tab(InspectTab::Heads);
  c.p->detect(r, static_cast<uint64_t>(seed));
  return c.wait();
}

// detect-head enc|dec LAYER HEAD
int open_detected_head(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  const Config& cfg = c.cfg();
  int stack, layer, head;
  if (a.size() != 4 || !parse_stack(a[1], stack) || !parse_int(a[2], layer) || !parse_int(a[3], head) || layer < 0 ||
      head < 0)
    return c.fail("expected enc|dec LAYER HEAD");
  if (stack == 0 && !cfg.has_encoder()) return c.fail("this model has no encoder");
  if (stack == 1 && !cfg.has_decoder()) return c.fail("this model has no decoder");
  const int layers = stack == 0 ? cfg.n_encoder_layers : cfg.n_decoder_layers;
  const int heads = stack == 0 ? cfg.encoder_heads() : cfg.n_heads;
  if (layer >= layers || head >= heads)
    return c.fail("layer " + std::to_string(layer) + " head " + std::to_string(head) + " does not exist (" +
                  std::to_string(layers) + " layers, " + std::to_string(heads) + " heads)");
  c.tab(InspectTab::Heads);
  // The detection lists the encoder first when the model has one.
  c.p->open_head(stack == 1 && cfg.has_encoder() ? 1 : 0, layer, head);
  return c.wait();
}

// rollout [enc|dec] [LAYER]
int show_rollout(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  const Config& cfg = c.cfg();
  int stack = cfg.has_decoder() ? 1 : 0, layer = -1;
  size_t i = 1;
  if (a.size() > i && parse_stack(a[i], stack)) ++i;
  if (a.size() > i && (!parse_int(a[i], layer) || layer < 0)) return c.fail("expected [enc|dec] [LAYER]");
  if (stack == 0 && !cfg.has_encoder()) return c.fail("this model has no encoder");
  if (stack == 1 && !cfg.has_decoder()) return c.fail("this model has no decoder");
  const int layers = stack == 0 ? cfg.n_encoder_layers : cfg.n_decoder_layers;
  if (layer >= layers)
    return c.fail("layer " + std::to_string(layer) + " does not exist (" + std::to_string(layers) + ")");
  c.tab(InspectTab::Rollout);
  c.p->set_rollout(stack, layer);
  return c.wait();
}

// ablate none | LIST [zero|mean]
int ablate(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  c.tab(InspectTab::Ablation);
  if (a.size() < 2 || a.size() > 3) return c.fail("expected none, or LIST [zero|mean] (LIST as 1.3,0.mlp)");
  if (a[1] == "none") {
    c.p->set_ablation({}, EditMode::Zero);
  } else {
    auto targets = parse_ablation(*c.snap.model, a[1]);
    if (!targets) return c.fail(targets.error());
    auto mode = parse_ablation_mode(a.size() > 2 ? a[2] : "zero");
    if (!mode) return c.fail(mode.error());
    c.p->set_ablation(*targets, *mode);
  }
  return c.wait();
}

// The words after the command split at '|', each part trimmed.
std::vector<std::string> bar_separated(const std::vector<std::string>& a) {
  std::string rest;
  for (size_t i = 1; i < a.size(); ++i) rest += (i > 1 ? " " : "") + a[i];
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t bar = rest.find('|', at);
    parts.push_back(rest.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
    if (bar == std::string::npos) break;
    at = bar + 1;
  }
  for (std::string& s : parts) {
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
  }
  return parts;
}

// patch WHAT ANSWER WRONG | clean text | corrupted text (patch-start: without waiting)
int patch(const InspectCall& c) {
  const std::vector<std::string> parts = bar_separated(c.a);
  const std::vector<std::string> head = parts.empty() ? std::vector<std::string>{} : split_words(parts[0]);
  if (parts.size() != 3 || head.size() != 3) return c.fail("expected WHAT ANSWER WRONG | CLEAN | CORRUPTED");
  auto what = parse_patch_what(head[0]);
  if (!what) return c.fail(what.error());
  c.tab(InspectTab::Patching);
  PatchRequest req;
  req.model = c.snap.model;
  req.what = *what;
  req.answer = head[1];
  req.wrong = head[2];
  req.clean = parts[1];
  req.corrupt = parts[2];
  c.p->run_patch(req);
  return c.a[0] == "patch-start" ? 1 : c.wait();
}

// patch-cell LAYER INDEX
int open_patch_cell(const InspectCall& c) {
  const std::vector<std::string>& a = c.a;
  int layer, index;
  if (a.size() != 3 || !parse_int(a[1], layer) || !parse_int(a[2], index) || layer < 0 || index < 0)
    return c.fail("expected LAYER INDEX (a row and a column of the patching grid)");
  c.tab(InspectTab::Patching);
  c.p->open_patch_cell(layer, index);
  return c.wait();
}

// inspect-csv FILE
int write_csv(const InspectCall& c) {
  if (c.a.size() != 2) return c.fail("expected a file name");
  std::string text;
  if (!c.p->csv(text, c.error)) return 0;
  if (auto ok = write_file_atomic(c.a[1], text); !ok) return c.fail(ok.error());
  return 1;
}

}  // namespace

int run_inspect_command(App& app, const std::vector<std::string>& a, std::string& error,
                        std::function<bool(std::string&)>& until) {
  const std::string& cmd = a[0];
  if (!is_inspect_command(cmd)) return -1;
  InspectPanel* p = inspect_panel(app);
  const auto snap = app.snapshot();
  if (!p) return error = cmd + ": the explorer has no Inspect panel", 0;
  if (!snap->ok()) return error = cmd + ": no model and input to inspect (load a model first)", 0;
  app.show_panel(p);
  const InspectCall c{app, p, *snap, a, error, until};
  if (cmd == "inspect") return open_tab(c);
  if (cmd == "lens-cell") return pin_lens_cell(c);
  if (cmd == "attribute") return attribute(c);
  if (cmd == "detect") return detect_heads(c);
  if (cmd == "detect-head") return open_detected_head(c);
  if (cmd == "rollout") return show_rollout(c);
  if (cmd == "ablate") return ablate(c);
  if (cmd == "patch" || cmd == "patch-start") return patch(c);
  if (cmd == "patch-cell") return open_patch_cell(c);
  if (cmd == "patch-cancel") {
    p->cancel_patch();
    return c.wait();
  }
  return write_csv(c);  // inspect-csv
}

}  // namespace sf::gui
