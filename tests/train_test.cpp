// Training: the loss falls on the copy task within a few seconds, runs are deterministic for a
// seed, resuming from a checkpoint is bit-identical to an uninterrupted run, shards across threads
// agree with one thread, the optimiser and schedules follow their formulas, the metrics file has
// the documented layout, and a shipped copy model decodes held-out inputs exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <tuple>
#include <vector>

#include "analysis/head_detector.h"
#include "base/phase_timer.h"
#include "io/safetensors.h"
#include "test_util.h"
#include "train/adam.h"
#include "train/batch.h"
#include "train/evaluate.h"
#include "train/loss.h"
#include "train/schedule.h"
#include "train/trainer.h"

namespace sf {
namespace {

TrainOptions tiny_copy(uint64_t seed = 1) {
  TrainOptions o;
  o.task = "copy";
  o.task_options = {1, 6, 6};
  o.norm = NormPlacement::Pre;
  o.encoder_layers = o.decoder_layers = 1;
  o.d_model = 32;
  o.n_heads = 2;
  o.d_ff = 64;
  o.batch = 32;
  o.steps = 400;
  o.seed = seed;
  o.schedule.kind = Schedule::Constant;
  o.schedule.rate = 3e-3;
  o.label_smoothing = 0.0f;
  o.eval_every = 0;
  o.probe_every = 25;
  o.eval_examples = 100;
  o.final_eval_examples = 200;
  return o;
}

std::vector<float> all_weights(const Trainer& t) {
  std::vector<float> v;
  for (const ParamRef& p : param_table(t.model().weights, t.model().config))
    v.insert(v.end(), p.data, p.data + p.numel());
  return v;
}

// Copy of 1-6 symbols from 6, d_model 32, 1+1 layers, batch 32, constant lr 3e-3 with a linear
// cool-down over the last 300 of 1000 steps, no smoothing, five seeds.
//
// Why five seeds and these margins (docs/reliability.md, "Numerics across builds"): the exact
// trajectory of a run depends on the build — FMA contraction, AVX-512 vs AVX2 vector width and
// the sanitizers' changed inlining reassociate float sums — so one seed's final accuracy is only
// reproducible within one build. Measured over seeds 1-10 in five builds (native Release, x86-64-v3
// Release, -O2, ASan native, ASan x86-64-v3): every run's loss falls from > 3 to < 0.001 over the
// last 20 steps; greedy exact match is >= 0.99 for most seeds and 0.745 for the rest (a run that
// settles with the longest copies wrong), never lower, and every build has >= 2 of seeds 1-5
// at >= 0.99. So each seed must learn (loss, em >= 0.6) and at least one must learn it all.
TEST(Train, CopyLossFallsAndTheTaskIsLearnedOnEveryBuild) {
  double best_em = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    TrainOptions o = tiny_copy(seed);
    o.steps = 1000;
    o.schedule.cooldown = 300;
    o.probe_every = 0;
    auto t = Trainer::create(o);
    ASSERT_TRUE(t.ok()) << t.error();
    double first = 0, last20 = 0;
    while (!t->finished()) {
      const StepStats s = t->step();
      if (s.step == 1) first = s.loss;
      if (s.step > o.steps - 20) last20 += s.loss / 20;
    }
    const double em = t->evaluate(200).exact_match();
    EXPECT_GT(first, 2.0) << "seed " << seed;
    EXPECT_LT(last20, 0.05) << "seed " << seed << ": mean copy loss over the last 20 steps";
    EXPECT_GE(em, 0.6) << "seed " << seed << ": greedy exact match on 200 held-out examples";
    best_em = std::max(best_em, em);
  }
  EXPECT_GE(best_em, 0.99) << "no seed learned the whole copy task";
}

TEST(Train, DeterministicForASeed) {
  TrainOptions o = tiny_copy(3);
  o.steps = 15;
  auto a = Trainer::create(o), b = Trainer::create(o);
  while (!a->finished()) a->step();
  while (!b->finished()) b->step();
  EXPECT_EQ(all_weights(*a), all_weights(*b));
  EXPECT_EQ(a->metrics()["steps"]["loss"], b->metrics()["steps"]["loss"]);
  o.seed = 4;
  auto c = Trainer::create(o);
  while (!c->finished()) c->step();
  EXPECT_NE(all_weights(*a), all_weights(*c));
}

TEST(Train, ResumeFromCheckpointIsBitIdentical) {
  for (NormPlacement norm : {NormPlacement::Pre, NormPlacement::Post}) {
    TrainOptions o = tiny_copy(5);
    o.norm = norm;
    o.steps = 30;
    o.eval_every = 10;
    o.probe_every = 7;
    auto whole = Trainer::create(o);
    while (!whole->finished()) whole->step();

    auto first = Trainer::create(o);
    while (first->steps_done() < 13) first->step();
    const std::string ckpt = test::temp_path("resume.ckpt.safetensors");
    ASSERT_TRUE(first->save_checkpoint(ckpt).ok());
    auto resumed = Trainer::resume(ckpt);
    ASSERT_TRUE(resumed.ok()) << resumed.error();
    EXPECT_EQ(resumed->steps_done(), 13);
    while (!resumed->finished()) resumed->step();
    EXPECT_EQ(all_weights(*whole), all_weights(*resumed));
    EXPECT_EQ(whole->metrics(), resumed->metrics());
    std::remove(ckpt.c_str());
  }
}

TEST(Train, ResumeRejectsAModelFileWithAMessage) {
  auto r = Trainer::resume(test::fixture("encdec_pre_relu_sin.safetensors"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("checkpoint"), std::string::npos) << r.error();
}

// A checkpoint is a file someone may hand over: a step, RNG state or metrics record it could not
// have written is refused with a message naming the part, never an exception out of resume (a
// crash) or a metrics record whose shape would end the run mid-way (or loop forever looking for
// a module group it does not name).
TEST(Train, ResumeRefusesACheckpointWithMalformedPartsWithAMessage) {
  TrainOptions o = tiny_copy(6);
  o.steps = 8;
  o.probe_every = 2;
  auto t = Trainer::create(o);
  while (t->steps_done() < 4) t->step();
  const std::string ckpt = test::temp_path("malformed.ckpt.safetensors");
  ASSERT_TRUE(t->save_checkpoint(ckpt).ok());
  auto saved = read_safetensors(ckpt);
  ASSERT_TRUE(saved.ok()) << saved.error();
  const nlohmann::json metrics = nlohmann::json::parse(saved->metadata.at("stepformer.metrics"));
  auto edited = [&](const char* key, nlohmann::json value) {  // metrics with one part replaced
    nlohmann::json m = metrics;
    m[nlohmann::json::json_pointer(key)] = std::move(value);
    return m.dump();
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"stepformer.rng", std::string(64, 'z'), "RNG state: expected 64 hex digits"},
      {"stepformer.rng", "12", "RNG state: expected 64 hex digits"},
      {"stepformer.step", "x9", "step: expected a whole number of steps"},
      {"stepformer.step", "99999999999999999999999", "step: expected a whole number of steps"},
      {"stepformer.step", "-3", "step: expected a whole number of steps"},
      {"stepformer.metrics", "[1, 2]", "its metrics are not this run's record: expected an object"},
      {"stepformer.metrics", edited("/steps", {1}), "expected \"steps\" to be an object, found array"},
      {"stepformer.metrics", edited("/steps/loss", 3), "expected \"steps.loss\" to be a list, found number"},
      {"stepformer.metrics", edited("/groups", nlohmann::json::array()), "expected \"groups\" to be ["},
      {"stepformer.metrics", edited("/heads", {{"step", 1}}), "expected \"heads.step\" to be a list"},
  };
  for (const auto& [key, value, message] : cases) {
    TensorFile f = *saved;
    f.metadata[key] = value;
    ASSERT_TRUE(write_safetensors(ckpt, f).ok());
    auto r = Trainer::resume(ckpt);
    ASSERT_FALSE(r.ok()) << key << " = " << value;
    EXPECT_NE(r.error().find(message), std::string::npos) << r.error();
  }
  // What the writer creates when absent (a series, the evaluations) may be missing: resuming adds it.
  TensorFile f = *saved;
  nlohmann::json m = metrics;
  m.erase("evals");
  m["steps"].erase("tokens");
  f.metadata["stepformer.metrics"] = m.dump();
  ASSERT_TRUE(write_safetensors(ckpt, f).ok());
  auto r = Trainer::resume(ckpt);
  ASSERT_TRUE(r.ok()) << r.error();
  while (!r->finished()) r->step();
  EXPECT_EQ(r->metrics()["steps"]["tokens"].size(), 4u);
  std::remove(ckpt.c_str());
}

TEST(Train, DropoutIsDeterministicChangesTrainingAndLeavesInferenceAlone) {
  TrainOptions o = tiny_copy(9);
  o.steps = 10;
  auto plain = Trainer::create(o);
  o.dropout = 0.2f;
  auto a = Trainer::create(o), b = Trainer::create(o);
  double la = 0, lb = 0, lp = 0;
  while (!a->finished()) {
    la = a->step().loss;
    lb = b->step().loss;
    lp = plain->step().loss;
  }
  EXPECT_EQ(la, lb);
  EXPECT_EQ(all_weights(*a), all_weights(*b));
  EXPECT_NE(la, lp);
  // Evaluation (inference) applies no dropout: greedy decoding twice gives the same outputs.
  EXPECT_EQ(a->evaluate(50).outputs, a->evaluate(50).outputs);
}

TEST(Train, TwoThreadShardsMatchOneThread) {
  TrainOptions o = tiny_copy(6);
  o.steps = 5;
  auto one = Trainer::create(o);
  o.threads = 2;
  auto two = Trainer::create(o);
  for (int i = 0; i < 5; ++i) {
    const StepStats a = one->step(), b = two->step();
    EXPECT_NEAR(a.loss, b.loss, 1e-4);
    EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-3 * a.grad_norm);
  }
}

