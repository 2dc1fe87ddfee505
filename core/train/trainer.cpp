#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/allocator.h"
#include "base/phase_timer.h"
#include "base/threads.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "train/backward.h"
#include "train/batch.h"
#include "train/loss.h"

namespace sf {

using nlohmann::json;

// What a shard reserves on huge pages (base/allocator.h): its recording, gradients and
// temporaries, ~40 MB for the training benchmark's (d 128, 32 sequences of 11 tokens per shard);
// a bigger model's excess lands on ordinary pages.
constexpr size_t kShardHeap = size_t{48} << 20;

Result<Trainer> Trainer::create(TrainOptions o) {
  if (o.d_model <= 0 || o.n_heads <= 0 || o.d_model % o.n_heads != 0)
    return Error{"d_model (" + std::to_string(o.d_model) + ") must be a positive multiple of the head count (" +
                 std::to_string(o.n_heads) + ")"};
  if (o.d_model % 2 != 0 && o.positional == Positional::Sinusoidal)
    return Error{"sinusoidal positions need an even d_model, found " + std::to_string(o.d_model)};
  if (o.decoder_layers < 1 || o.encoder_layers < 1 || o.d_ff < 0 || o.batch < 1 || o.steps < 0 || o.threads < 1)
    return Error{"expected layers >= 1, d_ff >= 0, batch >= 1, steps >= 0 and threads >= 1"};
  if (o.dropout < 0 || o.dropout >= 1) return Error{"dropout: expected 0 <= p < 1, found " + std::to_string(o.dropout)};
  auto task = options_task(o);
  if (!task) return Error{task.error()};
  o.arch = task->arch;
  if (o.d_ff == 0 && o.arch != Arch::DecoderOnly)
    return Error{std::string("d_ff 0 (attention-only) expects a decoder-only task, found ") + to_string(o.arch) +
                 " task '" + o.task + "'"};
  o.schedule.d_model = o.d_model;
  o.schedule.total = o.steps;
  Trainer t;
  t.opt_ = o;
  t.task_ = std::move(*task);
  Config c = model_config(o, t.task_);
  Weights w;
  init_xavier(w, c, o.seed);
  t.model_ = Model::make(std::move(c), std::move(w));
  t.adam_.init(t.model_.config);
  t.rng_.reseed(o.seed ^ 0x7261696e696e67ULL);  // a stream of its own, apart from the initialisation's
  t.validation_ =
      t.task_.sample_many(kValidationSeed, std::max(o.eval_examples, o.final_eval_examples), Split::Validation);

  t.metrics_ = new_metrics(o, t.model_);
  return t;
}

Batch Trainer::sample_batch() {
  std::vector<Example> ex;
  ex.reserve(static_cast<size_t>(opt_.batch));
  for (int i = 0; i < opt_.batch; ++i) ex.push_back(task_.sample(rng_, Split::Train));
  return make_batch(model_.config, ex);
}

void Trainer::split_into_shards(const Batch& batch, int T) {
  const int pad = model_.config.tgt_vocab.pad();
  shards_.resize(static_cast<size_t>(T));
  for (int s = 0, b0 = 0; s < T; ++s) {
    const int count = batch.size / T + (s < batch.size % T ? 1 : 0);
    shards_[static_cast<size_t>(s)].batch = batch.rows(b0, count, pad);
    // Drawn only with dropout on, so that dropout-free runs keep their batch sequence.
    if (opt_.dropout > 0) shards_[static_cast<size_t>(s)].dropout_seed = rng_.next();
    b0 += count;
  }
}

void Trainer::run_shard(Shard& sh, int target_tokens, bool full_recording) {
  const Config& c = model_.config;
  // A shard is one core: `threads` counts shards, and each shard's products stay on its thread.
  const ScopedThreads one(1);
  const ScopedPhase phase(Phase::Rest);
  const Batch& b = sh.batch;
  // A full recording only on the steps the probes read (residual-stream norms per block).
  sh.trace.encoder.kind = sh.trace.decoder.kind = full_recording ? Recording::Full : Recording::Training;
  if (!sh.grads_allocated) {  // the shard's first step, on the thread that runs all of its steps
    reserve_huge_heap(kShardHeap);
    allocate(sh.grads, c);
    zero_grads(sh.grads, c);  // allocate sets LayerNorm gains to 1; then each update clears them
    sh.grads_allocated = true;
  }
  if (opt_.dropout > 0) draw_dropout_masks(sh.trace, c, b.size, b.n, b.m, opt_.dropout, sh.dropout_seed);
  EncoderContext enc;
  if (c.has_encoder()) {
    encode(model_, b.src, b.size, &sh.trace.encoder);
    enc = {&sh.trace.encoder.output, &b.src};
  }
  const Mat logits = decode(model_, b.tgt_in, b.size, enc, nullptr, &sh.trace.decoder);
  Mat dlogits;
  {
    const ScopedPhase loss(Phase::Loss);
    sh.loss = cross_entropy(logits, b.tgt_y, c.tgt_vocab.pad(), opt_.label_smoothing, &dlogits, target_tokens);
  }
  // Each matrix's gradient written by its one product: the update below does not clear them.
  model_backward(model_, sh.trace, dlogits, sh.grads, true, GemmOut::Overwrite);
}

StepStats Trainer::update(const Batch& batch, int T) {
  const ScopedPhase phase(Phase::Adam);
  const Config& c = model_.config;
  GradientSum grads;  // the batch's gradient: the shards' sum, which the update reads as it goes
  grads.matrices_overwritten = true;
  double loss_sum = 0;
  int correct = 0;
  for (Shard& sh : shards_) {
    grads.parts.push_back(&sh.grads);
    loss_sum += sh.loss.sum;
    correct += sh.loss.correct;
  }
  StepStats st;
  st.tokens = batch.target_tokens;
  st.loss = batch.target_tokens ? loss_sum / batch.target_tokens : 0.0;
  st.accuracy = batch.target_tokens ? static_cast<double>(correct) / batch.target_tokens : 0.0;
  st.lr = opt_.schedule.at(adam_.t + 1);
  // Gradient norms before clipping (what the comparison view plots): a clip needs them before the
  // update, in a pass of their own; without one the update measures the gradient as it reads it.
  auto norm_of = [](const std::vector<double>& squares) {
    double total = 0;
    for (double v : squares) total += v;
    return std::sqrt(total);
  };
  std::vector<double> squares;
  if (opt_.clip > 0) {
    squares = squared_norms(grads, c, T);
    const double norm = norm_of(squares);
    if (norm > opt_.clip) grads.scale = static_cast<float>(opt_.clip / norm);
    adam_.step(model_.weights, grads, c, st.lr, T);
  } else {
    squares = adam_.step(model_.weights, grads, c, st.lr, T);
  }
  st.grad_norm = norm_of(squares);
  const ScopedPhase metrics(Phase::Rest);
  record_step(metrics_, st, *grads.parts.front(), c, squares);  // (its tensors name the squares)
  st.step = adam_.t;
  metrics_["steps"]["step"].push_back(st.step);
  return st;
}

StepStats Trainer::step() {
  std::optional<ScopedPhase> sampling(std::in_place, Phase::Batch);
  const Batch batch = sample_batch();
  const int T = std::min(opt_.threads, batch.size);
  const int64_t next_step = adam_.t + 1;
  const bool probe_step = opt_.probe_every > 0 && (next_step % opt_.probe_every == 0 || next_step == 1);
  split_into_shards(batch, T);
  sampling.reset();
  // OpenMP's threads, not new ones per step: they live across steps, and with them the
  // thread-local scratch of the matrix products (base/gemm.cpp), which a fresh thread would
  // allocate and fault in again every step.
  RegionErrors errors;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(T) if (T > 1)
#endif
  for (int s = 0; s < T; ++s)
    errors.run([&] { run_shard(shards_[static_cast<size_t>(s)], batch.target_tokens, probe_step); });
  errors.rethrow();
  StepStats st = update(batch, T);

  if (probe_step) {
    std::vector<const Trace*> traces;
    for (const Shard& sh : shards_) traces.push_back(&sh.trace);
    record_probes(metrics_, st.step, model_.config, traces);
    if (probe_) probe_(metrics_, st.step, model_);
  }
  if (opt_.eval_every > 0 && st.step % opt_.eval_every == 0) {
    st.evaluated = true;
    st.exact_match = evaluate(opt_.eval_examples).exact_match();
    metrics_["evals"]["step"].push_back(st.step);
    metrics_["evals"]["exact_match"].push_back(round5(st.exact_match));
  }
  return st;
}

EvalResult Trainer::evaluate(int n) const {
  n = std::min(n, static_cast<int>(validation_.size()));
  return sf::evaluate(model_, std::vector<Example>(validation_.begin(), validation_.begin() + n));
}

EvalResult Trainer::final_evaluation(double seconds) {
  EvalResult r = evaluate(opt_.final_eval_examples);
  // "exact_match" holds the task's metric: exact match, or probe accuracy for a language model.
  metrics_["final"] = {{"step", adam_.t},
                       {"examples", r.examples},
                       {"metric", r.metric},
                       {"exact_match", r.exact_match()},
                       {"seconds", round5(seconds)}};
  for (const auto& [kind, counts] : r.by_kind)
    metrics_["final"]["by_kind"][kind] = {{"right", counts[0]}, {"probes", counts[1]}};
  return r;
}

}  // namespace sf
