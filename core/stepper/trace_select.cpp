#include "stepper/trace_select.h"

#include <cstddef>
#include <utility>

#include "io/trace_export.h"
#include "model/linear.h"

namespace sf {

Result<TraceSelection> parse_trace_selection(const std::string& pattern) {
  if (pattern.empty()) return Error{"--only: expected a regular expression over the trace's names, found ''"};
  TraceSelection s;
  s.pattern = pattern;
  try {
    s.re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{"--only: expected a regular expression over the trace's names, found '" + pattern + "' (" + e.what() +
                 ")"};
  }
  return s;
}

std::vector<std::string> trace_names(const Model& m, const PreparedInput& in, const RunOptions& opt) {
  PreparedInput first = in;
  if (first.src_ids.size() > 1) first.src_ids.resize(1);
  if (first.tgt_ids.size() > 1) first.tgt_ids.resize(1);
  const Trace t = run_forward(m, first, opt);
  std::vector<std::string> names;
  TensorFile none;
  append_trace_tensors(m, t, none, "", [&](const std::string& name) {
    names.push_back(name);
    return false;  // the names only: no tensor is made
  });
  return names;
}

Result<std::vector<std::string>> selected_names(const TraceSelection& sel, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (sel(n)) out.push_back(n);
  if (!out.empty()) return out;
  std::string some;
  for (size_t i = 0; i < names.size() && i < 3; ++i) some += (i ? ", " : "") + names[i];
  return Error{"--only: expected a regular expression that finds at least one of this run's " +
               std::to_string(names.size()) + " trace names (e.g. " + some + "; docs/trace-names.md), found '" +
               sel.pattern + "', which finds none"};
}

namespace {

template <size_t N>
bool any_of(const TraceSelection& sel, const std::string& p, const char* const (&suffixes)[N]) {
  for (const char* s : suffixes)
    if (sel(p + s)) return true;
  return false;
}

// An attention's raw scores and weights, by the same attend() on the same Q, K, V and masks
// (Session::whole_trace does the same for a kept step).
void fill_maps(AttentionTrace& a) {
  if (a.masks.empty() || !a.weights.empty()) return;
  AttentionTrace again;
  Mat concat;
  attend(a.q, a.k, a.v, Heads(a.n_heads, a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads), a.masks, concat, &again);
  a.raw_scores = std::move(again.raw_scores);
  a.weights = std::move(again.weights);
}

// A feed-forward's hidden activations, by the same feed_forward() on what it read.
void fill_ffn(const FeedForwardWeights& w, Activation act, const ResidualTrace& block, FeedForwardTrace& t) {
  if (block.sublayer_in.size() == 0) return;
  FeedForwardTrace full;
  Mat out;
  feed_forward(w, act, block.sublayer_in, out, &full);
  t.hidden_pre = std::move(full.hidden_pre);
  t.hidden = std::move(full.hidden);
  t.gate_pre = std::move(full.gate_pre);
  t.gate = std::move(full.gate);
  t.up = std::move(full.up);
}

const char* const kMaps[] = {".raw_scores", ".scores", ".weights"};
const char* const kHidden[] = {".hidden_pre", ".hidden", ".gate_pre", ".gate", ".up"};

}  // namespace

Trace run_selected(const Model& m, const PreparedInput& in, const RunOptions& opt, const TraceSelection& sel) {
  const Config& c = m.config;
  Trace t = run_forward(m, in, opt, Recording::Compact);
  for (size_t i = 0; i < t.encoder.layers.size(); ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    EncoderLayerTrace& l = t.encoder.layers[i];
    if (any_of(sel, p + ".self_attn", kMaps)) fill_maps(l.self_attn);
    if (any_of(sel, p + ".ffn", kHidden)) fill_ffn(m.weights.encoder[i].ffn, c.activation, l.ffn_block, l.ffn);
  }
  for (size_t i = 0; i < t.decoder.layers.size(); ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    DecoderLayerTrace& l = t.decoder.layers[i];
    if (any_of(sel, p + ".self_attn", kMaps)) fill_maps(l.self_attn);
    if (any_of(sel, p + ".cross_attn", kMaps)) fill_maps(l.cross_attn);
    if (c.has_ffn() && any_of(sel, p + ".ffn", kHidden))
      fill_ffn(m.weights.decoder[i].ffn, c.activation, l.ffn_block, l.ffn);
  }
  // Every row's logits and distributions by the decoder's generator (the compact run kept the
  // last row's); an encoder-only model's masked-LM head records its own.
  if (c.has_decoder() && t.decoder.output.size() > 0 && (sel("logits") || sel("log_probs") || sel("probs"))) {
    Mat logits;
    generator_forward(m.weights, c, t.decoder.output, logits);
    record_logits(logits, t.decoder.logits, t.decoder.log_probs, t.decoder.probs);
  }
  return t;
}

}  // namespace sf
