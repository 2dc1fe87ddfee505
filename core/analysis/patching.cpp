#include "analysis/patching.h"

#include <cmath>
#include <limits>

#include "model/decoder.h"
#include "model/encoder.h"

namespace sf {

const char* to_string(PatchWhat w) {
  switch (w) {
    case PatchWhat::Resid:
      return "resid";
    case PatchWhat::Attn:
      return "attn";
    case PatchWhat::Cross:
      return "cross";
    case PatchWhat::Mlp:
      return "mlp";
    case PatchWhat::Heads:
      return "heads";
    case PatchWhat::CrossHeads:
      return "cross-heads";
  }
  return "?";
}

Result<PatchWhat> parse_patch_what(const std::string& s) {
  for (PatchWhat w :
       {PatchWhat::Resid, PatchWhat::Attn, PatchWhat::Cross, PatchWhat::Mlp, PatchWhat::Heads, PatchWhat::CrossHeads})
    if (s == to_string(w)) return w;
  return Error{"what: expected resid, attn, cross, mlp, heads or cross-heads, found '" + s + "'"};
}

Result<int> token_from_text(const Vocab& v, const std::string& what, const std::string& text) {
  if (const int id = v.id(text); id >= 0) return id;
  const Tokenized t = v.tokenize(text);
  if (t.ids.size() == 1 && t.unknown.empty()) return t.ids[0];
  if (t.ids.size() > 1)
    return Error{what + ": expected one token, found '" + text + "', which the tokenizer reads as " +
                 std::to_string(t.ids.size()) + " tokens"};
  return Error{what + ": expected a token of the vocabulary, found '" + text + "', which is not in it"};
}

const Vocab& output_vocab(const Config& c) { return c.has_decoder() ? c.tgt_vocab : c.src_vocab; }

bool per_head(PatchWhat w) { return w == PatchWhat::Heads || w == PatchWhat::CrossHeads; }

namespace {

const std::vector<int>& stack_ids(const Model& m, const PreparedInput& in) {
  return m.config.has_decoder() ? in.tgt_ids : in.src_ids;
}
// The ids whose length must agree: what differs between the prompts.
const std::vector<int>& prompt_ids(const Model& m, const PreparedInput& in) {
  return m.config.has_encoder() ? in.src_ids : in.tgt_ids;
}

int layers_of(const Model& m) {
  return predicting_stack(m.config) == Stack::Encoder ? m.config.n_encoder_layers : m.config.n_decoder_layers;
}
int heads_of(const Model& m) {
  return predicting_stack(m.config) == Stack::Encoder ? m.config.encoder_heads() : m.config.n_heads;
}

// The predicting stack's logits (n, V) of an unrecorded run.
Mat forward_logits(const Model& m, const PreparedInput& in, const RunOptions& opt) {
  Mat memory;
  EncoderContext enc;
  if (m.config.has_encoder()) {
    memory = encode(m, in.src_ids, 1, nullptr, opt);
    if (!m.config.has_decoder()) return mlm_logits(m, memory, nullptr);
    enc = {&memory, &in.src_ids};
  }
  return decode(m, in.tgt_ids, 1, enc, nullptr, nullptr, opt);
}

SiteKind site_kind(PatchWhat w) {
  switch (w) {
    case PatchWhat::Resid:
      return SiteKind::Stream;
    case PatchWhat::Attn:
    case PatchWhat::Heads:
      return SiteKind::SelfAttention;
    case PatchWhat::Cross:
    case PatchWhat::CrossHeads:
      return SiteKind::CrossAttention;
    case PatchWhat::Mlp:
      return SiteKind::Mlp;
  }
  return SiteKind::Stream;
}

// The clean run's activation at a layer's site (n, width), from its full recording.
const Mat& clean_value(const Model& m, const Trace& t, PatchWhat what, int layer) {
  const size_t l = static_cast<size_t>(layer);
  if (predicting_stack(m.config) == Stack::Encoder) {
    const EncoderLayerTrace& L = t.encoder.layers[l];
    switch (what) {
      case PatchWhat::Resid:
        return L.self_block.input;
      case PatchWhat::Heads:
        return L.self_attn.concat;
      case PatchWhat::Mlp:
        return L.ffn.out;
      default:
        return L.self_attn.out;
    }
  }
  const DecoderLayerTrace& L = t.decoder.layers[l];
  switch (what) {
    case PatchWhat::Resid:
      return L.self_block.input;
    case PatchWhat::Attn:
      return L.self_attn.out;
    case PatchWhat::Cross:
      return L.cross_attn.out;
    case PatchWhat::Mlp:
      return L.ffn.out;
    case PatchWhat::Heads:
      return L.self_attn.concat;
    case PatchWhat::CrossHeads:
      return L.cross_attn.concat;
  }
  return L.self_attn.out;
}

}  // namespace

Result<bool> check_patch(const Model& m, const PatchInputs& p, PatchWhat what) {
  const Config& c = m.config;
  if (!c.has_decoder() && !c.mlm_head)
    return Error{"patch: expected a model that predicts tokens, found an encoder without a masked-LM head"};
  const std::vector<int>& a = prompt_ids(m, p.clean);
  const std::vector<int>& b = prompt_ids(m, p.corrupt);
  if (a.size() != b.size())
    return Error{"patch: expected the clean and corrupted prompts to have the same number of tokens, found " +
                 std::to_string(a.size()) + " and " + std::to_string(b.size())};
  if (stack_ids(m, p.clean) != stack_ids(m, p.corrupt) && c.has_encoder() && c.has_decoder())
    return Error{"patch: expected the same decoder input for both runs, found different ones"};
  const int v = output_vocab(c).size();
  for (const auto& [name, id] : {std::pair<const char*, int>{"answer", p.answer}, {"wrong", p.wrong}})
    if (id < 0 || id >= v)
      return Error{std::string("patch: expected the ") + name + " token id in 0.." + std::to_string(v - 1) +
                   ", found " + std::to_string(id)};
  if (p.answer == p.wrong)
    return Error{"patch: expected different answer and wrong tokens, found " + output_vocab(c).token(p.answer) +
                 " for both"};
  if ((what == PatchWhat::Cross || what == PatchWhat::CrossHeads) && !c.has_cross_attention())
    return Error{std::string("patch: expected resid, attn, mlp or heads for a model without cross-attention, found ") +
                 to_string(what)};
  if (what == PatchWhat::Mlp && c.d_ff <= 0)
    return Error{"patch: expected a model with MLPs for --what mlp, found a configuration without them"};
  return true;
}

std::shared_ptr<Intervention> patch_intervention(const Model& m, const Trace& clean, PatchWhat what, int layer,
                                                 int index) {
  Edit e;
  e.site.stack = predicting_stack(m.config);
  e.site.kind = site_kind(what);
  e.site.layer = layer;
  if (per_head(what))
    e.site.head = index;
  else
    e.site.position = index;
  e.mode = EditMode::Patch;
  e.value = clean_value(m, clean, what, layer);
  auto iv = std::make_shared<Intervention>();
  iv->add(std::move(e));
  return iv;
}

double logit_difference(const Model& m, const Trace& t, int position, int answer, int wrong) {
  const Mat& l = stack_logits(m, t);
  return static_cast<double>(l(position, answer)) - static_cast<double>(l(position, wrong));
}

Result<PatchResult> activation_patching(const Model& m, const PatchInputs& p, PatchWhat what,
                                        const std::function<void(int, int)>& progress,
                                        const std::atomic<bool>* cancel) {
  if (auto ok = check_patch(m, p, what); !ok) return Error{ok.error()};
  PatchResult r;
  r.what = what;
  r.position = prediction_position(m, p.corrupt);
  const Trace clean = run_forward(m, p.clean);
  const Trace corrupt = run_forward(m, p.corrupt);
  r.clean_ld = logit_difference(m, clean, r.position, p.answer, p.wrong);
  r.corrupt_ld = logit_difference(m, corrupt, r.position, p.answer, p.wrong);
  const double span = r.clean_ld - r.corrupt_ld;
  if (span == 0.0)
    return Error{"patch: expected the clean and corrupted runs to differ in logit(answer) − logit(wrong), found " +
                 std::to_string(r.clean_ld) + " for both"};
  const int layers = layers_of(m);
  const int cols = per_head(what) ? heads_of(m) : static_cast<int>(stack_ids(m, p.corrupt).size());
  r.recovered.assign(static_cast<size_t>(layers),
                     std::vector<double>(static_cast<size_t>(cols), std::numeric_limits<double>::quiet_NaN()));
  const int total = layers * cols;
  int done = 0;
  for (int l = 0; l < layers; ++l) {
    for (int i = 0; i < cols; ++i) {
      if (cancel && cancel->load()) {
        r.cancelled = true;
        return r;
      }
      RunOptions opt;
      opt.intervention = patch_intervention(m, clean, what, l, i);
      const Mat logits = forward_logits(m, p.corrupt, opt);  // the patched runs need no recording
      const double ld = static_cast<double>(logits(r.position, p.answer)) - logits(r.position, p.wrong);
      r.recovered[static_cast<size_t>(l)][static_cast<size_t>(i)] = (ld - r.corrupt_ld) / span;
      ++done;
      if (progress) progress(done, total);
    }
  }
  return r;
}

Result<Trace> patched_run(const Model& m, const PatchInputs& p, PatchWhat what, int layer, int index) {
  if (auto ok = check_patch(m, p, what); !ok) return Error{ok.error()};
  const int layers = layers_of(m);
  const int cols = per_head(what) ? heads_of(m) : static_cast<int>(stack_ids(m, p.corrupt).size());
  if (layer < 0 || layer >= layers)
    return Error{"patch: expected a layer in 0.." + std::to_string(layers - 1) + ", found " + std::to_string(layer)};
  if (index < 0 || index >= cols)
    return Error{std::string("patch: expected a ") + (per_head(what) ? "head" : "position") + " in 0.." +
                 std::to_string(cols - 1) + ", found " + std::to_string(index)};
  const Trace clean = run_forward(m, p.clean);
  RunOptions opt;
  opt.intervention = patch_intervention(m, clean, what, layer, index);
  return run_forward(m, p.corrupt, opt);
}

}  // namespace sf
