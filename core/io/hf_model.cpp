#include "io/hf_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/hf_weights.h"
#include "io/mapped_file.h"
#include "text/hf_tokenizers.h"
#include "text/tokenizer_config.h"

namespace sf {

namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}
std::string parent(const std::string& p) {
  const size_t s = p.find_last_of('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}
std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"'" + path + "': cannot open (missing file or no permission)"};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The weight files a hub folder may hold instead of model.safetensors, and what to say.
std::string other_weights_message(const std::string& folder) {
  const std::string convert =
      "convert it on a machine with transformers: python3 -c \"from transformers import AutoModel; "
      "AutoModel.from_pretrained('DIR').save_pretrained('DIR', safe_serialization=True)\" "
      "(for GPT-2 / Marian / BERT use GPT2LMHeadModel / MarianMTModel / BertForMaskedLM to keep the head), or "
      "download model.safetensors from the hub (most repositories have it)";
  if (exists(join(folder, "pytorch_model.bin")))
    return "found pytorch_model.bin, a Python pickle; stepformer reads only model.safetensors (no Python at run "
           "time, and a pickle can run code) — " +
           convert;
  if (exists(join(folder, "tf_model.h5")))
    return "found tf_model.h5 (TensorFlow/Keras HDF5); stepformer reads only model.safetensors — " + convert;
  if (exists(join(folder, "flax_model.msgpack")))
    return "found flax_model.msgpack (JAX/Flax); stepformer reads only model.safetensors — " + convert;
  return "no weights found (expected model.safetensors)";
}

// A lower bound of the weights a config implies: the embedding table, learned positions and every
// layer's projections (biases and LayerNorms left out).
double min_weights(const HfConfig& h) {
  const Config& c = h.config;
  const double d = c.d_model;
  double n = double(h.vocab_size) * d + (c.positional == Positional::Learned ? double(c.max_len) * d : 0.0);
  n += c.n_encoder_layers * (4 * d * d + 2 * d * c.encoder_d_ff());
  const double self_attn = 2 * d * c.d_attn() + 2 * d * c.d_kv();
  n += c.n_decoder_layers *
       (self_attn + (c.has_cross_attention() ? 4 * d * d : 0.0) + (c.mlp == Mlp::Gated ? 3 : 2) * d * c.d_ff);
  return n;
}

// Every weight file mapped with its header read: model.safetensors, or each shard.
struct WeightFiles {
  std::vector<HfShard> files;
  uint64_t data_bytes = 0;  // the data blocks' total size
};

Result<WeightFiles> map_weight_files(const HfFiles& f) {
  WeightFiles out;
  const std::vector<std::string> paths = f.shards.empty() ? std::vector<std::string>{f.weights} : f.shards;
  for (const std::string& path : paths) {
    HfShard s;
    s.what = "'" + path + "'";
    auto file = MappedFile::open(path);
    if (!file) return Error{file.error()};
    auto header = parse_safetensors_header(file->data(), file->size(), s.what);
    if (!header) return Error{header.error()};
    s.file = std::move(*file);
    s.header = std::move(*header);
    out.data_bytes += s.file.size() - s.header.data_start;
    out.files.push_back(std::move(s));
  }
  return out;
}

}  // namespace

bool is_hf_path(const std::string& path) {
  if (is_dir(path)) return true;
  if (!ends_with(path, ".safetensors") || !exists(join(parent(path), "config.json"))) return false;
  auto f = MappedFile::open(path);
  if (!f) return false;
  auto h = parse_safetensors_header(f->data(), f->size(), path);
  return h && !h->metadata.count("stepformer.config");
}

Result<std::vector<std::string>> parse_shard_index(const std::string& json_text, const std::string& what) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error{what +
                 ": expected a JSON object (model.safetensors.index.json), found text that does not parse "
                 "as one"};
  if (!j.contains("weight_map") || !j["weight_map"].is_object() || j["weight_map"].empty())
    return Error{what + ": expected a non-empty object 'weight_map' (tensor name -> shard file), found " +
                 (j.contains("weight_map") ? j["weight_map"].dump().substr(0, 40) : std::string("none"))};
  std::vector<std::string> files;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string())
      return Error{what + ": weight_map['" + name + "'] expected a file name, found " + file.dump().substr(0, 40)};
    const std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f == "." || f == ".." || !ends_with(f, ".safetensors"))
      return Error{what + ": weight_map['" + name + "'] expected a .safetensors file name beside the index, found \"" +
                   f.substr(0, 60) + "\""};
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<HfFiles> find_hf_files(const std::string& path) {
  HfFiles f;
  if (is_dir(path)) {
    f.folder = path;
    f.weights = join(path, "model.safetensors");
    const std::string index = join(path, "model.safetensors.index.json");
    if (!exists(f.weights) && exists(index)) {
      f.weights = index;
      auto text = read_text(index);
      if (!text) return Error{text.error()};
      auto names = parse_shard_index(*text, "'" + index + "'");
      if (!names) return Error{names.error()};
      for (const std::string& n : *names) {
        f.shards.push_back(join(path, n));
        if (!exists(f.shards.back()))
          return Error{"'" + index + "' names the shard '" + n + "', which the folder does not have"};
      }
    }
  } else {
    f.folder = parent(path);
    f.weights = path;
  }
  f.config = join(f.folder, "config.json");
  const std::string where = "'" + f.folder + "'";
  if (!exists(f.config)) {
    const bool own = exists(join(f.folder, "model.safetensors")) || exists(join(f.folder, "pytorch_model.bin"));
    return Error{where + ": expected a Hugging Face model folder with config.json, found " +
                 (own ? "weights without config.json (download config.json from the same hub repository)"
                      : "no config.json (a stepformer model is a single .safetensors file; a hub model is a folder "
                        "with config.json, model.safetensors and its tokenizer files)")};
  }
  if (!exists(f.weights)) return Error{where + ": " + other_weights_message(f.folder)};
  return f;
}

