#include "io/checkpoint.h"

#include <cmath>
#include <set>

#include "base/shape.h"
#include "io/hf_model.h"
#include "io/mapped_file.h"
#include "io/tensor_placement.h"

namespace sf {

namespace {

// The configuration a stepformer file carries in __metadata__.
Result<Config> config_of(const std::map<std::string, std::string>& metadata, const std::string& what) {
  auto it = metadata.find("stepformer.config");
  if (it == metadata.end())
    return Error{what + ": expected the configuration as __metadata__[\"stepformer.config\"], found none"};
  auto cfg = parse_config(it->second);
  if (!cfg) return Error{what + ": " + cfg.error()};
  return cfg;
}

// " for a decoder-only pre-LN model with ..." — what an unexpected tensor did not fit.
std::string model_kind(const Config& c) {
  return std::string(" for a ") + to_string(c.arch) + " " + to_string(c.norm) + "-LN model with " +
         to_string(c.positional) + " PE" + (c.share_embeddings ? " and shared embeddings" : "");
}

}  // namespace

Result<Model> model_from_tensors(const TensorFile& f, const std::string& what) {
  auto cfg = config_of(f.metadata, what);
  if (!cfg) return Error{cfg.error()};
  Weights w;
  allocate(w, *cfg);
  std::set<std::string> expected;
  for (ParamRef& p : param_table(w, *cfg)) {
    expected.insert(p.name);
    const Tensor* t = f.find(p.name);
    std::vector<int64_t> want = p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols};
    if (!t) return Error{what + ": missing tensor '" + p.name + "' of shape " + shape_str(want)};
    if (t->dtype != DType::F32) return Error{what + ": tensor '" + p.name + "' has dtype I64, expected F32"};
    if (t->shape != want)
      return Error{what + ": tensor '" + p.name + "': shape " + shape_str(t->shape) + ", expected " + shape_str(want)};
    for (int64_t i = 0; i < p.numel(); ++i) {
      const float v = t->f32[static_cast<size_t>(i)];
      if (!std::isfinite(v))
        return Error{what + ": tensor '" + p.name + "' holds " + (std::isnan(v) ? "NaN" : "Inf") + " at flat index " +
                     std::to_string(i) + "; expected finite weights"};
      p.data[i] = v;
    }
  }
  for (auto& [name, t] : f.tensors)
    if (!expected.count(name)) return Error{what + ": unexpected tensor '" + name + "'" + model_kind(*cfg)};
  return Model::make(std::move(*cfg), std::move(w));
}

Result<Model> load_model(const std::string& path) {
  // A loaded model is for inference: its projections are packed (pack_for_inference; the trainer
  // resumes through model_from_tensors, unpacked).
  if (is_hf_path(path)) {
    auto hf = load_hf_model(path);
    if (hf) pack_for_inference(hf->weights);
    return hf;
  }
  const std::string what = "'" + path + "'";
  auto file = MappedFile::open(path);
  if (!file) return Error{file.error()};
  auto header = parse_safetensors_header(file->data(), file->size(), what);
  if (!header) return Error{header.error()};
  auto cfg = config_of(header->metadata, what);
  if (!cfg) return Error{cfg.error()};
  // Every tensor copied once from the mapped file straight into its parameter.
  Weights w;
  allocate(w, *cfg);
  std::map<std::string, TensorPlan> plans;
  for (ParamRef& p : param_table(w, *cfg))
    plans[p.name] = TensorPlan{p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols},
                               {{p.data, p.rows, p.cols}}};
  auto report = place_tensors(
      *file, *header, plans, what, [](const std::string& n) { return n; }, model_kind(*cfg));
  if (!report) return Error{report.error()};
  Model m = Model::make(std::move(*cfg), std::move(w));
  m.source.path = path;
  m.source.files = {path};
  m.source.stored_dtype = report->dtype_summary();
  m.source.converted = report->converted();
  m.source.tokenizer = to_string(m.config.tgt_vocab.tokenizer());
  pack_for_inference(m.weights);
  return m;
}

TensorFile model_to_tensors(const Model& m, const std::map<std::string, std::string>& extra_metadata) {
  TensorFile f;
  f.metadata = extra_metadata;
  f.metadata["stepformer.config"] = config_to_json(m.config);
  for (const ParamRef& p : param_table(m.weights, m.config)) {
    Tensor t;
    t.shape = p.vector ? std::vector<int64_t>{p.cols} : std::vector<int64_t>{p.rows, p.cols};
    t.f32 = p.values();
    f.add(p.name, std::move(t));
  }
  return f;
}

Result<bool> save_model(const std::string& path, const Model& m, const std::map<std::string, std::string>& extra) {
  // A stepformer file keeps a word or character vocabulary in its configuration; a hub model's
  // tokenizer (merges, WordPiece rules, a SentencePiece model) lives in its folder's own files.
  // Written anyway, the file could not be opened again: refuse before writing anything.
  for (const Vocab* v : {&m.config.src_vocab, &m.config.tgt_vocab}) {
    const Tokenizer t = v->tokenizer();
    if (v->size() > 0 && t != Tokenizer::Word && t != Tokenizer::Character)
      return Error{"'" + path + "': cannot save a model with a " + to_string(t) +
                   " tokenizer as a stepformer file (expected a word or char vocabulary; the " + to_string(t) +
                   " tokenizer's files stay in the Hugging Face folder the model came from)"};
  }
  return write_safetensors(path, model_to_tensors(m, extra));
}

}  // namespace sf
