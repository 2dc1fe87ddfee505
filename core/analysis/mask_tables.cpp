#include "analysis/mask_tables.h"

#include <cmath>
#include <utility>

#include "model/mask.h"

namespace sf {

MaskTables mask_tables(const AttentionTrace& a, const Mat& raw, const std::vector<int>& key_ids, int pad_key,
                       bool causal, int window) {
  const Mat& combined = a.masks[0];
  MaskParts parts = mask_parts(static_cast<int>(combined.rows()), key_ids, pad_key, causal, 0, window);
  MaskTables t;
  t.padding = std::move(parts.padding);
  if (window > 0) {
    t.causal = parts.future + parts.outside_window;
    t.outside_window = std::move(parts.outside_window);
  } else {
    t.causal = std::move(parts.future);
  }
  t.scores = raw * a.scale;  // AttentionTrace::scores
  t.masked = t.scores + combined;
  for (Eigen::Index i = 0; i < t.masked.rows(); ++i)
    for (Eigen::Index j = 0; j < t.masked.cols(); ++j)
      if (std::isinf(combined(i, j))) t.masked(i, j) = combined(i, j);
  return t;
}

}  // namespace sf
