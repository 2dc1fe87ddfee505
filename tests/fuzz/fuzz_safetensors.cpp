// fuzz_safetensors.cpp — libFuzzer harness: the safetensors reader (header length, JSON header,
// dtypes, shapes, data_offsets) and, when a file parses, the model loader on top of it (the
// "stepformer.config" metadata, vocabularies, every tensor's name and shape, non-finite values).
// Seeds: the shipped models and fixtures (tests/fuzz/corpus/safetensors).
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/checkpoint.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto f = sf::parse_safetensors(bytes, "fuzz");
  if (!f) return 0;
  auto m = sf::model_from_tensors(*f, "fuzz");
  (void)m;
  return 0;
}