TEST(Train, MetricsHaveTheDocumentedLayout) {
  TrainOptions o = tiny_copy(7);
  o.steps = 20;
  o.eval_every = 10;
  o.probe_every = 10;
  auto t = Trainer::create(o);
  while (!t->finished()) t->step();
  t->final_evaluation(1.0);
  const auto& m = t->metrics();
  EXPECT_EQ(m["format"], "stepformer.metrics/1");
  EXPECT_EQ(m["steps"]["step"].size(), 20u);
  EXPECT_EQ(m["steps"]["loss"].size(), 20u);
  EXPECT_EQ(m["steps"]["lr"][0].get<double>(), 3e-3);
  ASSERT_EQ(m["steps"]["grad_norm_group"].size(), 20u);
  EXPECT_EQ(m["steps"]["grad_norm_group"][0].size(), m["groups"].size());
  EXPECT_EQ(m["steps"]["grad_norm_layer"][0].size(), m["layers"].size());
  EXPECT_EQ(m["layers"], (nlohmann::json{"encoder.layers.0", "decoder.layers.0"}));
  EXPECT_EQ(m["probes"]["step"], (nlohmann::json{1, 10, 20}));
  EXPECT_EQ(m["probes"]["streams"].size(), 4u);  // encoder.embed, encoder.layers.0, decoder.embed, decoder.layers.0
  EXPECT_EQ(m["probes"]["attention"].size(), 3u);
  EXPECT_EQ(m["probes"]["attention_entropy"][0][0].size(), 2u);  // per head
  EXPECT_EQ(m["evals"]["step"], (nlohmann::json{10, 20}));
  EXPECT_EQ(m["final"]["examples"], 200);
  // Group norms combine to the total norm.
  double sq = 0;
  for (const auto& g : m["steps"]["grad_norm_group"][3]) sq += g.get<double>() * g.get<double>();
  EXPECT_NEAR(std::sqrt(sq), m["steps"]["grad_norm"][3].get<double>(), 1e-3 * m["steps"]["grad_norm"][3].get<double>());
}

