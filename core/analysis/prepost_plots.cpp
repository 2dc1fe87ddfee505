#include "analysis/prepost_plots.h"

#include <cmath>
#include <limits>

namespace sf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Colours (0xAABBGGRR): pre-LN blue family, post-LN orange family.
constexpr unsigned kPre = 0xFFE8A040u, kPreLight = 0xFFF5D090u, kPost = 0xFF3C8CF0u, kPostLight = 0xFF80C8FFu;

std::vector<double> iota_x(size_t n) {
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i);
  return x;
}

// A per-layer plot of the pair at initialisation: encoder (light, dashed) and decoder series of
// each placement, the given members of GradNormResult on the y axis.
PlotData pair_plot(const GradNormPair& g, std::vector<double> GradNormResult::*enc,
                   std::vector<double> GradNormResult::*dec) {
  PlotData p;
  p.x_label = "layer";
  p.integer_x = true;
  p.series = {{"pre-LN encoder", iota_x((g.pre.*enc).size()), g.pre.*enc, kPreLight, true},
              {"pre-LN decoder", iota_x((g.pre.*dec).size()), g.pre.*dec, kPre, false},
              {"post-LN encoder", iota_x((g.post.*enc).size()), g.post.*enc, kPostLight, true},
              {"post-LN decoder", iota_x((g.post.*dec).size()), g.post.*dec, kPost, false}};
  return p;
}

// One series per training run: the newest run of each placement in the strong colour, earlier
// ones lighter; constant-learning-rate runs dashed.
class RunStyle {
 public:
  explicit RunStyle(const std::vector<RunCurves>& runs) {
    for (const RunCurves& r : runs) (r.norm == NormPlacement::Pre ? pre_ : post_)++;
  }
  // Call once per run, in order.
  PlotSeries series(const RunCurves& r) {
    PlotSeries s;
    s.name = r.label;
    const bool is_pre = r.norm == NormPlacement::Pre;
    const bool newest = --(is_pre ? pre_ : post_) == 0;
    s.colour = is_pre ? (newest ? kPre : kPreLight) : (newest ? kPost : kPostLight);
    s.dashed = r.schedule == "constant";
    return s;
  }

 private:
  int pre_ = 0, post_ = 0;
};

}  // namespace

GradNormPair gradnorms_pair(GradNormOptions o) {
  GradNormPair g;
  g.options = o;
  o.norm = NormPlacement::Pre;
  g.pre = gradnorms_at_init(o);
  o.norm = NormPlacement::Post;
  g.post = gradnorms_at_init(o);
  return g;
}

PlotData gradnorm_plot(const GradNormPair& g) {
  PlotData p = pair_plot(g, &GradNormResult::encoder_ffn, &GradNormResult::decoder_ffn);
  p.title = "gradient norm of each layer's W² (ffn.fc2.weight) at initialisation, mean over " +
            std::to_string(g.options.seeds) + " seeds";
  p.y_label = "|grad W2|";
  return p;
}

PlotData stream_norm_plot(const GradNormPair& g) {
  PlotData p = pair_plot(g, &GradNormResult::encoder_stream, &GradNormResult::decoder_stream);
  p.title = "residual-stream norm leaving each layer at initialisation (mean over tokens and seeds)";
  p.y_label = "|x|";
  return p;
}

