// trace_export.h — a recording (model/trace.h) as named tensors, for `stepformer trace`, the
// explorer's export and the golden tests. Names are listed in docs/trace-names.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/trace.h"

namespace sf {

struct Model;

// Which names an export writes: every one when empty, else those it accepts.
using NameFilter = std::function<bool(const std::string&)>;

// The trace as named tensors (batch element 0), with the names listed in docs/trace-names.md, e.g.
// "encoder.layers.0.self_attn.weights" (h, n, n). Used by `stepformer trace`, export and tests.
// An attention recorded without its maps (a compact recording) writes Q, K, V, the mask and the
// outputs. A tensor whose name `keep` refuses is never made.
void append_trace_tensors(const Model& m, const Trace& t, TensorFile& out, const std::string& prefix = "",
                          const NameFilter& keep = {});
void append_encoder_tensors(const Model& m, const EncoderTrace& t, TensorFile& out, const std::string& prefix,
                            const NameFilter& keep = {});
void append_decoder_tensors(const Model& m, const DecoderTrace& t, TensorFile& out, const std::string& prefix,
                            const NameFilter& keep = {});

// Per-head attention maps of one attention trace for batch element b, stacked (h, n_q, n_k).
Tensor stack_heads(const std::vector<Mat>& per_head, int n_heads, int b);

}  // namespace sf
