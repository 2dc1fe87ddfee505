#include "analysis/head_maps.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace sf {

HeadMaps::HeadMaps(StackedAttention st, int thumbnail_side) : st_(std::move(st)), side_(thumbnail_side) {
  const size_t h = static_cast<size_t>(std::max(0, st_.trace.n_heads));
  recorded_ = h > 0 && st_.trace.weights.size() >= h && st_.trace.raw_scores.size() >= h;
  maps_.resize(h);
  thumbs_.resize(h);
}

bool HeadMaps::has_head(int h) const {
  if (h < 0 || h >= n_heads()) return false;
  if (recorded_) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return maps_[static_cast<size_t>(h)] != nullptr;
}

HeadMap HeadMaps::head(int h) const {
  if (h < 0 || h >= n_heads())
    throw std::out_of_range("attention head: expected 0 ≤ head < " + std::to_string(n_heads()) + ", found " +
                            std::to_string(h));
  const size_t hs = static_cast<size_t>(h);
  if (recorded_) return {st_.trace.raw_scores[hs], st_.trace.weights[hs]};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const Owned* o = maps_[hs].get()) return {o->raw, o->weights};
  }
  auto o = std::make_unique<Owned>();
  stacked_head_maps(st_.trace, st_.runs, h, o->raw, o->weights);
  std::lock_guard<std::mutex> lock(mu_);
  if (!maps_[hs]) maps_[hs] = std::move(o);  // unless another thread published it meanwhile
  const Owned& kept = *maps_[hs];
  return {kept.raw, kept.weights};
}

const HeadThumbnail* HeadMaps::thumbnail(int h) const {
  if (h < 0 || h >= n_heads()) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return thumbs_[static_cast<size_t>(h)].get();
}

void HeadMaps::make_thumbnail(int h) const {
  if (h < 0 || h >= n_heads() || thumbnail(h)) return;
  const Mat& mask = st_.trace.masks.at(0);
  std::unique_ptr<const HeadThumbnail> t;
  if (has_head(h)) {
    t = std::make_unique<const HeadThumbnail>(head_thumbnail(head(h).weights, mask, side_));
  } else {
    Mat raw, w;
    stacked_head_maps(st_.trace, st_.runs, h, raw, w);
    t = std::make_unique<const HeadThumbnail>(head_thumbnail(w, mask, side_));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!thumbs_[static_cast<size_t>(h)]) thumbs_[static_cast<size_t>(h)] = std::move(t);
}

bool HeadMaps::thumbnails_done() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& t : thumbs_)
    if (!t) return false;
  return true;
}

}  // namespace sf
