#include "reference/embedding.h"

#include <cmath>

#include "reference/half_linear.h"
#include "reference/layer_norm.h"
#include "reference/positional_encoding.h"

namespace sf::ref {

Mat token_embedding(const Mat& table, const std::vector<int>& ids, float scale) {
  Mat x(static_cast<Eigen::Index>(ids.size()), table.cols());  // (n, d)
  for (size_t t = 0; t < ids.size(); ++t) x.row(static_cast<Eigen::Index>(t)) = table.row(ids[t]) * scale;
  return x;
}

float embedding_scale(const Config& c) { return c.scale_embeddings ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f; }

Mat token_type_embedding(const Mat& table, const std::vector<int>& type_ids) {
  return token_embedding(table, type_ids, 1.0f);  // a lookup like the token embedding, unscaled
}

Mat embed(const Model& m, const std::vector<int>& ids, bool source, int pos0) {
  const Config& c = m.config;
  const Mat widened = source ? Mat() : target_table_if_half(m.weights);
  const Mat& table = source ? m.weights.src_embedding(c) : widened.size() ? widened : m.weights.tgt_embed;  // (V, d)
  const int n = static_cast<int>(ids.size());
  Mat x = token_embedding(table, ids, embedding_scale(c)) + positional_encoding(m, n, pos0);  // (n, d)
  if (c.n_token_types > 0) {  // BERT: segment 0 up to the first [SEP], then 1
    const Vocab& v = source ? c.src_vocab : c.tgt_vocab;
    const int n_types = static_cast<int>(m.weights.type_embed.rows());
    x += token_type_embedding(m.weights.type_embed, segment_ids(ids, v.id("[SEP]"), v.pad(), n_types));
  }
  if (c.embed_norm) x = layer_norm(x, m.weights.embed_norm);  // BERT's embedding LayerNorm
  return x;
}

}  // namespace sf::ref
