// fuzz_metrics.cpp — libFuzzer harness: the training metrics reader (train/train_job
// curves_from_metrics, what the explorer's pre-LN vs post-LN view loads from .metrics.json) and
// the training options reader (train/trainer train_options_from_json, what --resume reads from
// a checkpoint). Seeds: the shipped models' .metrics.json files.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "train/train_job.h"
#include "train/trainer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  (void)sf::curves_from_metrics(j, "fuzz");
  (void)sf::train_options_from_json(j);
  if (j.is_object() && j.contains("options")) (void)sf::train_options_from_json(j["options"]);
  return 0;
}
