#include "train/train_options.h"

#include <stdexcept>

#include "io/json_number.h"

namespace sf {

using nlohmann::json;

namespace {

// Field `key` as a T (io/json_number.h); anything else is an error naming the field.
template <class T>
T number(const json& j, const char* key) {
  const json& v = j.at(key);
  if (const auto x = json_number<T>(v)) return *x;
  throw std::runtime_error(std::string("field '") + key + "' expected " + json_number_expected<T>() + ", found " +
                           v.dump().substr(0, 40));
}

}  // namespace

json to_json(const TrainOptions& o) {
  json j;
  j["task"] = o.task;
  j["task_min_len"] = o.task_options.min_len;
  j["task_max_len"] = o.task_options.max_len;
  j["task_symbols"] = o.task_options.n_symbols;
  j["arch"] = to_string(o.arch);
  j["arch_set"] = o.arch_set;
  j["norm"] = to_string(o.norm);
  j["encoder_layers"] = o.encoder_layers;
  j["decoder_layers"] = o.decoder_layers;
  j["d_model"] = o.d_model;
  j["n_heads"] = o.n_heads;
  j["d_ff"] = o.d_ff;
  j["activation"] = to_string(o.activation);
  j["positional"] = to_string(o.positional);
  j["batch"] = o.batch;
  j["steps"] = o.steps;
  j["seed"] = o.seed;
  j["schedule"] = o.schedule.kind == Schedule::Warmup ? "warmup" : "constant";
  j["factor"] = o.schedule.factor;
  j["warmup"] = o.schedule.warmup;
  j["constant_lr"] = o.schedule.rate;
  j["cooldown"] = o.schedule.cooldown;
  j["clip"] = o.clip;
  j["label_smoothing"] = o.label_smoothing;
  j["dropout"] = o.dropout;
  j["eval_every"] = o.eval_every;
  j["eval_examples"] = o.eval_examples;
  j["final_eval_examples"] = o.final_eval_examples;
  j["probe_every"] = o.probe_every;
  j["threads"] = o.threads;
  j["command"] = o.command;
  return j;
}

Result<TrainOptions> train_options_from_json(const json& j) {
  try {
    TrainOptions o;
    o.task = j.at("task").get<std::string>();
    o.task_options.min_len = number<int>(j, "task_min_len");
    o.task_options.max_len = number<int>(j, "task_max_len");
    o.task_options.n_symbols = number<int>(j, "task_symbols");
    o.arch = j.at("arch").get<std::string>() == "decoder-only" ? Arch::DecoderOnly : Arch::EncoderDecoder;
    o.arch_set = j.at("arch_set").get<bool>();
    o.norm = j.at("norm").get<std::string>() == "pre" ? NormPlacement::Pre : NormPlacement::Post;
    o.encoder_layers = number<int>(j, "encoder_layers");
    o.decoder_layers = number<int>(j, "decoder_layers");
    o.d_model = number<int>(j, "d_model");
    o.n_heads = number<int>(j, "n_heads");
    o.d_ff = number<int>(j, "d_ff");
    o.activation = j.at("activation").get<std::string>() == "gelu" ? Activation::Gelu : Activation::Relu;
    o.positional = j.at("positional").get<std::string>() == "learned" ? Positional::Learned : Positional::Sinusoidal;
    o.batch = number<int>(j, "batch");
    o.steps = number<int64_t>(j, "steps");
    o.seed = number<uint64_t>(j, "seed");
    o.schedule.kind = j.at("schedule").get<std::string>() == "constant" ? Schedule::Constant : Schedule::Warmup;
    o.schedule.factor = number<double>(j, "factor");
    o.schedule.warmup = number<int>(j, "warmup");
    o.schedule.rate = number<double>(j, "constant_lr");
    o.schedule.cooldown = j.contains("cooldown") ? number<int>(j, "cooldown") : 0;
    o.clip = number<float>(j, "clip");
    o.label_smoothing = number<float>(j, "label_smoothing");
    o.dropout = number<float>(j, "dropout");
    o.eval_every = number<int>(j, "eval_every");
    o.eval_examples = number<int>(j, "eval_examples");
    o.final_eval_examples = number<int>(j, "final_eval_examples");
    o.probe_every = number<int>(j, "probe_every");
    o.threads = number<int>(j, "threads");
    o.command = j.value("command", "");
    return o;
  } catch (const std::exception& e) {
    return Error{std::string("training options: ") + e.what()};
  }
}

Result<Task> options_task(const TrainOptions& o) {
  auto t = make_task(o.task, o.task_options);
  if (!t) return t;
  if (o.arch_set && o.arch != t->arch) {
    if (o.arch == Arch::EncoderDecoder)
      return Error{"task '" + o.task + "' is decoder-only; expected --arch decoder-only, found encoder-decoder"};
    return as_decoder_only(*t);
  }
  return t;
}

Config model_config(const TrainOptions& o, const Task& t) {
  Config c;
  c.arch = t.arch;
  c.d_model = o.d_model;
  c.n_heads = o.n_heads;
  c.n_encoder_layers = t.arch == Arch::EncoderDecoder ? o.encoder_layers : 0;
  c.n_decoder_layers = o.decoder_layers;
  c.d_ff = o.d_ff;
  c.max_len = t.model_max_len();
  c.norm = o.norm;
  c.activation = o.activation;
  c.positional = o.positional;
  c.share_embeddings = false;
  c.tgt_vocab = *Vocab::make(t.tgt_vocab(), t.tokenizer, "tgt_vocab");
  if (c.has_encoder()) c.src_vocab = *Vocab::make(t.src_vocab(), t.tokenizer, "src_vocab");
  return c;
}

}  // namespace sf