// A step counted by phase (base/phase_timer.h) is the same step as one not counted, and every
// kind of product and the phases around them are counted, on one thread and on two.
TEST(PhaseTimer, CountedTrainingStepsEqualUncountedOnes) {
  for (int threads : {1, 2}) {
    TrainOptions o = tiny_copy(3);
    o.batch = 8;
    o.threads = threads;
    auto plain = Trainer::create(o);
    auto counted = Trainer::create(o);
    ASSERT_TRUE(plain && counted);
    std::vector<StepStats> off;
    for (int i = 0; i < 3; ++i) off.push_back(plain->step());
    start_phases();
    for (int i = 0; i < 3; ++i) {
      const StepStats b = counted->step();
      EXPECT_EQ(off[static_cast<size_t>(i)].loss, b.loss);
      EXPECT_EQ(off[static_cast<size_t>(i)].grad_norm, b.grad_norm);
    }
    stop_phases();
    const PhaseTotals t = phase_totals();
    for (Phase p : {Phase::Rest, Phase::ProjectionForward, Phase::HeadsForward, Phase::InputGradient,
                    Phase::WeightGradient, Phase::HeadsBackward, Phase::Transpose, Phase::Softmax,
                    Phase::SoftmaxBackward, Phase::LayerNorm, Phase::LayerNormBackward, Phase::BiasGradient,
                    Phase::Loss, Phase::Embedding, Phase::RecordingCopy, Phase::Adam, Phase::Batch})
      EXPECT_GT(t.entries[static_cast<size_t>(p)], 0u) << phase_name(p) << ", " << threads << " thread(s)";
    EXPECT_EQ(t.entries[static_cast<size_t>(Phase::Loss)], static_cast<uint64_t>(3 * threads));  // one per shard
  }
}

