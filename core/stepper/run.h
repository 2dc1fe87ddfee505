// run.h — from text to a recorded forward pass: tokenise, check, run. Shared by the command line
// and the explorer so both report bad input the same way.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "base/result.h"
#include "model/trace.h"

namespace sf {

struct PreparedInput {
  Tokenized src;                      // encoder-decoder: the source; decoder-only: the prompt
  Tokenized tgt;                      // optional reference target (teacher forcing)
  std::vector<int> src_ids;           // (n) encoder input (empty for decoder-only)
  std::vector<int> tgt_ids;           // (m) decoder input: <s> [prompt] [target] (empty for encoder-only)
  std::vector<std::string> warnings;  // e.g. "source: 'xyz' at position 2 is not in the vocabulary; read as <unk>"
};

// Tokenises and validates: empty source, length over max_len (counting <s>) are errors; unknown
// words become <unk> with a warning. Encoder-only models take the source alone (a target is an
// error).
Result<PreparedInput> prepare_input(const Model& m, const std::string& src_text, const std::string& tgt_text = "");

// The decoder prefix: <s> for encoder-decoder models, <s> + prompt for decoder-only ones, empty for
// encoder-only ones.
std::vector<int> decoder_prefix(const Model& m, const PreparedInput& in);

// The id of the token an encoder-only model predicts at: "[MASK]" (BERT) or "<mask>" (RoBERTa
// style); -1 when the vocabulary has neither.
int mask_token(const Vocab& v);

// Teacher-forced forward pass over the prepared input, recording everything (`kind`: or less,
// model/recording.h).
Trace run_forward(const Model& m, const PreparedInput& in, const RunOptions& opt = {},
                  Recording kind = Recording::Full);

}  // namespace sf
