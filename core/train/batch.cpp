#include "train/batch.h"

#include <algorithm>

#include "model/mask.h"

namespace sf {

std::vector<int> to_ids(const Vocab& v, const std::vector<std::string>& tokens) {
  std::vector<int> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) {
    const int id = v.id(t);
    ids.push_back(id < 0 ? v.unk() : id);
  }
  return ids;
}

Batch Batch::rows(int b0, int count, int pad) const {
  Batch r;
  r.size = count;
  r.n = n;
  r.m = m;
  if (n) r.src.assign(src.begin() + b0 * n, src.begin() + (b0 + count) * n);
  r.tgt_in.assign(tgt_in.begin() + b0 * m, tgt_in.begin() + (b0 + count) * m);
  r.tgt_y.assign(tgt_y.begin() + b0 * m, tgt_y.begin() + (b0 + count) * m);
  r.target_tokens = static_cast<int>(std::count_if(r.tgt_y.begin(), r.tgt_y.end(), [pad](int y) { return y != pad; }));
  return r;
}

Batch make_batch(const Config& c, const std::vector<Example>& examples) {
  const Vocab& sv = c.src_vocab;
  const Vocab& tv = c.tgt_vocab;
  const int pad = tv.pad();
  Batch b;
  b.size = static_cast<int>(examples.size());
  std::vector<std::vector<int>> src, in, y;
  for (const Example& e : examples) {
    std::vector<int> ans = to_ids(tv, e.tgt);
    std::vector<int> dec{tv.bos()}, tgt;
    if (c.has_encoder()) {
      src.push_back(to_ids(sv, e.src));
      dec.insert(dec.end(), ans.begin(), ans.end());
      tgt = ans;
      tgt.push_back(tv.eos());
    } else {
      std::vector<int> prompt = to_ids(tv, e.src);
      dec.insert(dec.end(), prompt.begin(), prompt.end());
      dec.insert(dec.end(), ans.begin(), ans.end());
      // Position i predicts dec[i + 1]; only the answer (after the last prompt token) is scored.
      tgt.assign(prompt.size(), pad);
      tgt.insert(tgt.end(), ans.begin(), ans.end());
      tgt.push_back(tv.eos());
    }
    in.push_back(std::move(dec));
    y.push_back(std::move(tgt));
  }
  for (auto& s : src) b.n = std::max(b.n, static_cast<int>(s.size()));
  for (auto& s : in) b.m = std::max(b.m, static_cast<int>(s.size()));
  for (int i = 0; i < b.size; ++i) {
    if (c.has_encoder()) {
      auto& s = src[static_cast<size_t>(i)];
      s.resize(static_cast<size_t>(b.n), sv.pad());
      b.src.insert(b.src.end(), s.begin(), s.end());
    }
    auto& d = in[static_cast<size_t>(i)];
    auto& t = y[static_cast<size_t>(i)];
    for (int yv : t) b.target_tokens += yv != pad;
    d.resize(static_cast<size_t>(b.m), pad);
    t.resize(static_cast<size_t>(b.m), pad);
    b.tgt_in.insert(b.tgt_in.end(), d.begin(), d.end());
    b.tgt_y.insert(b.tgt_y.end(), t.begin(), t.end());
  }
  return b;
}

BatchMasks batch_masks(const Config& c, const Batch& b) {
  BatchMasks out;
  const auto length = [](std::vector<int>::const_iterator first, int n, int pad) {
    int len = n;
    while (len > 0 && first[len - 1] == pad) --len;
    return len;
  };
  for (int s = 0; s < b.size; ++s) {
    const std::vector<int> src(b.src.begin() + s * b.n, b.src.begin() + (s + 1) * b.n);
    const std::vector<int> tgt(b.tgt_in.begin() + s * b.m, b.tgt_in.begin() + (s + 1) * b.m);
    out.src_len.push_back(length(src.begin(), b.n, c.src_vocab.pad()));
    out.tgt_len.push_back(length(tgt.begin(), b.m, c.tgt_vocab.pad()));
    if (c.has_encoder()) out.encoder.push_back(make_mask(b.n, src, source_pad_key(c), false));
    if (c.has_decoder()) out.decoder.push_back(make_mask(b.m, tgt, decoder_pad_key(c), true));
    if (c.has_cross_attention()) out.cross.push_back(make_mask(b.m, src, source_pad_key(c), false));
  }
  return out;
}

}  // namespace sf
