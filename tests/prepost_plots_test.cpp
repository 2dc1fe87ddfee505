// The data behind the pre-LN vs post-LN plots (core/analysis/prepost_plots.h): the gradient norms at
// initialisation equal what `stepformer gradnorms` prints; curve and grid builders; CSV export.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "analysis/head_detector.h"
#include "analysis/prepost_plots.h"
#include "io/checkpoint.h"
#include "test_util.h"

namespace sf {
namespace {

struct CliRow {
  int layer;
  double enc_grad, dec_grad, enc_stream, dec_stream;
};

// Runs the command and parses its table.
std::vector<CliRow> run_gradnorms(const std::string& args) {
  const std::string out = test::temp_path("gradnorms.txt");
  const int rc = std::system((std::string(STEPFORMER_BINARY) + " gradnorms " + args + " > " + out).c_str());
  EXPECT_EQ(rc, 0);
  std::ifstream in(out);
  std::string line;
  std::vector<CliRow> rows;
  while (std::getline(in, line)) {
    CliRow r;
    if (std::sscanf(line.c_str(), "%d %lf %lf %lf %lf", &r.layer, &r.enc_grad, &r.dec_grad, &r.enc_stream,
                    &r.dec_stream) == 5)
      rows.push_back(r);
  }
  return rows;
}

// The plotted series are the command's numbers (it prints 5 decimals for gradients, 3 for norms).
TEST(PrePostPlots, GradNormPlotEqualsTheCommand) {
  GradNormOptions o;
  o.layers = 3;
  o.seeds = 2;
  o.d_model = 16;
  o.n_heads = 2;
  o.d_ff = 64;
  o.batch = 4;
  const GradNormPair g = gradnorms_pair(o);
  const PlotData grad = gradnorm_plot(g), stream = stream_norm_plot(g);
  ASSERT_EQ(grad.series.size(), 4u);
  for (const char* norm : {"pre", "post"}) {
    const auto rows =
        run_gradnorms(std::string("--layers 3 --seeds 2 --d-model 16 --heads 2 --d-ff 64 --batch 4 --norm ") + norm);
    ASSERT_EQ(rows.size(), 3u) << norm;
    const size_t s0 = std::string(norm) == "pre" ? 0 : 2;  // series: <norm> encoder, <norm> decoder
    EXPECT_EQ(grad.series[s0].name, std::string(norm) + "-LN encoder");
    for (size_t l = 0; l < 3; ++l) {
      EXPECT_EQ(grad.series[s0].x[l], rows[l].layer);
      EXPECT_NEAR(grad.series[s0].y[l], rows[l].enc_grad, 0.5e-5) << norm << " layer " << l;
      EXPECT_NEAR(grad.series[s0 + 1].y[l], rows[l].dec_grad, 0.5e-5) << norm << " layer " << l;
      EXPECT_NEAR(stream.series[s0].y[l], rows[l].enc_stream, 0.5e-3);
      EXPECT_NEAR(stream.series[s0 + 1].y[l], rows[l].dec_stream, 0.5e-3);
    }
  }
  // And the CSV export holds the same numbers.
  const std::string csv = plot_csv(grad);
  EXPECT_EQ(csv.rfind("series,\"layer\",\"|grad W2|\"\n", 0), 0u) << csv.substr(0, 60);
  char line[128];
  std::snprintf(line, sizeof line, "\"post-LN decoder\",2,%.9g\n", grad.series[3].y[2]);
  EXPECT_NE(csv.find(line), std::string::npos) << csv;
}

RunCurves fake_run(NormPlacement n, const std::string& schedule, int steps) {
  RunCurves r;
  r.label = n == NormPlacement::Pre ? "pre" : "post";
  r.norm = n;
  r.schedule = schedule;
  r.layers = {"encoder.layers.0", "decoder.layers.0"};
  for (int s = 1; s <= steps; ++s) {
    r.step.push_back(s);
    r.loss.push_back(3.0 / s);
    r.lr.push_back(1e-3);
    r.grad_norm.push_back(1);
    r.grad_norm_layer.push_back({static_cast<double>(s), 10.0 * s});
  }
  return r;
}

TEST(PrePostPlots, CurvesAndGrid) {
  const std::vector<RunCurves> runs = {fake_run(NormPlacement::Pre, "warmup", 10),
                                       fake_run(NormPlacement::Post, "constant", 10)};
  const PlotData loss = curve_plot(runs, Curve::Loss);
  ASSERT_EQ(loss.series.size(), 2u);
  EXPECT_TRUE(loss.log_y);
  EXPECT_EQ(loss.series[1].y[1], 1.5);
  EXPECT_TRUE(loss.series[1].dashed);  // no warm-up: dashed
  EXPECT_FALSE(loss.series[0].dashed);

  const GridData g = layer_grad_grid(runs[0], 4);  // 10 steps into 4 columns of 2, 3, 2, 3 steps
  ASSERT_EQ(g.rows.size(), 2u);
  ASSERT_EQ(g.cols.size(), 4u);
  EXPECT_EQ(g.cols[0], 2);
  EXPECT_EQ(g.cols[3], 10);
  EXPECT_DOUBLE_EQ(g.at(0, 0), 1.5);   // mean of steps 1, 2
  EXPECT_DOUBLE_EQ(g.at(1, 3), 90.0);  // mean of 10·(8, 9, 10)
  const GridData full = layer_grad_grid(runs[0], 200);
  EXPECT_EQ(full.cols.size(), 10u);
  const std::string csv = grid_csv(g);
  EXPECT_NE(csv.find("\"decoder.layers.0\",10,90\n"), std::string::npos) << csv;

  const PlotData prof = layer_grad_profile(runs, 1);
  EXPECT_EQ(prof.x_categories, (std::vector<std::string>{"enc 0", "dec 0"}));
  ASSERT_EQ(prof.series[0].y.size(), 2u);
  EXPECT_EQ(prof.series[0].y[1], 10);
  EXPECT_NE(plot_csv(prof).find("\"pre\",\"dec 0\",10\n"), std::string::npos) << plot_csv(prof);
}

// Head scores over training: what record_head_scores writes is what the metrics reader returns and
// what the plot draws (the shipped induction model's metrics, and a fresh recording).
TEST(PrePostPlots, HeadScoresOverTraining) {
  auto r = curves_from_metrics_file(test::source_path("assets/models/induction-preln.metrics.json"), "pre");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(has_head_scores(*r));
  EXPECT_EQ(r->heads,
            (std::vector<std::string>{"L0 H0", "L0 H1", "L0 H2", "L0 H3", "L1 H0", "L1 H1", "L1 H2", "L1 H3"}));
  EXPECT_EQ(r->head_step.front(), 1);
  EXPECT_EQ(r->head_step[1], 50);
  ASSERT_EQ(r->induction.size(), r->head_step.size());
  const PlotData p = head_score_plot(*r, HeadCurve::Induction);
  ASSERT_EQ(p.series.size(), 8u);
  EXPECT_EQ(p.series[4].name, "L1 H0");
  EXPECT_EQ(p.series[4].x, r->head_step);
  EXPECT_EQ(p.series[4].y.back(), r->induction.back()[4]);
  EXPECT_EQ(p.y_max, 1);
  // The phase change: layer 1's best induction score is low at step 1 and high at the end.
  const auto best_l1 = [&](size_t i) {
    return std::max({r->induction[i][4], r->induction[i][5], r->induction[i][6], r->induction[i][7]});
  };
  EXPECT_LT(best_l1(0), 0.1);
  EXPECT_GT(best_l1(r->induction.size() - 1), 0.4);
  EXPECT_EQ(head_score_plot(*r, HeadCurve::PreviousToken).series[1].y.back(), r->previous_token.back()[1]);

  // A fresh recording of the shipped model, twice: two steps, one list per layer of one score per head.
  auto m = load_model(test::source_path("assets/models/induction-preln.safetensors"));
  ASSERT_TRUE(m.ok()) << m.error();
  nlohmann::json metrics = {{"format", "stepformer.metrics/1"}, {"steps", nlohmann::json::object()}};
  record_head_scores(metrics, 7, *m);
  record_head_scores(metrics, 9, *m);
  ASSERT_TRUE(metrics.contains("heads"));
  EXPECT_EQ(metrics["heads"]["step"], nlohmann::json({7, 9}));
  ASSERT_EQ(metrics["heads"]["induction"].size(), 2u);
  ASSERT_EQ(metrics["heads"]["induction"][1].size(), 2u);     // layers
  ASSERT_EQ(metrics["heads"]["induction"][1][1].size(), 4u);  // heads
  auto d = detect_heads(*m, kHeadProbeLength, kHeadProbeSeed);
  ASSERT_TRUE(d.ok());
  EXPECT_NEAR(metrics["heads"]["induction"][1][1][0].get<double>(),
              d->stacks[0].score[static_cast<size_t>(HeadPattern::Induction)][1][0], 1e-4);
  auto back = curves_from_metrics(metrics, "fresh");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->head_step, (std::vector<double>{7, 9}));
  EXPECT_EQ(back->heads.size(), 8u);
}

TEST(PrePostPlots, CsvIsWrittenAtomically) {
  PlotData p;
  p.x_label = "step";
  p.y_label = "loss";
  p.series = {{"a \"quoted\" run", {1, 2}, {0.5, std::nan("")}}};
  const std::string path = test::temp_path("plot.csv");
  ASSERT_TRUE(write_plot_csv(path, p).ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "series,\"step\",\"loss\"\n\"a \"\"quoted\"\" run\",1,0.5\n\"a \"\"quoted\"\" run\",2,nan\n");
  EXPECT_FALSE(write_plot_csv("/no/such/dir/plot.csv", p).ok());
}

}  // namespace
}  // namespace sf
