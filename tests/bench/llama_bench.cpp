// Llama-style decoders at real size: SmolLM2-135M's and Qwen2.5-0.5B's shapes, random weights
// written once as hub folders in BF16 (config.json + model.safetensors, as the hub ships them):
//   llama_load/M          opening the folder in a fresh process (this program run again with
//                         --load-once) for inference, as the explorer does (load_hf_model, then
//                         pack_for_inference): the wall time, its peak RSS (the child's VmHWM) and its RSS
//                         after the load, beside the float32 size of the weights, their size as
//                         held (the matrices kept BF16) and the file's;
//   llama_forward/M       the decoder over 128 tokens, logits for every position, nothing recorded;
//   llama_decode/M        one cached step after a 128-token prompt (the 129th position through
//                         every layer, the tied output projection, argmax), the cache rolled back;
//   llama_forward_f32/M, llama_decode_f32/M
//                         the same with every weight widened to float32 on load (load_hf_model's
//                         `widen`): what the BF16 matrices save.
// The benchmark argument is the thread count (0: every core, base/threads.h).
//   ./build/tests/bench/llama_bench
// Shapes (the hub's config.json of each model; vocabulary stand-in words, no tokenizer: the
// benchmark feeds token ids):
//   smollm2_135m  llama: hidden 576, 30 layers, 9 heads, 3 K/V heads, intermediate 1536, vocab
//                 49152, tied, RMSNorm, SwiGLU, rope_theta 1e5 (134.5 M parameters)
//   qwen25_05b    qwen2: hidden 896, 24 layers, 14 heads, 2 K/V heads, intermediate 4864, vocab
//                 151936, tied, q/k/v biases, rope_theta 1e6 (494 M parameters)
// The folders go to $STEPFORMER_BENCH_LLAMA_DIR (default /tmp/stepformer_bench_llama) and are
// kept: a later run reuses them. The PyTorch twin is tests/bench/peers/torch_llama.py.
#include <benchmark/benchmark.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/allocator.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_common.h"
#include "decoder_timing.h"
#include "io/hf_model.h"
#include "model/weights.h"

namespace sf {
namespace {

constexpr int kPrompt = 128;

struct Shape {
  const char* key;
  nlohmann::json config;
};

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {"smollm2_135m",
       {{"architectures", {"LlamaForCausalLM"}},
        {"model_type", "llama"},
        {"hidden_size", 576},
        {"num_hidden_layers", 30},
        {"num_attention_heads", 9},
        {"num_key_value_heads", 3},
        {"intermediate_size", 1536},
        {"vocab_size", 49152},
        {"max_position_embeddings", 8192},
        {"hidden_act", "silu"},
        {"rms_norm_eps", 1e-5},
        {"rope_theta", 100000.0},
        {"rope_scaling", nullptr},
        {"attention_bias", false},
        {"mlp_bias", false},
        {"tie_word_embeddings", true},
        {"bos_token_id", 0},
        {"eos_token_id", 0},
        {"torch_dtype", "bfloat16"}}},
      {"qwen25_05b",
       {{"architectures", {"Qwen2ForCausalLM"}},
        {"model_type", "qwen2"},
        {"hidden_size", 896},
        {"num_hidden_layers", 24},
        {"num_attention_heads", 14},
        {"num_key_value_heads", 2},
        {"intermediate_size", 4864},
        {"vocab_size", 151936},
        {"max_position_embeddings", 32768},
        {"max_window_layers", 21},
        {"hidden_act", "silu"},
        {"rms_norm_eps", 1e-6},
        {"rope_theta", 1000000.0},
        {"sliding_window", 32768},
        {"use_sliding_window", false},
        {"tie_word_embeddings", true},
        {"bos_token_id", 151643},
        {"eos_token_id", 151643},
        {"torch_dtype", "bfloat16"}}},
  };
  return s;
}

const Shape& shape(const std::string& key) {
  for (const Shape& s : shapes())
    if (key == s.key) return s;
  std::fprintf(stderr, "llama_bench: unknown shape %s\n", key.c_str());
  std::exit(1);
}

std::string root() {
  const char* d = std::getenv("STEPFORMER_BENCH_LLAMA_DIR");
  return d && *d ? d : "/tmp/stepformer_bench_llama";
}
std::string folder(const Shape& s) { return root() + "/" + s.key; }