TEST(Optimiser, AdamFollowsTorchFormula) {
  // One scalar parameter (the generator bias of a tiny model), two steps by hand.
  TrainOptions o = tiny_copy();
  auto task = make_task("copy", o.task_options);
  const Config c = model_config(o, *task);
  Weights p, g;
  allocate(p, c);
  allocate(g, c);
  zero_grads(p, c);
  zero_grads(g, c);
  Adam adam;
  adam.init(c);
  double ref_p = 0, m = 0, v = 0;
  for (int t = 1; t <= 2; ++t) {
    const float grad = t == 1 ? 0.5f : -0.25f;
    g.generator.bias(0) = grad;
    adam.step(p, {{&g}}, c, 0.01);
    m = 0.9 * m + 0.1 * grad;
    v = 0.98 * v + 0.02 * grad * grad;
    ref_p -= 0.01 * (m / (1 - std::pow(0.9, t))) / (std::sqrt(v / (1 - std::pow(0.98, t))) + 1e-9);
    EXPECT_NEAR(p.generator.bias(0), ref_p, 1e-6);
    EXPECT_EQ(p.generator.bias(1), 0.0f);  // zero grad, zero moments: no move
  }
}

// The update reads the shards' gradients and sums them as it goes: the same bits as summing them
// first, in shard order, and updating by the sum; its squares are the sum's, before the scale; a
// scale (a clip) updates as the scaled gradient would. It leaves the shards' gradients zero.
TEST(Optimiser, AdamOverShardsEqualsAdamOverTheirSum) {
  TrainOptions o = tiny_copy();
  auto task = make_task("copy", o.task_options);
  const Config c = model_config(o, *task);
  // Three shards' gradients, uneven in magnitude (the sum's rounding shows); `sum` their sum in
  // shard order, `scaled` a quarter of it. Filled afresh before every step, which clears them.
  Weights g0, g1, g2, sum, scaled;
  for (Weights* w : {&g0, &g1, &g2, &sum, &scaled}) allocate(*w, c);
  double want_squares = 0;
  auto fill = [&] {
    std::vector<ParamRef> t0 = param_table(g0, c), t1 = param_table(g1, c), t2 = param_table(g2, c),
                          ts = param_table(sum, c), tc = param_table(scaled, c);
    want_squares = 0;
    for (size_t i = 0; i < t0.size(); ++i)
      for (int64_t j = 0; j < t0[i].numel(); ++j) {
        t0[i].data[j] = std::sin(0.37f * static_cast<float>(j + i));
        t1[i].data[j] = 1e-3f * std::cos(0.11f * static_cast<float>(j));
        t2[i].data[j] = 7.0f * std::sin(0.05f * static_cast<float>(j + 3 * i));
        ts[i].data[j] = (t0[i].data[j] + t1[i].data[j]) + t2[i].data[j];
        tc[i].data[j] = ts[i].data[j] * 0.25f;
        want_squares += static_cast<double>(ts[i].data[j]) * ts[i].data[j];
      }
  };
  auto run = [&](const GradientSum& g, std::vector<double>* squares, int threads) {
    Weights p;
    allocate(p, c);
    Adam adam;
    adam.init(c);
    for (int step = 0; step < 2; ++step) {
      fill();
      *squares = adam.step(p, g, c, 1e-2, threads);
    }
    std::vector<float> all;
    for (const Weights* w : {&p, &adam.m, &adam.v})
      for (const ParamRef& r : param_table(*w, c)) all.insert(all.end(), r.data, r.data + r.numel());
    return all;
  };
  auto zero = [&](Weights& w) {
    for (const ParamRef& r : param_table(w, c))
      if (!std::all_of(r.data, r.data + r.numel(), [](float x) { return x == 0.0f; })) return false;
    return true;
  };
  std::vector<double> sq_shards, sq_sum, sq_scaled, sq_pre;
  const std::vector<float> by_shards = run({{&g0, &g1, &g2}}, &sq_shards, 2);
  EXPECT_TRUE(zero(g0) && zero(g1) && zero(g2));
  const std::vector<float> by_sum = run({{&sum}}, &sq_sum, 1);
  EXPECT_TRUE(zero(sum));
  EXPECT_TRUE(by_shards == by_sum);
  EXPECT_TRUE(sq_shards == sq_sum);
  fill();
  EXPECT_TRUE(squared_norms({{&g0, &g1, &g2}}, c, 2) == sq_sum);
  EXPECT_FALSE(zero(g0));  // measuring alone leaves them
  double total = 0;
  for (double v : sq_sum) total += v;
  EXPECT_NEAR(total, want_squares, 1e-5 * want_squares);
  // Scaled by a clip's factor: as if the scaled gradient were the one given; squares unscaled.
  EXPECT_TRUE(run({{&sum}, 0.25f}, &sq_scaled, 1) == run({{&scaled}}, &sq_pre, 1));
  EXPECT_TRUE(sq_scaled == sq_sum);
  EXPECT_FALSE(by_sum == run({{&scaled}}, &sq_pre, 1));

  // When the next backward writes over the matrices, the update leaves them and clears the rest,
  // and updates by the same numbers.
  GradientSum keep{{&g0, &g1, &g2}};
  keep.matrices_overwritten = true;
  std::vector<double> sq_keep;
  EXPECT_TRUE(run(keep, &sq_keep, 2) == by_shards);
  EXPECT_TRUE(sq_keep == sq_shards);
  const std::vector<ParamRef> t1 = param_table(g1, c);
  int matrices = 0;
  for (size_t i = 0; i < t1.size(); ++i) {
    const bool kept = t1[i].kind == ParamRef::Matrix;
    matrices += kept;
    for (int64_t j = 0; j < t1[i].numel(); ++j)
      ASSERT_EQ(t1[i].data[j], kept ? 1e-3f * std::cos(0.11f * static_cast<float>(j)) : 0.0f) << t1[i].name;
  }
  EXPECT_GT(matrices, 10);
}

