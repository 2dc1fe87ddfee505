#include "model/kv_cache.h"

namespace sf {

void KvCache::reset(int n_layers, int max_len, int d) {
  layers.assign(static_cast<size_t>(n_layers), KvCacheLayer{});
  for (auto& l : layers) {
    l.self_k = Mat::Zero(max_len, d);
    l.self_v = Mat::Zero(max_len, d);
  }
  ids.clear();
  row_step.clear();
  length = 0;
  step = 0;
}

int64_t KvCache::self_bytes() const {
  if (layers.empty()) return 0;
  return 2LL * static_cast<int64_t>(layers.size()) * length * layers[0].self_k.cols() * 4;
}

int64_t KvCache::cross_bytes() const {
  int64_t b = 0;
  for (auto& l : layers)
    if (l.cross_ready) b += (l.cross_k.size() + l.cross_v.size()) * 4;
  return b;
}

}  // namespace sf
