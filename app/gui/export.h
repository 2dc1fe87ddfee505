// export.h — the recording of a session as files: safetensors (one file), NPY or CSV (a folder).
#pragma once

#include <string>

#include "stepper/session.h"

namespace sf::gui {

// Every recorded tensor of the session: the encoder ("encoder.…", "src_ids") and each computed
// decoder step ("steps.{t}.decoder.…", "steps.{t}.logits", …), named as `stepformer trace` names
// them. The format follows the extension of `path`:
//   .safetensors  one file (written atomically)
//   .npy          a folder `path` (extension kept) holding <name>.npy per tensor
//   .csv          a folder holding <name>.csv per 1-D/2-D tensor; (h, n, n) maps as <name>.h{k}.csv
bool export_session(const Session& s, const std::string& path, std::string& error);

// The tensors export_session writes.
TensorFile session_tensors(const Session& s);

// One tensor as .npy (little-endian <f4 or <i8, C order) / as CSV text.
std::string npy_bytes(const Tensor& t);
std::string csv_text(const Tensor& t, int64_t first_row_block = -1);

}  // namespace sf::gui
