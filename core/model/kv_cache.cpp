#include "model/kv_cache.h"

namespace sf {

void KvCache::reset(int n_layers, int max_len, int d, int n_seq) {
  layers.assign(static_cast<size_t>(n_layers), KvCacheLayer{});
  for (auto& l : layers) {
    l.self_k = Mat::Zero(n_seq * max_len, d);
    l.self_v = Mat::Zero(n_seq * max_len, d);
  }
  ids.clear();
  row_step.clear();
  batch = n_seq;
  capacity = max_len;
  length = 0;
  step = 0;
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