int64_t file_size(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// The hub file's tensors (Hugging Face's names and shapes), sorted by name as save_pretrained
// writes them. Tied embeddings: no lm_head.weight.
std::vector<HubTensor> tensors(const nlohmann::json& c) {
  const int64_t d = c["hidden_size"], layers = c["num_hidden_layers"], h = c["num_attention_heads"],
                hkv = c["num_key_value_heads"], ff = c["intermediate_size"], V = c["vocab_size"];
  const int64_t dk = d / h;
  const bool qkv_bias = c["model_type"] == "qwen2";
  std::vector<HubTensor> t;
  t.push_back({"model.embed_tokens.weight", {V, d}});
  t.push_back({"model.norm.weight", {d}});
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", {d}});
    t.push_back({p + "post_attention_layernorm.weight", {d}});
    t.push_back({p + "self_attn.q_proj.weight", {h * dk, d}});
    t.push_back({p + "self_attn.k_proj.weight", {hkv * dk, d}});
    t.push_back({p + "self_attn.v_proj.weight", {hkv * dk, d}});
    t.push_back({p + "self_attn.o_proj.weight", {d, h * dk}});
    if (qkv_bias) {
      t.push_back({p + "self_attn.q_proj.bias", {h * dk}});
      t.push_back({p + "self_attn.k_proj.bias", {hkv * dk}});
      t.push_back({p + "self_attn.v_proj.bias", {hkv * dk}});
    }
    t.push_back({p + "mlp.gate_proj.weight", {ff, d}});
    t.push_back({p + "mlp.up_proj.weight", {ff, d}});
    t.push_back({p + "mlp.down_proj.weight", {d, ff}});
  }
  std::sort(t.begin(), t.end());
  return t;
}

// Writes the folder unless it already holds a model.safetensors of the expected size and the same
// config.json. BF16 values: uniform ±0.05 (matrices), 1 (norm gains), 0 (biases).
void write_folder(const Shape& s) {
  const std::string dir = folder(s), config = s.config.dump(2);
  const auto list = tensors(s.config);
  {
    std::ifstream in(dir + "/config.json");
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (old == config && file_size(dir + "/model.safetensors") == safetensors_header(list, true).second) return;
  }
  ::mkdir(root().c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/config.json") << config;
  const std::string tmp = dir + "/model.safetensors.part";
  uint64_t state = 12345;
  const bool written = write_safetensors(tmp, list, true, [&state](const std::string& name, std::vector<float>& v) {
    const bool gain = name.find("norm") != std::string::npos, bias = name.find("bias") != std::string::npos;
    for (float& x : v) x = gain ? 1.0f : bias ? 0.0f : next_uniform(state);
  });
  if (!written || std::rename(tmp.c_str(), (dir + "/model.safetensors").c_str()) != 0) {
    std::fprintf(stderr, "llama_bench: cannot write %s\n", tmp.c_str());
    std::exit(1);
  }
}

// The folder opened as the CLI opens it (or widened to float32), with a stand-in word vocabulary
// of its vocab_size (the benchmark feeds ids), its float32 projections packed as load_model packs
// them (16-bit ones stay as they are).
Model open_folder(const std::string& dir, bool widen) {
  auto files = find_hf_files(dir);
  auto h = files ? read_hf_config(*files) : Result<HfConfig>(Error{files.error()});
  if (!h) {
    std::fprintf(stderr, "llama_bench: %s\n", h.error().c_str());
    std::exit(1);
  }
  std::vector<std::string> t{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(t.size()) < h->vocab_size) t.push_back("t" + std::to_string(t.size()));
  HfVocabs v;
  v.tgt = v.src = *Vocab::make(t, Tokenizer::Word, "stand-in");
  auto m = load_hf_model(*files, *h, v, widen);
  if (!m) {
    std::fprintf(stderr, "llama_bench: %s\n", m.error().c_str());
    std::exit(1);
  }
  pack_for_inference(m->weights);
  return std::move(*m);
}

double rss_mb(const char* field) {  // "VmRSS" or "VmHWM" of this process, MB (10⁶ bytes)
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + std::strlen(field) + 1) * 1024.0 / 1e6;
  return 0;
}

// Entry point of the fresh process: opens the folder and prints "seconds rss_after_MB peak_MB
// f32_MB held_MB". The peak is this process's own high-water mark (VmHWM): the parent's
// getrusage of a forked child also counts the parent's pages the child held until its exec.
// The stand-in vocabulary is built before the clock starts (a real tokenizer replaces it).
int load_once(const std::string& dir) {
  auto files = find_hf_files(dir);
  auto h = files ? read_hf_config(*files) : Result<HfConfig>(Error{files.error()});
  if (!h) {
    std::fprintf(stderr, "llama_bench: %s\n", h.error().c_str());
    return 1;
  }
  std::vector<std::string> t{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(t.size()) < h->vocab_size) t.push_back("t" + std::to_string(t.size()));
  HfVocabs v;
  v.tgt = v.src = *Vocab::make(t, Tokenizer::Word, "stand-in");
  const auto t0 = std::chrono::steady_clock::now();
  auto m = load_hf_model(*files, *h, v);
  if (m) pack_for_inference(m->weights);  // as load_model opens it for the explorer
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!m) {
    std::fprintf(stderr, "llama_bench: %s\n", m.error().c_str());
    return 1;
  }
  std::printf("%.6f %.1f %.1f %.1f %.1f\n", secs, rss_mb("VmRSS:"), rss_mb("VmHWM:"),
              static_cast<double>(param_total(m->config)) * 4 / 1e6,
              static_cast<double>(held_bytes(m->weights, m->config)) / 1e6);
  return 0;
}