Result<HfConfig> read_hf_config(const HfFiles& files) {
  auto text = read_text(files.config);
  if (!text) return Error{text.error()};
  return parse_hf_config(*text, "'" + files.config + "'");
}

Result<HfVocabs> load_hf_vocabs(const std::string& folder, const HfConfig& h) {
  HfVocabs v;
  // A required tokenizer file, or a message naming it and what the folder has instead.
  auto need = [&](const std::string& name) -> Result<std::string> {
    const std::string p = join(folder, name);
    if (exists(p)) {
      v.files.push_back(p);
      return p;
    }
    std::string also = exists(join(folder, "tokenizer.json"))
                           ? " (the folder has tokenizer.json, which stepformer does not read: download " + name +
                                 " from the same hub repository)"
                           : "";
    return Error{"'" + folder + "': missing " + name + ", the " + h.model_type + " tokenizer file" + also};
  };
  auto fail = [](const Error& e) -> Result<HfVocabs> { return e; };
  if (h.model_type == "gpt2") {
    // vocab.json + merges.txt (the original files), else the tokenizer.json newer repositories have.
    const std::string tj = join(folder, "tokenizer.json");
    const bool pair = exists(join(folder, "vocab.json")) && exists(join(folder, "merges.txt"));
    Result<Vocab> tv = Error{""};
    if (!pair && exists(tj)) {
      v.files.push_back(tj);
      tv = load_byte_bpe_tokenizer_json(tj);
    } else {
      auto vj = need("vocab.json");
      if (!vj) return fail({vj.error() + " (or tokenizer.json)"});
      auto mt = need("merges.txt");
      if (!mt) return fail({mt.error() + " (or tokenizer.json)"});
      tv = load_byte_bpe(*vj, *mt);
    }
    if (!tv) return fail({tv.error()});
    v.tgt = std::move(*tv);
    v.tgt.set_framing(gpt2_framing(v.tgt));
    v.tokenizer = "byte-level BPE";
  } else if (h.model_type == "bert") {
    auto vt = need("vocab.txt");
    if (!vt) return fail({vt.error()});
    const std::string tc = join(folder, "tokenizer_config.json");
    if (exists(tc)) v.files.push_back(tc);
    auto lower = wordpiece_lowercase(tc);  // do_lower_case; true when absent
    if (!lower) return fail({lower.error()});
    auto tv = load_wordpiece(*vt, *lower);
    if (!tv) return fail({tv.error()});
    v.tgt = std::move(*tv);
    v.tokenizer = "WordPiece";
  } else if (h.model_type == "llama" || h.model_type == "qwen2" || h.model_type == "mistral" ||
             h.model_type == "gpt_neox") {
    auto t = load_hf_tokenizer(folder, h.model_type);
    if (!t) return fail({t.error()});
    // Embedding tables are often padded past the tokenizer (Qwen2.5: 151,936 rows for 151,665
    // tokens; Pythia: 50,304 for 50,277): those rows get placeholder names.
    if (t->vocab.size() < h.vocab_size) t->vocab.add_unused(h.vocab_size);
    v.tgt = std::move(t->vocab);
    v.tokenizer = t->kind;
    v.files = std::move(t->files);
  } else {  // marian
    auto src = need("source.spm");
    if (!src) return fail({src.error()});
    auto tgt = need("target.spm");
    if (!tgt) return fail({tgt.error()});
    auto sv_json = need("vocab.json");
    if (!sv_json) return fail({sv_json.error()});
    std::string tv_json = *sv_json;
    if (!h.config.share_embeddings) {
      auto t = need("target_vocab.json");
      if (!t) return fail({t.error()});
      tv_json = *t;
    }
    auto sv = load_sentencepiece(*src, *sv_json);
    if (!sv) return fail({sv.error()});
    auto tv = load_sentencepiece(*tgt, tv_json);
    if (!tv) return fail({tv.error()});
    v.src = std::move(*sv);
    v.tgt = std::move(*tv);
    v.tokenizer = "SentencePiece";
  }
  if (h.model_type != "marian") v.src = v.tgt;
  return v;
}

