// hf_weights.h — a hub model.safetensors's tensors mapped into stepformer's Weights.
//
// Hub names are first made canonical (a "transformer." / "model." / "bert." prefix dropped,
// TF-era LayerNorm gamma/beta read as weight/bias), then each lands in its Weights slot
// (model/weights.h, nn.Linear layout (out, in)):
//   gpt2:   Conv1D weights (in, out) transposed; c_attn (d, 3d) split into Q | K | V; ln_1/ln_2/ln_f;
//           lm_head tied to wte (an lm_head.weight that differs from wte becomes the generator)
//   marian: {q,k,v,out}_proj, self_attn_layer_norm / encoder_attn_layer_norm / final_layer_norm;
//           final_logits_bias -> the generator bias; stored position tables checked, not read
//   bert:   query/key/value/attention.output.dense, the embedding LayerNorm and token types,
//           cls.predictions.* -> the MLM head, cls.predictions.bias -> the generator bias
//   llama / qwen2 / mistral: embed_tokens, input_layernorm / post_attention_layernorm (RMSNorm
//           gains), self_attn.{q,k,v,o}_proj (biases as the config says), mlp.{gate,up,down}_proj,
//           norm, lm_head (absent or a copy when tied)
//   gpt_neox: embed_in, query_key_value (rows per head [q | k | v]) split into Q/K/V, dense,
//           dense_h_to_4h / dense_4h_to_h, the LayerNorms, final_layer_norm, embed_out
// Buffers (causal masks, position_ids, rotary inv_freq) and unused heads (pooler, next-sentence)
// are skipped.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "io/hf_config.h"
#include "io/mapped_file.h"
#include "io/safetensors.h"
#include "io/tensor_placement.h"
#include "model/weights.h"

namespace sf {

// The hub name with its family's prefix removed and LayerNorm gamma/beta renamed.
std::string canonical_hf_name(const std::string& model_type, const std::string& stored_name);

// Settles what config.json cannot say and the file can: GPT-2's lm_head tied or not (compared
// byte for byte with wte), BERT's MLM head present or not. Call before allocating the weights.
void settle_hf_config(HfConfig& h, const MappedFile& file, const SafetensorsHeader& header);

// Fills `w` (allocated for h.config with its vocabularies set) from the file, each tensor read
// once in file order. Messages name the stored tensor, what was expected and what was found.
Result<PlacementReport> read_hf_weights(MappedFile& file, const SafetensorsHeader& header, const HfConfig& h,
                                        Weights& w, const std::string& what);

// One file of a sharded checkpoint (model-0000k-of-0000n.safetensors), mapped, its header read.
struct HfShard {
  MappedFile file;
  SafetensorsHeader header;
  std::string what;  // the file, for messages
};
// The sharded form: every shard in turn (each tensor read once, each file handed back as it is
// read); a tensor missing from every shard is reported once, naming `what` (the index file).
Result<PlacementReport> read_hf_shards(std::vector<HfShard>& shards, const HfConfig& h, Weights& w,
                                       const std::string& what);

}  // namespace sf
