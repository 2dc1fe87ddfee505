// checkpoint.h — models on disk: one .safetensors file, configuration JSON in
// __metadata__["stepformer.config"], tensors named as in PyTorch's state_dict (see README).
#pragma once

#include <map>
#include <string>

#include "model/model.h"
#include "base/result.h"
#include "io/safetensors.h"

namespace sf {

// Loads and validates: the configuration, every expected tensor present with the right shape and
// dtype, no extra tensor, no NaN/Inf. Each failure names the tensor, what was expected and found.
// load_model's model is for inference: it carries the packed weights of pack_for_inference
// (model_from_tensors' does not; the trainer resumes through it).
Result<Model> load_model(const std::string& path);
Result<Model> model_from_tensors(const TensorFile& f, const std::string& what);

// The model as a TensorFile (extra metadata entries are added to __metadata__).
TensorFile model_to_tensors(const Model& m, const std::map<std::string, std::string>& extra_metadata = {});
// Atomic write (temporary file + rename).
Result<bool> save_model(const std::string& path, const Model& m,
                        const std::map<std::string, std::string>& extra_metadata = {});

}  // namespace sf