PlotData curve_plot(const std::vector<RunCurves>& runs, Curve which) {
  PlotData p;
  p.x_label = "step";
  p.integer_x = true;
  switch (which) {
    case Curve::Loss:
      p.title = "training loss (label-smoothed)", p.y_label = "loss", p.log_y = true;
      break;
    case Curve::LearningRate:
      p.title = "learning rate", p.y_label = "lr";
      break;
    case Curve::GradNorm:
      p.title = "gradient norm (all parameters, before clipping)", p.y_label = "|grad|", p.log_y = true;
      break;
    case Curve::ExactMatch:
      p.title = "exact match on held-out examples", p.y_label = "exact match", p.y_max = 1;
      break;
    case Curve::Accuracy:
      p.title = "token accuracy (teacher-forced, training batch)", p.y_label = "accuracy", p.y_max = 1;
      break;
  }
  RunStyle style(runs);
  for (const RunCurves& r : runs) {
    PlotSeries s = style.series(r);
    switch (which) {
      case Curve::Loss:
        s.x = r.step, s.y = r.loss;
        break;
      case Curve::LearningRate:
        s.x = r.step, s.y = r.lr;
        break;
      case Curve::GradNorm:
        s.x = r.step, s.y = r.grad_norm;
        break;
      case Curve::ExactMatch:
        s.x = r.eval_step, s.y = r.exact_match;
        break;
      case Curve::Accuracy:
        s.x = r.step, s.y = r.accuracy;
        break;
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

PlotData head_score_plot(const RunCurves& r, HeadCurve which) {
  PlotData p;
  const bool ind = which == HeadCurve::Induction;
  p.title = std::string(ind ? "induction" : "previous-token") + " score of each head · " + r.label;
  p.x_label = "step";
  p.y_label = ind ? "induction score" : "previous-token score";
  p.integer_x = true;
  p.y_min = 0, p.y_max = 1;
  const std::vector<std::vector<double>>& v = ind ? r.induction : r.previous_token;
  for (size_t k = 0; k < r.heads.size(); ++k) {
    PlotSeries s;
    s.name = r.heads[k];
    for (size_t i = 0; i < r.head_step.size() && i < v.size(); ++i) {
      s.x.push_back(r.head_step[i]);
      s.y.push_back(k < v[i].size() ? v[i][k] : std::numeric_limits<double>::quiet_NaN());
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

GridData layer_grad_grid(const RunCurves& r, int max_cols) {
  GridData g;
  g.title = "gradient norm per layer: " + r.label;
  g.row_label = "layer";
  g.col_label = "step";
  g.value_label = "|grad|";
  g.rows = r.layers;
  const size_t S = std::min(r.grad_norm_layer.size(), r.step.size()), L = r.layers.size();
  if (S == 0 || L == 0) return g;
  const size_t C = std::min(S, static_cast<size_t>(std::max(1, max_cols)));
  g.cols.resize(C);
  g.values.assign(L * C, kNaN);
  for (size_t c = 0; c < C; ++c) {
    const size_t s0 = c * S / C, s1 = (c + 1) * S / C;  // steps [s0, s1)
    g.cols[c] = r.step[s1 - 1];
    for (size_t l = 0; l < L; ++l) {
      double sum = 0;
      int n = 0;
      for (size_t s = s0; s < s1; ++s) {
        if (l >= r.grad_norm_layer[s].size()) continue;
        sum += r.grad_norm_layer[s][l];
        ++n;
      }
      g.values[l * C + c] = n ? sum / n : kNaN;
    }
  }
  return g;
}

PlotData layer_grad_profile(const std::vector<RunCurves>& runs, int step) {
  PlotData p;
  p.title = "gradient norm per layer at step " + std::to_string(step);
  p.x_label = "layer";
  p.y_label = "|grad|";
  p.log_y = true;
  if (!runs.empty()) {
    for (const std::string& l : runs[0].layers) {
      std::string s = l;
      for (const char* from : {"encoder.layers.", "decoder.layers."})
        if (s.rfind(from, 0) == 0)
          s = std::string(from[0] == 'e' ? "enc " : "dec ") + s.substr(std::string(from).size());
      p.x_categories.push_back(s);
    }
  }
  RunStyle style(runs);
  for (const RunCurves& r : runs) {
    PlotSeries s = style.series(r);
    for (size_t i = 0; i < r.step.size() && i < r.grad_norm_layer.size(); ++i) {
      if (static_cast<int>(r.step[i]) != step) continue;
      s.x = iota_x(r.grad_norm_layer[i].size());
      s.y = r.grad_norm_layer[i];
      break;
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

std::vector<std::string> layer_categories(const ModelStats& a, const ModelStats& b) {
  int enc = 0, dec = 0;
  for (const ModelStats* m : {&a, &b}) {
    for (const LayerStat& l : m->encoder) enc = std::max(enc, l.layer + 1);
    for (const LayerStat& l : m->decoder) dec = std::max(dec, l.layer + 1);
  }
  std::vector<std::string> out;
  for (int l = 0; l < enc; ++l) out.push_back("enc " + std::to_string(l));
  for (int l = 0; l < dec; ++l) out.push_back("dec " + std::to_string(l));
  return out;
}

PlotData layer_plot(const ModelStats& a, const ModelStats& b, const std::string& name_a, const std::string& name_b,
                    LayerMeasure m) {
  PlotData p;
  p.x_categories = layer_categories(a, b);
  p.x_label = "layer";
  switch (m) {
    case LayerMeasure::ResidualNorm:
      p.title = "residual-stream norm leaving each layer (mean over tokens)", p.y_label = "|x|";
      break;
    case LayerMeasure::LnMean:
      p.title = "LayerNorm input mean (mean over tokens and blocks)", p.y_label = "LN mean";
      break;
    case LayerMeasure::LnVar:
      p.title = "LayerNorm input variance (mean over tokens and blocks)", p.y_label = "LN variance";
      break;
    case LayerMeasure::Entropy:
      p.title = "self-attention entropy (mean over heads and queries)", p.y_label = "entropy (nats)";
      break;
  }
  int enc = 0;
  for (const std::string& c : p.x_categories)
    if (c.rfind("enc", 0) == 0) ++enc;
  const auto value = [&](const LayerStat& l) -> double {
    switch (m) {
      case LayerMeasure::ResidualNorm:
        return l.resid_norm();
      case LayerMeasure::LnMean:
      case LayerMeasure::LnVar: {
        double s = 0;
        for (const BlockStat& b : l.blocks) s += m == LayerMeasure::LnMean ? b.mean_ln_mean() : b.mean_ln_var();
        return l.blocks.empty() ? kNaN : s / static_cast<double>(l.blocks.size());
      }
      case LayerMeasure::Entropy: {
        const BlockStat* b = l.find(Block::SelfAttention);
        if (!b || b->entropy.empty()) return kNaN;
        double s = 0;
        for (double e : b->entropy) s += e;
        return s / static_cast<double>(b->entropy.size());
      }
    }
    return kNaN;
  };
  int i = 0;
  for (const ModelStats* ms : {&a, &b}) {
    PlotSeries s;
    s.name = (i == 0 ? "A: " : "B: ") + (i == 0 ? name_a : name_b);
    s.colour = i == 0 ? kPre : kPost;
    for (const LayerStat& l : ms->encoder) {
      s.x.push_back(l.layer);
      s.y.push_back(value(l));
    }
    for (const LayerStat& l : ms->decoder) {
      s.x.push_back(enc + l.layer);
      s.y.push_back(value(l));
    }
    p.series.push_back(std::move(s));
    ++i;
  }
  return p;
}

}  // namespace sf
