// decoder_timing.h — what the decoder benchmarks (gpt2_bench, llama_bench, hf_load_bench,
// decode_bench, breakdown_bench) share: a prompt of token ids, the set-up of a cached decoding step
// and the timing loops of a whole forward pass and of one cached step, and a hub-layout
// safetensors file of random weights.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/threads.h"
#include "bench_common.h"
#include "bench_cpu.h"
#include "stream_read.h"
#include "stepper/decoding.h"

namespace sf {

// n token ids spread over a vocabulary of `vocab` (past the four specials).
inline std::vector<int> prompt_ids(int n, int vocab) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(4 + (i * 7919) % (vocab - 4));
  return ids;
}

// The whole decoder over ids, logits for every position (B = 1, nothing recorded), on
// state.range(0) threads (0: every core); the counters scripts/bench_table.py reads. One untimed
// pass first, as the PyTorch twin warms up: the timed passes run in a process that has run the
// model before, as the explorer's do (its memory already mapped, not faulted in page by page).
inline void time_forward(benchmark::State& state, const Model& m, const std::vector<int>& ids) {
  bench_threads(static_cast<int>(state.range(0)));
  benchmark::DoNotOptimize(decode(m, ids, 1, EncoderContext{}, nullptr, nullptr).data());
  for (auto _ : state) {
    Mat logits = decode(m, ids, 1, EncoderContext{}, nullptr, nullptr);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["flops"] = flops(causal_forward_flops(m.config, 0, static_cast<int>(ids.size())));
  state.counters["threads"] = threads();
}

// Sets h up for a cached step whose decoder input is `ids` (t tokens): the cache holds rows
// 0 .. t − 2 (and the cross-attention's K/V when enc has a memory); the step feeds ids' last.
inline void prime_cached_step(const Model& m, const EncoderContext& enc, const std::vector<int>& ids, Hypothesis& h) {
  start_hypothesis(m, std::vector<int>(ids.begin(), ids.end() - 1), true, h);
  next_logits(m, enc, h, true, nullptr);
  h.ids = ids;
}

// The timed loop of a cached step: h's next step (nothing recorded) and argmax, the cache rolled
// back after each; between the steps, untimed, the host's streaming read on as many threads, whose
// rate gives the floor of this run (counters read_rate and threads; stream_read.h).
inline void time_steps(benchmark::State& state, const Model& m, const EncoderContext& enc, Hypothesis& h) {
  StreamBeside beside(threads());
  for (auto _ : state) {
    const RowVec logits = next_logits(m, enc, h, true, nullptr);
    benchmark::DoNotOptimize(argmax(logits));
    state.PauseTiming();
    drop_last_row(h.cache);
    beside.pass();
    state.ResumeTiming();
  }
  benchmark::DoNotOptimize(beside.sink());
  state.counters["threads"] = threads();
  state.counters["read_rate"] = beside.rate();
}

// One cached step after the prompt: position prompt + 1 through every layer, the output
// projection and argmax, on state.range(0) threads (time_steps). The step's bytes count the weight
// matrices at the width they are held (16-bit when kept so).
inline void time_cached_step(benchmark::State& state, const Model& m, const std::vector<int>& prompt) {
  bench_threads(static_cast<int>(state.range(0)));
  Hypothesis h;
  start_hypothesis(m, prompt, true, h);
  // Prefill (cache rows 0 .. prompt − 1); its prediction is the token the timed step feeds.
  h.ids.push_back(argmax(next_logits(m, EncoderContext{}, h, true, nullptr)));
  time_steps(state, m, EncoderContext{}, h);
  step_counters(state, m.config, 0, static_cast<int>(prompt.size()) + 1, bytes_per_weight(m.weights.matrix_storage()));
}

// A tensor of a hub file: its name and shape.
using HubTensor = std::pair<std::string, std::vector<int64_t>>;

inline int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The next of a stream of uniform values in ±0.05 (a 64-bit LCG: the same stream on every host).
inline float next_uniform(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) * 0.1f;
}

// The size a safetensors file of these tensors has, and its header (padded to 8 bytes).
inline std::pair<std::string, int64_t> safetensors_header(const std::vector<HubTensor>& tensors, bool bf16) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  const uint64_t width = bf16 ? 2 : 4;
  uint64_t off = 0;
  for (const auto& [name, shape] : tensors) {
    const uint64_t bytes = width * static_cast<uint64_t>(numel(shape));
    header[name] = {{"dtype", bf16 ? "BF16" : "F32"}, {"shape", shape}, {"data_offsets", {off, off + bytes}}};
    off += bytes;
  }
  std::string head = header.dump();
  while ((head.size() + 8) % 8) head += ' ';
  return {head, static_cast<int64_t>(8 + head.size() + off)};
}

// Streams a safetensors file of the tensors, in their order, F32 or BF16 (the upper half of each
// float): fill(name, values) sets each tensor's values (values holds numel floats). False when
// the file cannot be written.
inline bool write_safetensors(const std::string& path, const std::vector<HubTensor>& tensors, bool bf16,
                              const std::function<void(const std::string&, std::vector<float>&)>& fill) {
  const std::string head = safetensors_header(tensors, bf16).first;
  std::ofstream out(path, std::ios::binary);
  const uint64_t len = head.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << head;
  std::vector<float> values;
  std::vector<uint16_t> halves;
  for (const auto& [name, shape] : tensors) {
    values.assign(static_cast<size_t>(numel(shape)), 0.0f);
    fill(name, values);
    if (!bf16) {
      out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(4 * values.size()));
      continue;
    }
    halves.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &values[i], 4);
      halves[i] = static_cast<uint16_t>(u >> 16);
    }
    out.write(reinterpret_cast<const char*>(halves.data()), static_cast<std::streamsize>(2 * halves.size()));
  }
  out.close();
  return static_cast<bool>(out);
}

}  // namespace sf
