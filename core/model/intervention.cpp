#include "model/intervention.h"

namespace sf {

const char* to_string(SiteKind k) {
  switch (k) {
    case SiteKind::Stream:
      return "stream";
    case SiteKind::SelfAttention:
      return "attn";
    case SiteKind::CrossAttention:
      return "cross";
    case SiteKind::Mlp:
      return "mlp";
  }
  return "?";
}

const char* to_string(EditMode m) {
  switch (m) {
    case EditMode::Zero:
      return "zero";
    case EditMode::Mean:
      return "mean";
    case EditMode::Patch:
      return "patch";
  }
  return "?";
}

namespace {

// Applies one edit to columns [c0, c0 + w) of x (batch sequences of x.rows() / batch rows, the
// first at absolute position pos0).
void apply(const Edit& e, Mat& x, Eigen::Index c0, Eigen::Index w, int batch, int pos0) {
  const Eigen::Index n = x.rows() / batch;
  for (int b = 0; b < batch; ++b) {
    auto rows = x.block(b * n, c0, n, w);  // (n, w) this sequence's columns
    Eigen::Index r0 = 0, r1 = n;           // the rows the edit touches
    if (e.site.position >= 0) {
      r0 = e.site.position - pos0;
      if (r0 < 0 || r0 >= n) continue;
      r1 = r0 + 1;
    }
    switch (e.mode) {
      case EditMode::Zero:
        rows.middleRows(r0, r1 - r0).setZero();
        break;
      case EditMode::Mean: {
        const RowVec mean = rows.colwise().mean();  // (w) over every row of this call
        for (Eigen::Index r = r0; r < r1; ++r) rows.row(r) = mean;
        break;
      }
      case EditMode::Patch:
        for (Eigen::Index r = r0; r < r1; ++r) {
          const Eigen::Index src = pos0 + r;  // the value's rows are absolute positions
          if (src < e.value.rows() && c0 + w <= e.value.cols()) rows.row(r) = e.value.block(src, c0, 1, w);
        }
        break;
    }
  }
}

}  // namespace

bool Intervention::heads(Stack s, SiteKind kind, int layer, Mat& concat, int n_heads, int batch, int pos0) const {
  bool changed = false;
  const Eigen::Index dk = concat.cols() / n_heads;
  for (const Edit& e : edits_) {
    if (e.site.stack != s || e.site.kind != kind || e.site.layer != layer || e.site.head < 0) continue;
    if (e.site.head >= n_heads) continue;
    apply(e, concat, e.site.head * dk, dk, batch, pos0);
    changed = true;
  }
  return changed;
}

bool Intervention::output(Stack s, SiteKind kind, int layer, Mat& out, int batch, int pos0) const {
  bool changed = false;
  for (const Edit& e : edits_) {
    if (e.site.stack != s || e.site.kind != kind || e.site.layer != layer || e.site.head >= 0) continue;
    apply(e, out, 0, out.cols(), batch, pos0);
    changed = true;
  }
  return changed;
}

bool Intervention::stream(Stack s, int layer, Mat& x, int batch, int pos0) const {
  return output(s, SiteKind::Stream, layer, x, batch, pos0);
}

}  // namespace sf
