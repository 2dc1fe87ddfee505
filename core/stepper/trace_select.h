// trace_select.h — `stepformer trace --only REGEX`: a run that records what a selection of the
// trace's names (docs/trace-names.md) needs, for an export of those names only. The run keeps a
// compact recording (model/recording.h: Q, K and the masks, not the heads' maps; the feed-forward's
// output, not its hidden activations; the last row's logits) and computes the selected maps,
// activations and distributions from it with the forward's own code (the numbers a full recording
// holds), so a long input's trace holds about what it writes: a 1,024-token GPT-2 run's maps alone
// are 2 × 144 × 1024² floats (1.2 GB).
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "base/result.h"
#include "stepper/run.h"

namespace sf {

// The names a pattern selects: an ECMAScript regular expression searched in each name, as grep
// does ("self_attn.weights" selects every layer's, "^logits$" the logits alone).
struct TraceSelection {
  std::string pattern;
  std::regex re;
  bool operator()(const std::string& name) const { return std::regex_search(name, re); }
};

// Error for a pattern that is not a regular expression, or is empty.
Result<TraceSelection> parse_trace_selection(const std::string& pattern);

// Every name a run of `m` on `in` writes (append_trace_tensors), in file order: those of a full
// recording of the input's first token (the names depend on the model and the options, not on
// the length).
std::vector<std::string> trace_names(const Model& m, const PreparedInput& in, const RunOptions& opt = {});

// The names of `names` that `sel` selects; error when none, naming a few of those there are.
Result<std::vector<std::string>> selected_names(const TraceSelection& sel, const std::vector<std::string>& names);

// The run on `in`, compact, with what `sel` selects computed again as a full recording holds it:
// the maps of each attention one of whose .raw_scores/.scores/.weights is selected, the hidden
// activations of each feed-forward one of whose hidden ones is selected, every row's logits and
// distributions when one of logits, log_probs or probs is. append_trace_tensors(..., sel) then
// writes exactly the selected names, equal to those of run_forward's full recording.
Trace run_selected(const Model& m, const PreparedInput& in, const RunOptions& opt, const TraceSelection& sel);

}  // namespace sf
