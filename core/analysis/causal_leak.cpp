#include "analysis/causal_leak.h"

#include "model/decoder.h"
#include "model/encoder.h"

namespace sf {

std::vector<float> future_mass(const AttentionTrace& a) {
  const Eigen::Index n = a.weights.empty() ? 0 : a.weights[0].rows();
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  if (a.n_heads <= 0) return out;
  for (Eigen::Index i = 0; i < n; ++i) {
    float mass = 0;
    for (int h = 0; h < a.n_heads; ++h) {
      const Mat& w = a.weights[static_cast<size_t>(h)];
      for (Eigen::Index j = i + 1; j < w.cols(); ++j) mass += w(i, j);
    }
    out[static_cast<size_t>(i)] = mass / static_cast<float>(a.n_heads);
  }
  return out;
}

CausalLeak causal_leak(const Model& m, const PreparedInput& in, const std::vector<int>& tgt_ids) {
  const Config& c = m.config;
  CausalLeak d;
  Mat memory;
  EncoderContext enc;
  if (c.has_encoder()) {
    memory = encode(m, in.src_ids, 1, nullptr, {});
    enc = {&memory, &in.src_ids};
  }
  DecoderTrace a, b;
  RunOptions leaky;
  leaky.causal_mask = false;
  const Mat la = decode(m, tgt_ids, 1, enc, nullptr, &a, {});
  const Mat lb = decode(m, tgt_ids, 1, enc, nullptr, &b, leaky);
  d.causal = std::move(a.layers[0].self_attn);
  d.leaky = std::move(b.layers[0].self_attn);
  d.future_mass = future_mass(d.leaky);
  d.max_logit_diff = (la - lb).cwiseAbs().maxCoeff();
  return d;
}

}  // namespace sf
