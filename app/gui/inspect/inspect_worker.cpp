#include "inspect_worker.h"

#include <algorithm>

#include "analysis/rollout.h"
#include "stepper/run.h"

namespace sf::gui {

int find_token(const Vocab& v, const std::string& text) {
  if (text.empty()) return -1;
  if (const int id = v.id(text); id >= 0) return id;
  for (int id = 0; id < v.size(); ++id)
    if (display_token(v, id) == text) return id;
  return -1;
}

InspectInput inspect_input(const Snapshot& s) {
  InspectInput in;
  if (!s.ok()) return in;
  const Session& ses = *s.session;
  const Config& c = s.model->config;
  in.model = s.model;
  in.input = ses.input();
  in.run = ses.settings().run;
  if (!c.has_decoder()) {
    in.input.tgt_ids.clear();
    return in;
  }
  // Teacher forcing on the target if there is one, else on what has been decoded so far.
  const bool has_target = c.has_encoder() ? in.input.tgt_ids.size() > 1 : !in.input.tgt.ids.empty();
  if (!has_target)
    for (int id : ses.tokens())
      if (static_cast<int>(in.input.tgt_ids.size()) < c.max_len) in.input.tgt_ids.push_back(id);
  return in;
}

void InspectEngine::error(const std::string& m) {
  log.push_back({Message::Error, m, ticket, ++seq});
  if (log.size() > 100) log.erase(log.begin(), log.begin() + 50);
  last_error_ticket = ticket;
}

void InspectEngine::record(const InspectInput& in) {
  auto r = std::make_shared<InspectRun>();
  r->in = in;
  const Model& m = *in.model;
  const Config& c = m.config;
  r->trace = run_forward(m, in.input, in.run);
  r->on_decoder = c.has_decoder();
  r->ids = r->on_decoder ? in.input.tgt_ids : in.input.src_ids;
  const Vocab& in_vocab = r->on_decoder ? c.tgt_vocab : c.src_vocab;
  r->out_vocab = &c.tgt_vocab;
  for (int id : r->ids) r->tokens.push_back(display_token(in_vocab, id));
  r->lens = logit_lens(m, r->trace);
  r->readout = lens_readout_description(c);
  for (size_t p = 0; p < r->lens.points.size(); ++p) {
    r->point_names.push_back(point_label(r->lens.points[p]));
    std::vector<LensCell> row;
    for (Eigen::Index i = 0; i < r->lens.logits[p].rows(); ++i)
      row.push_back(lens_top_k(r->lens.logits[p], static_cast<int>(i), 5));
    r->top.push_back(std::move(row));
  }
  if (c.has_encoder()) r->rollout_enc = attention_rollout(encoder_self_attention(r->trace.encoder));
  if (c.has_decoder()) r->rollout_dec = attention_rollout(decoder_self_attention(r->trace.decoder));
  run = r;
  attribution.reset();
  attribution_error.clear();
  // The default question: why the model predicts its top token at the last position (before
  // </s>: what follows the end of the sequence is no answer).
  if (r->on_decoder && !r->ids.empty() && !r->top.empty()) {
    int pos = static_cast<int>(r->ids.size()) - 1;
    if (pos > 0 && r->ids.back() == c.tgt_vocab.eos()) --pos;
    attribute(pos, r->top.back()[static_cast<size_t>(pos)].ids.front(), -1);
  } else if (!r->on_decoder) {
    attribution_error = "direct logit attribution reads a decoder: this encoder-only model's MLM head is not linear";
  }
}

void InspectEngine::attribute(int position, int token, int other) {
  if (!run) return error("attribution: nothing recorded yet");
  auto a = direct_logit_attribution(*run->in.model, run->trace.decoder, position, token, other);
  if (!a) {
    attribution.reset();
    attribution_error = a.error();
    return error("attribution: " + a.error());
  }
  attribution = std::make_shared<const Attribution>(std::move(*a));
  attribution_error.clear();
}

void InspectEngine::detect(std::shared_ptr<const Model> m, int r, uint64_t seed) {
  auto d = detect_heads(*m, r, seed);
  detection_model = m;
  if (!d) {
    detection.reset();
    detection_error = d.error();
    return error("head detectors: " + d.error());
  }
  detection = std::make_shared<const HeadDetection>(std::move(*d));
  detection_error.clear();
}

void InspectEngine::ablate(const std::vector<AblationTarget>& targets, EditMode mode) {
  ablation.reset();
  ablation_error.clear();
  if (!run) return error("ablation: nothing recorded yet");
  if (targets.empty()) return;
  ablation_run = run;
  auto r = run_ablation(*run->in.model, run->in.input, targets, mode, run->in.run);
  if (!r) {
    ablation_error = r.error();
    return error(r.error());
  }
  ablation = std::make_shared<const AblationResult>(std::move(*r));
}

namespace {

std::vector<TokenProb> top_probs(const Mat& logits, int row) {
  const LensCell cell = lens_top_k(logits, row, 5);
  std::vector<TokenProb> out;
  for (size_t i = 0; i < cell.ids.size(); ++i) out.push_back({cell.ids[i], cell.probs[i]});
  return out;
}

Result<int> gui_token(const Vocab& v, const char* what, const std::string& text) {
  if (const int id = find_token(v, text); id >= 0) return id;
  return token_from_text(v, what, text);
}

}  // namespace

void InspectEngine::run_patching(const PatchRequest& req, std::shared_ptr<PatchProgress> progress) {
  patch_error.clear();
  const auto fail = [&](const std::string& m) {
    patch_error = m;
    error("patching: " + m);
  };
  if (!req.model) return fail("no model");
  const Model& m = *req.model;
  const Config& c = m.config;
  auto view = std::make_shared<PatchView>();
  view->request = req;
  auto clean = prepare_input(m, req.clean);
  if (!clean) return fail("clean: " + clean.error());
  auto corrupt = prepare_input(m, req.corrupt);
  if (!corrupt) return fail("corrupted: " + corrupt.error());
  const Vocab& v = output_vocab(c);
  auto answer = gui_token(v, "answer", req.answer);
  if (!answer) return fail(answer.error());
  auto wrong = gui_token(v, "wrong", req.wrong);
  if (!wrong) return fail(wrong.error());
  view->inputs = {std::move(*clean), std::move(*corrupt), *answer, *wrong};
  auto r = activation_patching(
      m, view->inputs, req.what,
      [&](int done, int total) {
        progress->done = done;
        progress->total = total;
      },
      &progress->cancel);
  if (!r) return fail(r.error());
  if (r->cancelled)  // the total is known once the clean and corrupted runs are done
    return fail(progress->total.load() == 0 ? std::string("cancelled before the first patched run")
                                            : "cancelled after " + std::to_string(progress->done.load()) + " of " +
                                                  std::to_string(progress->total.load()) + " patched runs");
  view->result = std::move(*r);
  const bool heads = per_head(req.what);
  const std::vector<int>& ids = c.has_decoder() ? view->inputs.corrupt.tgt_ids : view->inputs.corrupt.src_ids;
  const Vocab& in_vocab = c.has_decoder() ? c.tgt_vocab : c.src_vocab;
  for (int i = 0; i < view->result.cols(); ++i)
    view->col_labels.push_back(heads ? "h" + std::to_string(i)
                                     : std::to_string(i) + " " + display_token(in_vocab, ids[size_t(i)]));
  for (int l = 0; l < view->result.rows(); ++l) view->row_labels.push_back("L" + std::to_string(l));
  const Trace tc = run_forward(m, view->inputs.clean), tk = run_forward(m, view->inputs.corrupt);
  view->clean_top = top_probs(stack_logits(m, tc), view->result.position);
  view->corrupt_top = top_probs(stack_logits(m, tk), view->result.position);
  patch = view;
}

void InspectEngine::open_patch_cell(int layer, int index) {
  if (!patch) return error("patching: nothing patched yet");
  const Model& m = *patch->request.model;
  auto t = patched_run(m, patch->inputs, patch->request.what, layer, index);
  if (!t) return error("patching: " + t.error());
  auto view = std::make_shared<PatchView>(*patch);
  view->cell_layer = layer;
  view->cell_index = index;
  view->cell_ld = logit_difference(m, *t, view->result.position, view->inputs.answer, view->inputs.wrong);
  view->cell_top = top_probs(stack_logits(m, *t), view->result.position);
  patch = view;
}

namespace {

std::shared_ptr<const InspectSnap> publish_inspection(InspectEngine& e, uint64_t generation) {
  auto s = std::make_shared<InspectSnap>();
  stamp(*s, e, generation);
  s->run = e.run;
  s->attribution = e.attribution;
  s->attribution_error = e.attribution_error;
  s->detection = e.detection;
  s->detection_model = e.detection_model;
  s->detection_error = e.detection_error;
  s->ablation = e.ablation;
  s->ablation_run = e.ablation_run;
  s->ablation_error = e.ablation_error;
  s->patch = e.patch;
  s->patch_error = e.patch_error;
  return s;
}

}  // namespace

InspectWorker::InspectWorker(std::function<void()> wake) : JobThread(publish_inspection, std::move(wake)) {}

}  // namespace sf::gui
