// The explorer's training job (core/train/train_job.h): pre/post options, the same curves as a Trainer
// run alone, pause/resume/cancel, saving, and metrics files read back.
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "io/checkpoint.h"
#include "test_util.h"
#include "train/train_job.h"

namespace sf {
namespace {

PairOptions tiny(int64_t steps) {
  PairOptions p;
  p.task = "copy";
  p.depth = 1;
  p.d_model = 16;
  p.n_heads = 2;
  p.batch = 4;
  p.steps = steps;
  p.lr = 2e-3;
  p.warmup = true;
  p.warmup_steps = 4;
  p.eval_examples = 8;
  p.probe_every = 2;
  return p;
}

TEST(TrainJob, PairOptionsPeakAtTheChosenRate) {
  PairOptions p = tiny(10);
  p.d_model = 64;
  p.lr = 1e-3;
  p.warmup_steps = 100;
  const auto specs = pair_specs(p);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].options.norm, NormPlacement::Pre);
  EXPECT_EQ(specs[1].options.norm, NormPlacement::Post);
  const Schedule& s = specs[0].options.schedule;
  EXPECT_NEAR(s.at(100), 1e-3, 1e-12);  // the peak
  EXPECT_LT(s.at(50), s.at(100));
  EXPECT_LT(s.at(400), s.at(100));
  p.warmup = false;
  const auto flat = pair_specs(p);
  EXPECT_EQ(flat[1].options.schedule.kind, Schedule::Constant);
  EXPECT_DOUBLE_EQ(flat[1].options.schedule.at(1), 1e-3);
  EXPECT_EQ(flat[1].label, "post-LN, no warm-up, lr 0.001");
  EXPECT_EQ(specs[0].label, "pre-LN, warm-up 100, lr 0.001");
}

// The job's curves are exactly those of each Trainer run on its own.
TEST(TrainJob, SameCurvesAsTrainersAlone) {
  const auto specs = pair_specs(tiny(6));
  auto job = TrainJob::start(specs);
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_TRUE((*job)->wait(60));
  const auto p = (*job)->progress();
  ASSERT_EQ(p->state, TrainProgress::Finished);
  EXPECT_EQ(p->steps_done, 12);
  ASSERT_EQ(p->runs.size(), 2u);
  ASSERT_EQ(p->models.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    auto t = Trainer::create(specs[i].options);
    ASSERT_TRUE(t.ok());
    std::vector<double> loss;
    while (!t->finished()) loss.push_back(t->step().loss);
    const RunCurves& r = p->runs[i];
    ASSERT_EQ(r.loss.size(), 6u);
    for (size_t k = 0; k < loss.size(); ++k) EXPECT_NEAR(r.loss[k], loss[k], 1e-4 * std::fabs(loss[k])) << k;
    EXPECT_EQ(r.step.front(), 1);
    EXPECT_EQ(r.layers.size(), 2u);  // encoder.layers.0, decoder.layers.0
    ASSERT_EQ(r.grad_norm_layer.size(), 6u);
    EXPECT_EQ(r.grad_norm_layer[0].size(), 2u);
    EXPECT_GT(r.grad_norm_layer[0][1], 0);
    EXPECT_EQ(r.probe_step.size(), 4u);  // steps 1, 2, 4, 6
    EXPECT_GE(r.final_exact_match, 0);
    // The trained weights are the job's, not a fresh initialisation.
    EXPECT_TRUE(p->models[i]->weights.generator.weight.isApprox(t->model().weights.generator.weight));
  }
}

TEST(TrainJob, PauseResumeCancel) {
  auto job = TrainJob::start(pair_specs(tiny(100000)));
  ASSERT_TRUE(job.ok()) << job.error();
  TrainJob& j = **job;
  const auto until = [&](TrainProgress::State s) {
    for (int i = 0; i < 500; ++i) {
      if (j.progress()->state == s) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(until(TrainProgress::Running));
  j.pause();
  ASSERT_TRUE(until(TrainProgress::Paused));
  const int64_t at = j.steps_done();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(j.steps_done(), at);                                                    // nothing moves while paused
  EXPECT_EQ(j.progress()->models.size(), 2u);                                       // the models so far can be opened
  EXPECT_EQ(j.progress()->runs[0].step.size(), j.progress()->runs[1].step.size());  // in step with each other
  j.resume();
  ASSERT_TRUE(until(TrainProgress::Running));
  for (int i = 0; i < 300 && j.steps_done() < at + 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(j.steps_done(), at + 4);
  j.cancel();
  ASSERT_TRUE(j.wait(30));
  EXPECT_EQ(j.progress()->state, TrainProgress::Cancelled);
  EXPECT_LT(j.steps_done(), 200000);
  EXPECT_EQ(j.progress()->models.size(), 2u);
}

TEST(TrainJob, SavesModelsAndMetrics) {
  auto job = TrainJob::start(pair_specs(tiny(4)));
  ASSERT_TRUE(job.ok());
  ASSERT_TRUE((*job)->wait(60));
  const std::string stem = test::temp_path("trained");
  (*job)->save(stem);
  for (int i = 0; i < 500 && (*job)->progress()->messages.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto p = (*job)->progress();
  ASSERT_FALSE(p->messages.empty());
  EXPECT_EQ(p->messages.back().rfind("saved ", 0), 0u) << p->messages.back();
  const auto paths = (*job)->save_paths(stem);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], stem + "-preln.safetensors");
  EXPECT_EQ(paths[1], stem + "-postln.safetensors");
  for (size_t i = 0; i < 2; ++i) {
    auto m = load_model(paths[i]);
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->config.norm, i == 0 ? NormPlacement::Pre : NormPlacement::Post);
    const std::string mp = paths[i].substr(0, paths[i].size() - 12) + ".metrics.json";
    auto c = curves_from_metrics_file(mp, "x");
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->loss, p->runs[i].loss);
    EXPECT_EQ(c->final_exact_match, p->runs[i].final_exact_match);
  }
}