TEST(Optimiser, Schedules) {
  Schedule s;
  s.kind = Schedule::Warmup;
  s.d_model = 512;
  s.warmup = 4000;
  s.factor = 1.0;
  // Vaswani et al.: linear warm-up to the peak at step = warmup, then ∝ step^−0.5.
  EXPECT_NEAR(s.at(1), 1.0 / std::sqrt(512.0) / std::pow(4000.0, 1.5), 1e-12);
  EXPECT_NEAR(s.at(4000), 1.0 / std::sqrt(512.0) / std::sqrt(4000.0), 1e-9);
  EXPECT_LT(s.at(3999), s.at(4000));
  EXPECT_LT(s.at(4001), s.at(4000));
  EXPECT_NEAR(s.at(16000), s.at(4000) / 2, 1e-9);
  s.kind = Schedule::Constant;
  s.rate = 1e-3;
  EXPECT_EQ(s.at(1), 1e-3);
  EXPECT_EQ(s.at(100000), 1e-3);
  // Cool-down: linear to 0 over the last 100 of 1,000 steps.
  s.total = 1000;
  s.cooldown = 100;
  EXPECT_EQ(s.at(900), 1e-3);
  EXPECT_NEAR(s.at(901), 1e-3 * 100 / 101, 1e-12);
  EXPECT_NEAR(s.at(1000), 1e-3 / 101, 1e-12);
  EXPECT_LT(s.at(950), s.at(940));
}

