// fuzz_config.cpp — libFuzzer harness: the "stepformer.config" JSON (model/config parse_config),
// vocabularies included. A config that parses must survive config_to_json -> parse_config
// unchanged (the documented round trip); anything else aborts, which libFuzzer reports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = sf::parse_config(std::string(reinterpret_cast<const char*>(data), size));
  if (!c) return 0;
  const std::string once = sf::config_to_json(*c);
  auto again = sf::parse_config(once);
  if (!again || sf::config_to_json(*again) != once) std::abort();
  return 0;
}
