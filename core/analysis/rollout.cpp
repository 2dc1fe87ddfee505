#include "analysis/rollout.h"

namespace sf {

const char* rollout_formula() {
  return "Â_l = ½·mean_h A_l,h + ½·I (rows renormalised);  R_l = Â_l · R_(l−1),  R_1 = Â_1";
}

std::vector<Mat> attention_rollout(const std::vector<const AttentionTrace*>& self_attn) {
  std::vector<std::vector<const Mat*>> heads;
  for (const AttentionTrace* a : self_attn) {
    if (!a || a->n_heads <= 0 || a->weights.size() < static_cast<size_t>(a->n_heads)) return {};
    heads.emplace_back();
    for (int h = 0; h < a->n_heads; ++h) heads.back().push_back(&a->head_weights(0, h));
  }
  return attention_rollout(heads);
}

std::vector<Mat> attention_rollout(const std::vector<std::vector<const Mat*>>& heads) {
  std::vector<Mat> out;
  Mat r;  // (n, n) R_(l−1)
  for (const std::vector<const Mat*>& layer : heads) {
    if (layer.empty()) return {};
    for (const Mat* w : layer)
      if (!w) return {};
    const Mat& first = *layer.front();
    if (first.rows() != first.cols()) return {};               // a cached step's rows: not a whole sequence
    if (r.size() != 0 && r.rows() != first.rows()) return {};  // layers that saw different sequences
    Mat mean = Mat::Zero(first.rows(), first.cols());          // (n, n)
    for (const Mat* w : layer) {
      if (w->rows() != first.rows() || w->cols() != first.cols()) return {};
      mean += *w;
    }
    mean /= static_cast<float>(layer.size());
    Mat hat = 0.5f * mean + 0.5f * Mat::Identity(mean.rows(), mean.cols());  // (n, n)
    for (Eigen::Index i = 0; i < hat.rows(); ++i) hat.row(i) /= hat.row(i).sum();
    r = r.size() == 0 ? hat : Mat(hat * r);
    out.push_back(r);
  }
  return out;
}

std::vector<const AttentionTrace*> encoder_self_attention(const EncoderTrace& t) {
  std::vector<const AttentionTrace*> out;
  for (const EncoderLayerTrace& l : t.layers) out.push_back(&l.self_attn);
  return out;
}

std::vector<const AttentionTrace*> decoder_self_attention(const DecoderTrace& t) {
  std::vector<const AttentionTrace*> out;
  for (const DecoderLayerTrace& l : t.layers) out.push_back(&l.self_attn);
  return out;
}

}  // namespace sf
