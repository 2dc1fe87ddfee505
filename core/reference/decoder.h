// decoder.h — the decoder stack over a whole target (teacher forcing): embedding, then N layers of
// masked self-attention, cross-attention over the encoder's memory, and feed-forward.
#pragma once

#include <functional>
#include <vector>

#include "base/tensor.h"
#include "model/model.h"
#include "reference/attention.h"
#include "reference/encoder.h"

namespace sf::ref {

// Masked self-attention's mask: causal, plus the target's <pad> keys when the model masks them
// (Marian and GPT-2 do not). Queries sit at positions q_offset .. q_offset + n_q − 1.
Mat target_mask(const Model& m, const std::vector<int>& key_ids, int n_q, int q_offset = 0);  // (n_q, n_k)

// An attention sublayer: the block's input h (n_q, d) to the attention's output and weights.
using AttentionSublayer = std::function<MultiHeadAttention(const Mat&)>;

struct DecoderLayer {
  Mat out;                         // (n_q, d)
  std::vector<Mat> self_weights;   // [head] (n_q, n_k)
  std::vector<Mat> cross_weights;  // [head] (n_q, n_src); empty without an encoder
};

// "Transformer From Scratch", Decoder; "Transformer Architecture",
// Encoder-Decoder Attention:
//   y = Connection(x, SelfAttention(x));  z = Connection(y, CrossAttention(y, memory));
//   out = Connection(z, FFN(z))
// `self` and `cross` say where K and V come from (projected here, or a KV cache); cross is null
// for a decoder-only model.
DecoderLayer decoder_layer(const Config& c, const DecoderLayerWeights& w, const Mat& x, const AttentionSublayer& self,
                           const AttentionSublayer* cross);

struct Decoder {
  Mat output;                   // (m, d) the generator's input
  Mat logits;                   // (m, V) row t scores the token after position t
  AttentionMaps self_weights;   // [layer][head] (m, m)
  AttentionMaps cross_weights;  // [layer][head] (m, n); empty without an encoder
};

// The whole target at once: tgt_ids (m) starting with <s>; memory (n, d) and src_ids (n) from
// the encoder, or memory = nullptr for a decoder-only model.
Decoder decoder(const Model& m, const std::vector<int>& tgt_ids, const Mat* memory, const std::vector<int>& src_ids);

}  // namespace sf::ref