WeightStorage hub_matrix_storage(const std::string& model_type, const std::vector<const SafetensorsHeader*>& headers) {
  if (model_type != "llama" && model_type != "qwen2" && model_type != "mistral" && model_type != "gpt_neox")
    return WeightStorage::F32;
  std::string dtype;
  for (const SafetensorsHeader* h : headers)
    for (const TensorEntry& e : h->entries) {
      if (e.shape.size() != 2) continue;
      if (dtype.empty()) dtype = e.dtype;
      if (e.dtype != dtype) return WeightStorage::F32;
    }
  return dtype == "BF16" ? WeightStorage::BF16 : dtype == "F16" ? WeightStorage::F16 : WeightStorage::F32;
}

Result<Model> load_hf_model(const HfFiles& files, HfConfig h, HfVocabs vocabs, bool widen) {
  const std::string what = "'" + files.weights + "'";
  auto mapped = map_weight_files(files);
  if (!mapped) return Error{mapped.error()};
  std::vector<HfShard>& shards = mapped->files;
  settle_hf_config(h, shards[0].file, shards[0].header);
  Config& c = h.config;
  // Before allocating what config.json describes: the file must be able to hold it (a config.json
  // from another model, or a hostile one, must not make stepformer allocate gigabytes).
  if (const double need = 2.0 * min_weights(h), have = double(mapped->data_bytes); need > have)
    return Error{"'" + files.folder + "': config.json describes at least " + std::to_string(int64_t(need / 2)) +
                 " weights (" + std::to_string(int64_t(need / 1e6)) + " MB even at 16 bits), but " +
                 (files.shards.empty() ? "model.safetensors holds " : "the shards hold ") +
                 std::to_string(int64_t(have / 1e6)) + " MB of data; expected the config.json of the same model"};
  // The tables' rows are config.json's vocab_size; the tokenizer must number exactly as many.
  auto size_check = [&](const Vocab& v, int want, const char* side) -> std::string {
    if (v.size() == want) return "";
    return "'" + files.folder + "': the " + side + " tokenizer has " + std::to_string(v.size()) +
           " tokens but config.json says vocab_size " + std::to_string(want) +
           "; expected the tokenizer files of the same hub repository";
  };
  if (auto e = size_check(vocabs.tgt, h.vocab_size, c.has_encoder() && c.has_decoder() ? "target" : ""); !e.empty())
    return Error{e};
  if (c.has_encoder())
    if (auto e = size_check(vocabs.src, h.src_vocab_size, "source"); !e.empty()) return Error{e};
  if (c.has_encoder()) c.src_vocab = std::move(vocabs.src);
  c.tgt_vocab = std::move(vocabs.tgt);
  std::vector<const SafetensorsHeader*> headers;
  for (const HfShard& f : shards) headers.push_back(&f.header);
  const WeightStorage storage = widen ? WeightStorage::F32 : hub_matrix_storage(h.model_type, headers);
  Weights w;
  allocate(w, c, storage);
  auto report = files.shards.empty() ? read_hf_weights(shards[0].file, shards[0].header, h, w, what)
                                     : read_hf_shards(shards, h, w, what);
  if (!report) return Error{report.error()};
  // A Marian generator tied to the decoder table while the encoder has its own.
  if (!c.share_embeddings && c.has_encoder() && h.tie_word_embeddings && w.generator.weight.size())
    w.generator.weight = w.tgt_embed;
  Model m = Model::make(std::move(c), std::move(w));
  ModelSource& s = m.source;
  s.family = h.model_type;
  s.architecture = h.architecture;
  s.path = files.folder;
  s.files = files.shards.empty() ? std::vector<std::string>{files.weights} : files.shards;
  if (!files.shards.empty()) s.files.push_back(files.weights);
  s.files.push_back(files.config);
  s.files.insert(s.files.end(), vocabs.files.begin(), vocabs.files.end());
  s.stored_dtype = report->dtype_summary();
  s.converted = report->converted();
  s.matrices = storage;
  s.tokenizer = vocabs.tokenizer;
  return m;
}

Result<Model> load_hf_model(const std::string& path) {
  auto files = find_hf_files(path);
  if (!files) return Error{files.error()};
  auto h = read_hf_config(*files);
  if (!h) return Error{h.error()};
  auto v = load_hf_vocabs(files->folder, *h);
  if (!v) return Error{v.error()};
  return load_hf_model(*files, std::move(*h), std::move(*v));
}

}  // namespace sf
