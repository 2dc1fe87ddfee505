#include "analysis/rotary_view.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/rotary.h"

namespace sf {

namespace {

std::string str(long v) { return std::to_string(v); }

// One row (1, d_head) turned as if it stood at position p.
Mat rotated_at(const Mat& row, const RotaryLayout& l, int p) {
  Mat x = row;
  Rotation rot;
  rot.inv_freq = &l.theta;
  rot.rot_dim = l.rot_dim;
  rot.d_head = l.d_head;
  rot.pos0 = p;
  rot.rows_per_seq = 1;
  apply_rotary(x, rot);
  return x;
}

}  // namespace

RotaryLayout rotary_layout(const Config& c) {
  RotaryLayout l;
  l.d_head = c.d_k();
  l.rot_dim = c.rotary_dim();
  l.theta = rope_inv_freq(c);
  return l;
}

void unrotate(Mat& x, const RotaryLayout& l, int pos0) {
  const RowVec back = -l.theta;  // R(−p·θ) = R(p·θ)ᵀ
  Rotation rot;
  rot.inv_freq = &back;
  rot.rot_dim = l.rot_dim;
  rot.d_head = l.d_head;
  rot.pos0 = pos0;
  rot.rows_per_seq = static_cast<int>(std::max<Eigen::Index>(1, x.rows()));
  apply_rotary(x, rot);
}

Result<RotaryView> rotary_view(const Config& c, const Mat& q, const Mat& k, int head, int pair, int fix_q, int fix_k,
                               const std::vector<int>& offsets, const std::vector<int>& starts) {
  if (c.positional != Positional::Rotary)
    return Error{std::string("expected a rotary model, found ") + to_string(c.positional) + " positions"};
  RotaryView v;
  v.layout = rotary_layout(c);
  const RotaryLayout& l = v.layout;
  const int h = c.n_heads, hkv = c.kv_heads(), dk = l.d_head;
  if (q.cols() != static_cast<Eigen::Index>(h) * dk)
    return Error{"expected queries of " + str(h) + " heads × " + str(dk) + " = " + str(h * dk) + " columns, found " +
                 str(q.cols())};
  if (k.cols() != static_cast<Eigen::Index>(hkv) * dk)
    return Error{"expected keys of " + str(hkv) + " heads × " + str(dk) + " = " + str(hkv * dk) + " columns, found " +
                 str(k.cols())};
  if (q.rows() < 1 || k.rows() < 1)
    return Error{"expected at least one query and one key, found " + str(q.rows()) + " and " + str(k.rows())};
  if (head < 0 || head >= h) return Error{"expected a head in [0, " + str(h) + "), found " + str(head)};
  if (pair < 0 || pair >= l.pairs())
    return Error{"expected a frequency in [0, " + str(l.pairs()) + "), found " + str(pair)};
  if (fix_q < 0 || fix_q >= q.rows())
    return Error{"expected a query row in [0, " + str(q.rows()) + "), found " + str(fix_q)};
  if (fix_k < 0 || fix_k >= k.rows())
    return Error{"expected a key row in [0, " + str(k.rows()) + "), found " + str(fix_k)};
  v.head = head;
  v.kv_head = head / (h / hkv);
  v.pair = pair;
  v.dim_a = pair;
  v.dim_b = pair + l.pairs();
  v.theta = l.theta(pair);
  v.wavelength = static_cast<float>(2.0 * 3.14159265358979323846 / static_cast<double>(v.theta));
  v.fix_q = fix_q;
  v.fix_k = fix_k;

  const Mat qh = q.middleCols(static_cast<Eigen::Index>(head) * dk, dk);  // (n_q, dk) rotated
  const Mat kh = k.middleCols(static_cast<Eigen::Index>(v.kv_head) * dk, dk);
  Mat q0 = qh, k0 = kh;  // turned back: the projections before the rotation
  unrotate(q0, l);
  unrotate(k0, l);
  const auto cols2 = [&](const Mat& m) {
    Mat out(m.rows(), 2);
    out.col(0) = m.col(v.dim_a);
    out.col(1) = m.col(v.dim_b);
    return out;
  };
  v.q_pair = cols2(qh);
  v.k_pair = cols2(kh);
  v.q0_pair = cols2(q0);
  v.k0_pair = cols2(k0);
  v.q_fan.resize(qh.rows(), 2);
  for (Eigen::Index p = 0; p < qh.rows(); ++p) {
    const Mat turned = rotated_at(q0.row(fix_q), l, static_cast<int>(p));  // (1, dk)
    v.q_fan(p, 0) = turned(0, v.dim_a);
    v.q_fan(p, 1) = turned(0, v.dim_b);
  }
  v.scores = qh * kh.transpose();
  v.pair_scores = v.q_pair * v.k_pair.transpose();

  const Mat qt = q0.row(fix_q), kt = k0.row(fix_k);  // q̃, k̃ (1, dk)
  v.unrotated_score = (qt * kt.transpose())(0, 0);
  for (int off : offsets) {
    RelativeRow row;
    row.offset = off;
    float lo = 0, hi = 0;
    for (int n : starts) {
      const int m = n + off;
      if (m < 0 || n < 0) continue;
      const float s = (rotated_at(qt, l, m) * rotated_at(kt, l, n).transpose())(0, 0);
      if (row.at.empty()) lo = hi = s;
      lo = std::min(lo, s);
      hi = std::max(hi, s);
      row.at.push_back({m, n, s});
    }
    row.spread = hi - lo;
    v.max_spread = std::max(v.max_spread, row.spread);
    v.relative.push_back(std::move(row));
  }
  return v;
}

}  // namespace sf