TEST(Optimiser, GradientClippingCapsTheNorm) {
  TrainOptions o = tiny_copy(8);
  o.steps = 3;
  o.clip = 1e-3f;  // far below the initial norm
  o.schedule.rate = 1.0;
  auto t = Trainer::create(o);
  const std::vector<float> before = all_weights(*t);
  const StepStats s = t->step();
  EXPECT_GT(s.grad_norm, 1e-3);
  // Adam normalises the step size, so check the update is still finite and bounded by lr.
  const std::vector<float> after = all_weights(*t);
  float max_move = 0;
  for (size_t i = 0; i < before.size(); ++i) max_move = std::max(max_move, std::fabs(after[i] - before[i]));
  EXPECT_LE(max_move, 1.0f + 1e-3f);
  EXPECT_TRUE(std::isfinite(max_move));
}

TEST(Loss, LabelSmoothingFormulaAndIgnoredPadding) {
  Mat logits(3, 4);
  logits << 1, 2, 3, 4, 0, 0, 0, 0, 5, -1, 2, 0;
  const std::vector<int> y{3, 0, 1};  // 0 is <pad>
  Mat d;
  const LossResult r = cross_entropy(logits, y, 0, 0.1f, &d);
  auto row_loss = [&](int i, int yi) {
    const double lse = std::log(logits.row(i).array().exp().sum());
    const double nll = lse - logits(i, yi);
    const double smooth = lse - logits.row(i).sum() / 4.0;
    return 0.9 * nll + 0.1 * smooth;
  };
  EXPECT_EQ(r.count, 2);
  EXPECT_NEAR(r.loss, (row_loss(0, 3) + row_loss(2, 1)) / 2, 1e-6);
  EXPECT_EQ(d.row(1).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_NEAR(d.row(0).sum(), 0.0, 1e-6);  // softmax gradient rows sum to 0
}

// The shipped copy models (assets/models) decode held-out inputs exactly.
TEST(ShippedModels, CopyModelsReproduceHeldOutInputs) {
  for (const char* name : {"copy-preln", "copy-postln"}) {
    auto m = load_model(test::source_path(std::string("assets/models/") + name + ".safetensors"));
    ASSERT_TRUE(m.ok()) << m.error();
    auto task = make_task("copy");
    const auto val = task->sample_many(kValidationSeed, 200, Split::Validation);
    const EvalResult r = evaluate(*m, val);
    EXPECT_GE(r.exact_match(), 0.99) << name;
    // One example by hand: the output is the input.
    const std::vector<int> in = to_ids(m->config.src_vocab, {"3", "1", "4", "1", "5", "9", "2", "6"});
    const auto out = greedy_decode_batch(*m, {in}, 12);
    EXPECT_EQ(m->config.tgt_vocab.detokenize(out[0]), "3 1 4 1 5 9 2 6") << name;
  }
}

// Every shipped model: exact match on 300 held-out examples (the bar: 99 %, add and dates
// 97 %; measured on 1,000 in assets/models/README.md), and the README's example input.
TEST(ShippedModels, EveryModelSolvesItsTask) {
  struct Case {
    const char* task;
    const char* input;
    const char* output;
    double bar;
  };
  const Case cases[] = {
      {"copy", "3 1 4 1 5 9 2 6", "3 1 4 1 5 9 2 6", 0.99},  {"reverse", "3 1 4 1 5 9 2 6", "6 2 9 5 1 4 1 3", 0.99},
      {"sort", "3 1 4 1 5 9 2 6", "1 1 2 3 4 5 6 9", 0.99},  {"add", "3 4 7 + 5 8", "4 0 5", 0.97},
      {"dates", "Saturday 21 Nov 2026", "2026-11-21", 0.97}, {"copy-lm", "3 1 4 1 5 =", "3 1 4 1 5", 0.99}};
  for (const Case& c : cases) {
    for (const char* norm : {"pre", "post"}) {
      const std::string name = std::string(c.task) + "-" + norm + "ln";
      auto m = load_model(test::source_path("assets/models/" + name + ".safetensors"));
      ASSERT_TRUE(m.ok()) << m.error();
      auto task = make_task(c.task);
      const EvalResult r = evaluate(*m, task->sample_many(kValidationSeed, 300, Split::Validation));
      EXPECT_GE(r.exact_match(), c.bar - 0.01) << name;  // 300 examples: allow one more point of noise
      const Vocab& in_vocab = m->config.has_encoder() ? m->config.src_vocab : m->config.tgt_vocab;
      const auto out = greedy_decode_batch(*m, {in_vocab.tokenize(c.input).ids}, 16);
      EXPECT_EQ(m->config.tgt_vocab.detokenize(out[0]), c.output) << name << " on '" << c.input << "'";
    }
  }
}

// The induction models (attention-only, 2 layers): they continue a repeat (held-out exact match on
// 300 examples, and one by hand), and the head detector finds their induction heads in layer 1 and
// a previous-token head in layer 0 (the circuit of Olsson et al. 2022), well above layer 0's best
// induction score, on TransformerLens' probe:
// <s> r r with r = 10 random letters. On that probe a perfect induction head scores 10/21 ≈ 0.48
// (the rows of <s> and of the first copy have no earlier copy to look at), a perfect previous-token
// head 20/21.
TEST(ShippedModels, InductionModelsHaveInductionHeads) {
  for (const char* norm : {"pre", "post"}) {
    const std::string name = std::string("induction-") + norm + "ln";
    auto m = load_model(test::source_path("assets/models/" + name + ".safetensors"));
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_FALSE(m->config.has_ffn()) << name << ": attention-only";
    EXPECT_EQ(m->config.n_decoder_layers, 2) << name;
    const EvalResult r = evaluate(*m, make_task("induction")->sample_many(kValidationSeed, 300, Split::Validation));
    EXPECT_GE(r.exact_match(), 0.98) << name;
    const auto out = greedy_decode_batch(*m, {m->config.tgt_vocab.tokenize("k d q a w m z k").ids}, 12);
    EXPECT_EQ(m->config.tgt_vocab.detokenize(out[0]), "d q a w m z") << name;
    for (uint64_t seed : {1, 2, 3}) {
      auto d = detect_heads(*m, 10, seed);
      ASSERT_TRUE(d.ok()) << d.error();
      ASSERT_EQ(d->stacks.size(), 1u);
      const auto& score = d->stacks[0].score;
      const auto& induction = score[static_cast<size_t>(HeadPattern::Induction)];
      const auto& previous = score[static_cast<size_t>(HeadPattern::PreviousToken)];
      const double best_l1 = *std::max_element(induction[1].begin(), induction[1].end());
      const double best_l0 = *std::max_element(induction[0].begin(), induction[0].end());
      const double prev_l0 = *std::max_element(previous[0].begin(), previous[0].end());
      EXPECT_GE(best_l1, 0.35) << name << " seed " << seed << ": a layer-1 induction head";
      EXPECT_GE(best_l1 - best_l0, 0.1) << name << " seed " << seed << ": layer 0 has nothing to compose with";
      EXPECT_GE(prev_l0, 0.25) << name << " seed " << seed << ": a layer-0 previous-token head";
    }
  }
}

// The word-level sentence models: held-out exact match (en-de) and probe accuracy (en-lm) on 300
// examples (bar 95 %, measured on 1,000 in assets/models/README.md), and hand-written inputs: a
// subordinate clause whose German verb goes last, agreement across a distractor, a pronoun.
TEST(ShippedModels, SentenceModelsReachTheirHeldOutFigures) {
  for (const char* norm : {"pre", "post"}) {
    const std::string de_name = std::string("en-de-") + norm + "ln", lm_name = std::string("en-lm-") + norm + "ln";
    auto de = load_model(test::source_path("assets/models/" + de_name + ".safetensors"));
    auto lm = load_model(test::source_path("assets/models/" + lm_name + ".safetensors"));
    ASSERT_TRUE(de.ok()) << de.error();
    ASSERT_TRUE(lm.ok()) << lm.error();
    const EvalResult rd = evaluate(*de, make_task("en-de")->sample_many(kValidationSeed, 300, Split::Validation));
    EXPECT_EQ(rd.metric, "exact match");
    EXPECT_GE(rd.exact_match(), 0.95) << de_name;
    const EvalResult rl = evaluate(*lm, make_task("en-lm")->sample_many(kValidationSeed, 300, Split::Validation));
    EXPECT_EQ(rl.metric, "probe accuracy");
    EXPECT_EQ(rl.examples, 300);  // one probe per sentence
    EXPECT_GE(rl.exact_match(), 0.95) << lm_name;
    for (const auto& [kind, counts] : rl.by_kind) EXPECT_GE(counts[0], 0.95 * counts[1]) << lm_name << " " << kind;

    auto translate = [&](const std::string& en) {
      const auto out = greedy_decode_batch(*de, {de->config.src_vocab.tokenize(en).ids}, 20);
      return de->config.tgt_vocab.detokenize(out[0]);
    };
    EXPECT_EQ(translate("the man is sad because the dog sees the cats"),
              "der Mann ist traurig , weil der Hund die Katzen sieht")
        << de_name;
    EXPECT_EQ(translate("today the dog sleeps"), "heute schläft der Hund") << de_name;
    auto next_word = [&](const std::string& prompt) {
      const auto out = greedy_decode_batch(*lm, {lm->config.tgt_vocab.tokenize(prompt).ids}, 1);
      return out[0].empty() ? std::string("</s>") : lm->config.tgt_vocab.token(out[0][0]);
    };
    const std::string verb = next_word("the keys to the cabinet");  // things only "are" (or "were")
    EXPECT_TRUE(verb == "are" || verb == "were") << lm_name << ": the keys to the cabinet " << verb;
    const std::string place = next_word("the woman didn't cross the street because it was too");
    EXPECT_TRUE(place == "wide" || place == "long" || place == "busy") << lm_name << ": " << place;
    const std::string person = next_word("the woman didn't cross the street because she was too");
    EXPECT_TRUE(person == "tired" || person == "weak" || person == "lazy" || person == "scared")
        << lm_name << ": " << person;
  }
}

}  // namespace
}  // namespace sf
