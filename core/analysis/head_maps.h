// head_maps.h — an attention sublayer's view (stepper/attention_view.h) whose heads' maps and
// thumbnails are computed when first asked for and then kept: a long input's view holds Q, K and
// the mask, and only the maps of the heads a reader draws (a 1,024-token GPT-2 run's 144 maps
// would be 1.2 GB of raw scores and weights).
//
// Threads: safe from any thread. A head's map is computed outside the lock and published under it;
// a map once returned lives in an allocation of its own that is never written again, so a reader
// of one head never sees another head being written.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "analysis/head_thumbnail.h"
#include "stepper/attention_view.h"

namespace sf {

// One head's map of a view, (n_q, n_k) each: raw scores Q_h K_hᵀ (NaN where a row did not see the
// key) and weights. References into the HeadMaps (or the buffers) that returned them.
struct HeadMap {
  const Mat& raw;
  const Mat& weights;
};

class HeadMaps {
 public:
  // A view built without its maps (decoder_attention(..., maps = false)), or one whose recording
  // holds them (the encoder's full recording): those are returned as they are.
  explicit HeadMaps(StackedAttention st, int thumbnail_side);
  HeadMaps(const HeadMaps&) = delete;
  HeadMaps& operator=(const HeadMaps&) = delete;

  // Q, K, V, the outputs, the masks, the ids and the runs.
  const StackedAttention& stacked() const { return st_; }
  const AttentionTrace& trace() const { return st_.trace; }
  int n_heads() const { return st_.trace.n_heads; }

  // Head h's map (0 ≤ h < n_heads; otherwise std::out_of_range), computed on first use by
  // stacked_head_maps and kept as long as this object.
  HeadMap head(int h) const;
  // Whether head h's map is held (computed already, or recorded).
  bool has_head(int h) const;

  // Head h's thumbnail (head_thumbnail of at most `thumbnail_side` cells a side): null until
  // make_thumbnail(h) has run. Never waits for a computation.
  const HeadThumbnail* thumbnail(int h) const;
  // Computes head h's thumbnail once: from its kept map, or from one computed for it and dropped
  // (a model view reads every head once and must not keep 144 maps).
  void make_thumbnail(int h) const;
  // Whether every head has its thumbnail.
  bool thumbnails_done() const;

 private:
  struct Owned {
    Mat raw, weights;
  };
  StackedAttention st_;
  int side_;
  bool recorded_ = false;  // st_.trace holds every head's raw scores and weights
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<const Owned>> maps_;            // [head]; null until computed
  mutable std::vector<std::unique_ptr<const HeadThumbnail>> thumbs_;  // [head]; null until made
};

}  // namespace sf
