// prepost_plots.h — the data of every plot in the explorer's pre-LN vs post-LN views, built here
// (no GL) so that export writes exactly what is drawn and tests can check it against the command
// line and the recordings.
#pragma once

#include <string>
#include <vector>

#include "analysis/layer_stats.h"
#include "analysis/plot_data.h"
#include "train/gradnorms.h"
#include "train/train_job.h"

namespace sf {

// ---- gradient norms at initialisation (Xiong et al. 2020, Fig. 3) --------------------------------

struct GradNormPair {
  GradNormOptions options;  // norm is ignored: both placements run
  GradNormResult pre, post;
};
// Runs gradnorms_at_init (the `stepformer gradnorms` computation) for both placements.
GradNormPair gradnorms_pair(GradNormOptions o);

// ‖∂L/∂W²‖_F of each layer's ffn.fc2.weight, x = layer index (0-based, as the command prints it):
// four series, "pre-LN encoder", "pre-LN decoder", "post-LN encoder", "post-LN decoder".
PlotData gradnorm_plot(const GradNormPair& g);
// Mean residual-stream norm leaving each layer, the same four series.
PlotData stream_norm_plot(const GradNormPair& g);

// ---- training curves ----------------------------------------------------------------------------

enum class Curve { Loss, LearningRate, GradNorm, ExactMatch, Accuracy };
// One series per run, x = step.
PlotData curve_plot(const std::vector<RunCurves>& runs, Curve which);
// ‖∇‖ per layer (rows, in the metrics' layer order) × step (columns). Steps are grouped into at
// most `max_cols` columns holding the mean of their steps (the column coordinate is the group's
// last step).
GridData layer_grad_grid(const RunCurves& r, int max_cols = 200);
// ‖∇‖ per layer at one step (x = the layer's position in r.layers, named by x_categories), one
// series per run — the "at initialisation" row of the heatmap when step = 1.
PlotData layer_grad_profile(const std::vector<RunCurves>& runs, int step);

// Each decoder self-attention head's detector score over training (x = step, y in [0, 1]), one
// series per head ("L1 H2"), for one run: the induction score (Olsson et al. 2022: the heads that
// copy what followed an earlier copy of the current token) or the previous-token score (the
// layer-0 heads the induction heads read through). No series when the run recorded none.
enum class HeadCurve { Induction, PreviousToken };
PlotData head_score_plot(const RunCurves& r, HeadCurve which);
// Whether a run recorded head scores.
inline bool has_head_scores(const RunCurves& r) { return !r.head_step.empty() && !r.heads.empty(); }

// ---- compare mode -------------------------------------------------------------------------------

// Layers in display order: "enc 0", "enc 1", …, "dec 0", …; both runs' stats placed on it.
std::vector<std::string> layer_categories(const ModelStats& a, const ModelStats& b);
enum class LayerMeasure { ResidualNorm, LnMean, LnVar, Entropy };
// One series per run ("A: <name>", "B: <name>"), x = layer category. ResidualNorm: mean ‖x‖
// leaving the layer; LnMean / LnVar: the mean over tokens and over the layer's blocks of the LN's
// μ / σ²; Entropy: mean over heads of the layer's self-attention entropy.
PlotData layer_plot(const ModelStats& a, const ModelStats& b, const std::string& name_a, const std::string& name_b,
                    LayerMeasure m);

}  // namespace sf
