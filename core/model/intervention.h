// intervention.h — edits a forward pass makes to its own activations: ablating heads or whole
// sublayers, and patching in another run's activations (the clean run's, in activation patching).
//
// A run without an intervention (RunOptions::intervention null) calls nothing and pays nothing.
// With one, the encoder and decoder stacks hand it three kinds of activation as they compute them:
//   heads    the concatenated head outputs of an attention sublayer, (n, h·dk), before the output
//            projection W_o: head h is columns [h·dk, (h+1)·dk), so one head can be removed alone;
//   output   a sublayer's output (attention after W_o, or the MLP), (n, d), before the residual add
//            (before the dropout mask and, post-LN, before the LayerNorm);
//   stream   the residual stream entering layer l, (n, d) (layer 0: the embedding's output).
// Sites name a stack (the encoder or the decoder), a layer, the kind, optionally one head and
// optionally one position (the row of the sequence; a cached decoding step's rows are positions
// pos0 …).
//
// Modes:
//   Zero   the activation becomes 0;
//   Mean   each column becomes its mean over the positions of this forward call (the rows of
//          each sequence): the head or sublayer keeps its average output and loses what depends
//          on the token — TransformerLens's mean ablation with the mean taken over this run's
//          positions;
//   Patch  rows become the given matrix's rows (the same site's activation in another run).
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor.h"

namespace sf {

enum class Stack : uint8_t { Encoder, Decoder };
enum class SiteKind : uint8_t { Stream, SelfAttention, CrossAttention, Mlp };
const char* to_string(SiteKind k);

struct Site {
  Stack stack = Stack::Decoder;
  SiteKind kind = SiteKind::SelfAttention;
  int layer = 0;
  int head = -1;      // attention kinds: one head's columns of the head outputs; -1 the whole output
  int position = -1;  // one row (absolute position); -1 every row
  bool operator==(const Site& o) const {
    return stack == o.stack && kind == o.kind && layer == o.layer && head == o.head && position == o.position;
  }
};

enum class EditMode : uint8_t { Zero, Mean, Patch };
const char* to_string(EditMode m);

struct Edit {
  Site site;
  EditMode mode = EditMode::Zero;
  // Patch: the activation of the same site in the source run, all rows of the sequence (n, width):
  // (n, h·dk) for a head, (n, d) otherwise. Rows are positions 0 … n−1.
  Mat value;
};

class Intervention {
 public:
  Intervention() = default;
  explicit Intervention(std::vector<Edit> edits) : edits_(std::move(edits)) {}
  void add(Edit e) { edits_.push_back(std::move(e)); }
  const std::vector<Edit>& edits() const { return edits_; }
  bool empty() const { return edits_.empty(); }

  // The hooks the stacks call. x holds `batch` sequences stacked as rows, their first row at
  // absolute position pos0. Each returns whether it changed x.
  bool heads(Stack s, SiteKind kind, int layer, Mat& concat, int n_heads, int batch, int pos0) const;
  bool output(Stack s, SiteKind kind, int layer, Mat& out, int batch, int pos0) const;
  bool stream(Stack s, int layer, Mat& x, int batch, int pos0) const;

 private:
  std::vector<Edit> edits_;
};

// One site of a stack as it runs, bound to the run's intervention (none: every call is a no-op).
// The stacks pass it down to the attention call (heads) and call output() on the sublayer's result.
struct Hook {
  const Intervention* intervention = nullptr;
  Stack stack = Stack::Decoder;
  SiteKind kind = SiteKind::SelfAttention;
  int layer = 0;
  int batch = 1;
  int pos0 = 0;
  bool heads(Mat& concat, int n_heads) const {
    return intervention && intervention->heads(stack, kind, layer, concat, n_heads, batch, pos0);
  }
  bool output(Mat& out) const { return intervention && intervention->output(stack, kind, layer, out, batch, pos0); }
};

}  // namespace sf