// Runs this program again as `--load-once DIR`; returns {seconds, rss after, f32 MB, held MB} and
// the child's peak RSS.
struct Child {
  double secs = 0, rss_after = 0, f32 = 0, held = 0, peak = 0;
};
Child load_in_child(const std::string& dir) {
  int fds[2];
  if (::pipe(fds) != 0) std::exit(1);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::execl("/proc/self/exe", "llama_bench", "--load-once", dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Child c;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(text.c_str(), "%lf %lf %lf %lf %lf", &c.secs, &c.rss_after, &c.peak, &c.f32, &c.held) != 5) {
    std::fprintf(stderr, "llama_bench: the load of %s failed\n", dir.c_str());
    std::exit(1);
  }
  return c;
}

void llama_load(benchmark::State& state, const char* key) {
  const Shape& s = shape(key);
  write_folder(s);
  Child last;
  double peak = 0;
  for (auto _ : state) {
    last = load_in_child(folder(s));
    peak = std::max(peak, last.peak);
    state.SetIterationTime(last.secs);
  }
  state.counters["peak_rss_MB"] = peak;
  state.counters["rss_after_MB"] = last.rss_after;
  state.counters["f32_MB"] = last.f32;
  state.counters["held_MB"] = last.held;
  state.counters["file_MB"] = static_cast<double>(file_size(folder(s) + "/model.safetensors")) / 1e6;
}

// One model at a time stays open (the larger one is 1 GB as loaded, 2 GB widened to float32).
const Model& model(const char* key, bool widen = false) {
  static std::string open_key;
  static std::unique_ptr<Model> m;
  const std::string want = std::string(key) + (widen ? "/f32" : "");
  if (open_key != want) {
    m.reset();
    const Shape& s = shape(key);
    write_folder(s);
    m = std::make_unique<Model>(open_folder(folder(s), widen));
    open_key = want;
  }
  return *m;
}

void llama_forward(benchmark::State& state, const char* key, bool widen) {
  const Model& m = model(key, widen);
  time_forward(state, m, prompt_ids(kPrompt, m.config.tgt_vocab.size()));
}

void llama_decode(benchmark::State& state, const char* key, bool widen) {
  const Model& m = model(key, widen);
  time_cached_step(state, m, prompt_ids(kPrompt, m.config.tgt_vocab.size()));
}

void threads_args(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
}

void llama_forward_f32(benchmark::State& state, const char* key) { llama_forward(state, key, true); }
void llama_decode_f32(benchmark::State& state, const char* key) { llama_decode(state, key, true); }

// Models in the order they are opened (one open at a time): each shape as loaded, then widened.
BENCHMARK_CAPTURE(llama_load, smollm2_135m, "smollm2_135m")->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(llama_forward, smollm2_135m, "smollm2_135m", false)->Apply(threads_args);
// A decoding step is short: several steps per repetition (their mean), whatever --benchmark_min_time says.
BENCHMARK_CAPTURE(llama_decode, smollm2_135m, "smollm2_135m", false)->Apply(threads_args)->MinTime(0.5);
BENCHMARK_CAPTURE(llama_forward_f32, smollm2_135m, "smollm2_135m")->Apply(threads_args);
BENCHMARK_CAPTURE(llama_decode_f32, smollm2_135m, "smollm2_135m")->Apply(threads_args)->MinTime(0.5);
BENCHMARK_CAPTURE(llama_load, qwen25_05b, "qwen25_05b")->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(llama_forward, qwen25_05b, "qwen25_05b", false)->Apply(threads_args);
BENCHMARK_CAPTURE(llama_decode, qwen25_05b, "qwen25_05b", false)->Apply(threads_args)->MinTime(0.5);
BENCHMARK_CAPTURE(llama_forward_f32, qwen25_05b, "qwen25_05b")->Apply(threads_args);
BENCHMARK_CAPTURE(llama_decode_f32, qwen25_05b, "qwen25_05b")->Apply(threads_args)->MinTime(0.5);

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  if (argc == 3 && std::strcmp(argv[1], "--load-once") == 0) return sf::load_once(argv[2]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
