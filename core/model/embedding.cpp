#include "model/embedding.h"

#include <algorithm>
#include <cmath>

#include "base/phase_timer.h"

namespace sf {

std::vector<int> segment_ids(const std::vector<int>& ids, int sep, int pad, int n_types) {
  std::vector<int> out(ids.size(), 0);
  int seps = 0;  // [SEP]s strictly before position t
  for (size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] != pad) out[t] = std::min(seps, n_types - 1);
    if (ids[t] == sep) ++seps;
  }
  return out;
}

void embed(const EmbeddingParams& p, const std::vector<int>& ids, int batch, int pos0, bool use_positional, Mat& x,
           EmbeddingTrace* tr) {
  const ScopedPhase phase(Phase::Embedding);
  const int rows = static_cast<int>(ids.size());
  const int n = batch ? rows / batch : 0;
  const int d = static_cast<int>(p.table_half ? p.table_half->cols : p.table->cols());
  const bool whole = tr && tr->kind != Recording::Training;  // E[ids]·s and p_t kept apart for views
  use_positional = use_positional && p.positions;            // rotary models add no positions here
  x.resize(rows, d);
  if (p.table_half) {
    for (int r = 0; r < rows; ++r) {
      p.table_half->widen_rows(ids[static_cast<size_t>(r)], 1, x.row(r).data());
      x.row(r) *= p.scale;
    }
  } else {
    for (int r = 0; r < rows; ++r) x.row(r) = p.table->row(ids[static_cast<size_t>(r)]) * p.scale;
  }
  if (tr) {
    tr->ids = ids;
    tr->positions.resize(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) tr->positions[static_cast<size_t>(r)] = pos0 + r % n;
    tr->scale = p.scale;
  }
  if (whole) {
    tr->scaled = x;
    tr->pe = Mat::Zero(rows, d);  // (zeros when positional encoding is switched off)
    if (use_positional)
      for (int r = 0; r < rows; ++r) tr->pe.row(r) = p.positions->row(pos0 + r % n);
  }
  // p_t added in a pass of its own after the products, so that each sum is E[id]·s rounded, plus
  // p_t, rounded: the same bits whichever recording (a fused multiply-add would round once).
  if (use_positional)
    for (int r = 0; r < rows; ++r) x.row(r) += p.positions->row(pos0 + r % n);
  if (p.token_types) {
    const int n_types = static_cast<int>(p.token_types->rows());
    std::vector<int> types;  // (B·n)
    for (int b = 0; b < batch; ++b) {
      const std::vector<int> one(ids.begin() + b * n, ids.begin() + (b + 1) * n);
      const std::vector<int> seg = segment_ids(one, p.sep, p.pad, n_types);
      types.insert(types.end(), seg.begin(), seg.end());
    }
    Mat t(rows, d);  // (B·n, d)
    for (int r = 0; r < rows; ++r) t.row(r) = p.token_types->row(types[static_cast<size_t>(r)]);
    x += t;
    if (tr) {
      tr->token_types = std::move(types);
      tr->types = std::move(t);
    }
  }
  if (p.norm) {
    Mat y;
    layer_norm_forward(x, *p.norm, y, tr ? &tr->norm : nullptr);
    if (tr) tr->pre_norm = std::move(x);
    x = std::move(y);
  }
  if (tr && tr->dropout_mask.rows() == x.rows() && tr->dropout_mask.cols() == x.cols())
    x.array() *= tr->dropout_mask.array();
  if (whole) tr->sum = x;
}

void embed_backward(const EmbeddingTrace& tr, const Mat& dx, Mat& dtable, Mat* dpos) {
  const ScopedPhase phase(Phase::Embedding);
  const bool drop = tr.dropout_mask.rows() == dx.rows() && tr.dropout_mask.cols() == dx.cols();
  RowVec d(dx.cols());  // (d) row r's grad, through the dropout mask if any
  for (Eigen::Index r = 0; r < dx.rows(); ++r) {
    if (drop)
      d = dx.row(r).cwiseProduct(tr.dropout_mask.row(r));
    else
      d = dx.row(r);
    dtable.row(tr.ids[static_cast<size_t>(r)]) += tr.scale * d;
    if (dpos) dpos->row(tr.positions[static_cast<size_t>(r)]) += d;
  }
}

}  // namespace sf
