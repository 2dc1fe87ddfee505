#include "model/kv_cache.h"

#include <algorithm>

namespace sf {

void KvCache::reset(int n_layers, int max_rows, int d_kv, int n_seq) {
  const int rows = std::min(max_rows, kKvInitialRows);
  layers.assign(static_cast<size_t>(n_layers), KvCacheLayer{});
  for (auto& l : layers) {
    l.self_k = Mat::Zero(n_seq * rows, d_kv);
    l.self_v = Mat::Zero(n_seq * rows, d_kv);
  }
  ids.clear();
  row_step.clear();
  batch = n_seq;
  capacity = rows;
  max_len = max_rows;
  length = 0;
  step = 0;
}

void KvCache::reserve(int rows) {
  if (rows <= capacity) return;
  const int grown = std::max(rows, std::min(2 * capacity, std::max(max_len, rows)));
  for (auto& l : layers)
    for (Mat* buf : {&l.self_k, &l.self_v}) {
      Mat next = Mat::Zero(static_cast<Eigen::Index>(batch) * grown, buf->cols());
      for (int b = 0; b < batch; ++b) next.middleRows(b * grown, length) = buf->middleRows(b * capacity, length);
      *buf = std::move(next);
    }
  capacity = grown;
}

std::vector<int> KvCache::sequence_ids(int b) const {
  const auto first = ids.begin() + static_cast<std::ptrdiff_t>(b) * length;
  return std::vector<int>(first, first + length);
}

void KvCache::append_ids(const std::vector<int>& new_ids) {
  const size_t m = new_ids.size() / static_cast<size_t>(batch);
  if (batch == 1) {
    ids.insert(ids.end(), new_ids.begin(), new_ids.end());
    return;
  }
  std::vector<int> grown;
  grown.reserve(ids.size() + new_ids.size());
  for (int b = 0; b < batch; ++b) {
    const std::vector<int> old = sequence_ids(b);
    grown.insert(grown.end(), old.begin(), old.end());
    grown.insert(grown.end(), new_ids.begin() + static_cast<std::ptrdiff_t>(b * m),
                 new_ids.begin() + static_cast<std::ptrdiff_t>((b + 1) * m));
  }
  ids = std::move(grown);
}

int64_t KvCache::self_bytes() const {
  if (layers.empty()) return 0;
  return 2LL * static_cast<int64_t>(layers.size()) * length * layers[0].self_k.cols() * 4 * batch;
}

int64_t KvCache::cross_bytes() const {
  int64_t b = 0;
  for (auto& l : layers)
    if (l.cross_ready) b += (l.cross_k.size() + l.cross_v.size()) * 4;
  return b;
}

}  // namespace sf