TEST(TrainJob, MetricsErrorsNameTheProblem) {
  auto c = curves_from_metrics(nlohmann::json::parse(R"({"format": "other"})"), "x");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("stepformer.metrics/1"), std::string::npos) << c.error();
  auto f = curves_from_metrics_file(test::temp_path("no-such.metrics.json"), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().find("cannot open"), std::string::npos);
  std::ofstream(test::temp_path("bad.metrics.json")) << "{ not json";
  auto b = curves_from_metrics_file(test::temp_path("bad.metrics.json"), "x");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("not valid JSON"), std::string::npos);
}

TEST(TrainJob, BadOptionsAreRefused) {
  PairOptions p = tiny(4);
  p.d_model = 15;  // not a multiple of 2 heads
  auto job = TrainJob::start(pair_specs(p));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("pre-LN"), std::string::npos) << job.error();
  p = tiny(4);
  p.task = "no-such-task";
  EXPECT_FALSE(TrainJob::start(pair_specs(p)).ok());
}

// A live view reads only what was recorded since: step by step it ends with the same curves as
// one read of the whole document, including a step list one entry behind the other columns.
TEST(RunCurvesUpdate, GrowingDocumentGivesTheWholeRead) {
  nlohmann::json m = {{"format", "stepformer.metrics/1"},
                      {"task", "copy"},
                      {"norm", "post"},
                      {"layers", {"encoder.layers.0"}},
                      {"options", {{"schedule", "warmup"}, {"warmup", 2}, {"steps", 4}}},
                      {"steps",
                       {{"step", nlohmann::json::array()},
                        {"loss", nlohmann::json::array()},
                        {"accuracy", nlohmann::json::array()},
                        {"lr", nlohmann::json::array()},
                        {"grad_norm", nlohmann::json::array()},
                        {"grad_norm_layer", nlohmann::json::array()}}},
                      {"evals", {{"step", nlohmann::json::array()}, {"exact_match", nlohmann::json::array()}}},
                      {"probes",
                       {{"streams", {"encoder.embed"}},
                        {"step", nlohmann::json::array()},
                        {"residual_norm", nlohmann::json::array()}}}};
  RunCurves live;
  ASSERT_TRUE(update_curves(live, m).ok());
  for (int k = 1; k <= 4; ++k) {
    nlohmann::json& s = m["steps"];
    s["loss"].push_back(3.0 / k);
    s["accuracy"].push_back(0.2 * k);
    s["lr"].push_back(k == 2 ? 1e-3 : 5e-4);
    s["grad_norm"].push_back(1.5 * k);
    s["grad_norm_layer"].push_back({0.5 * k});
    if (k % 2 == 0) {
      m["evals"]["step"].push_back(k);
      m["evals"]["exact_match"].push_back(0.1 * k);
      m["probes"]["step"].push_back(k);
      m["probes"]["residual_norm"].push_back({2.0 * k});
    }
    ASSERT_TRUE(update_curves(live, m).ok());  // the step list not yet appended: row k is not read
    EXPECT_EQ(live.loss.size(), static_cast<size_t>(k - 1));
    s["step"].push_back(k);
    ASSERT_TRUE(update_curves(live, m).ok());
  }
  auto whole = curves_from_metrics(m, "");
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_EQ(live.step, whole->step);
  EXPECT_EQ(live.loss, whole->loss);
  EXPECT_EQ(live.accuracy, whole->accuracy);
  EXPECT_EQ(live.lr, whole->lr);
  EXPECT_EQ(live.grad_norm, whole->grad_norm);
  EXPECT_EQ(live.grad_norm_layer, whole->grad_norm_layer);
  EXPECT_EQ(live.eval_step, whole->eval_step);
  EXPECT_EQ(live.exact_match, whole->exact_match);
  EXPECT_EQ(live.probe_step, whole->probe_step);
  EXPECT_EQ(live.residual_norm, whole->residual_norm);
  EXPECT_EQ(live.streams, whole->streams);
  EXPECT_EQ(live.layers, whole->layers);
  EXPECT_EQ(live.peak_lr, 1e-3);
  EXPECT_EQ(whole->peak_lr, 1e-3);
  EXPECT_EQ(live.norm, NormPlacement::Post);
  EXPECT_EQ(live.warmup, 2);
  EXPECT_EQ(live.step, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(live.exact_match.size(), 2u);
}

}  // namespace
}  // namespace sf
