// model_shapes.h — models of a known shape with random weights, for the tests and the benchmarks
// (tests/bench/bench_common.h includes it).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/weights.h"

namespace sf {

// A model of shape `c` with Xavier-random weights and word vocabularies of `vocab` entries
// (<pad> <s> </s> <unk> w4 w5 …): the target's, and the source's when `c` has an encoder. Set up
// for inference as load_model does (pack_for_inference).
inline Model random_model(Config c, int vocab, uint64_t seed = 1) {
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(v.size()) < vocab) v.push_back("w" + std::to_string(v.size()));
  if (c.has_encoder()) c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  Weights w;
  init_xavier(w, c, seed);
  pack_for_inference(w);
  return Model::make(std::move(c), std::move(w));
}

// GPT-2 small's shape (the hub's gpt2): d_model 768, 12 heads, 12 layers, d_ff 3072, 1024
// positions, pre-LN, tanh-GELU, learned positions, output tied to the token embedding, no √d
// embedding scale; use with random_model(c, 50257): 124 M parameters, 475 MiB of float32.
inline Config gpt2_small_config() {
  Config c;
  c.arch = Arch::DecoderOnly;
  c.d_model = 768;
  c.n_heads = 12;
  c.n_decoder_layers = 12;
  c.d_ff = 3072;
  c.max_len = 1024;
  c.norm = NormPlacement::Pre;
  c.activation = Activation::GeluTanh;
  c.positional = Positional::Learned;
  c.share_embeddings = true;
  c.scale_embeddings = false;
  return c;
}

}  // namespace sf
