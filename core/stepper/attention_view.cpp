#include "stepper/attention_view.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "model/mask.h"

namespace sf {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const AttentionTrace& sublayer(const DecoderTrace& t, int layer, bool cross) {
  const DecoderLayerTrace& l = t.layers[static_cast<size_t>(layer)];
  return cross ? l.cross_attn : l.self_attn;
}

// The recording each step along the lineage ran: the step's own, or for beam search the one of
// the hypothesis followed (its parent at the step before, and so on back).
std::vector<std::shared_ptr<const DecoderTrace>> lineage_traces(const Session& s, int last) {
  const auto& steps = s.steps();
  std::vector<std::shared_ptr<const DecoderTrace>> traces(static_cast<size_t>(last + 1));
  int beam = -1;  // index into steps[t]->beams_before of the hypothesis followed
  for (int t = last; t >= 0; --t) {
    const StepRecord& r = *steps[static_cast<size_t>(t)];
    std::shared_ptr<const DecoderTrace> tr = r.trace;
    if (!r.beam_traces.empty()) {
      if (beam < 0) beam = r.focus;
      if (beam >= 0 && beam < static_cast<int>(r.beam_traces.size()) && r.beam_traces[static_cast<size_t>(beam)])
        tr = r.beam_traces[static_cast<size_t>(beam)];
      beam = (beam >= 0 && beam < static_cast<int>(r.beams_before.size()))
                 ? r.beams_before[static_cast<size_t>(beam)].parent
                 : -1;
    }
    traces[static_cast<size_t>(t)] = tr;
  }
  return traces;
}

}  // namespace

std::vector<DecodedRow> lineage_rows(const Session& s, int last) {
  const auto& steps = s.steps();
  const std::vector<std::shared_ptr<const DecoderTrace>> traces = lineage_traces(s, last);
  std::vector<DecodedRow> rows;
  for (int t = 0; t <= last; ++t) {
    const StepRecord& r = *steps[static_cast<size_t>(t)];
    const auto& tr = traces[static_cast<size_t>(t)];
    if (!tr) continue;
    for (size_t i = 0; i < r.fed.size(); ++i) {
      DecodedRow ref;
      ref.trace = tr;
      ref.row = r.query_row0 + static_cast<int>(i);
      ref.position = r.position0 + static_cast<int>(i);
      ref.id = r.fed[i];
      ref.step = t;
      if (ref.row < tr->output.rows()) rows.push_back(ref);
    }
  }
  return rows;
}

StackedAttention encoder_attention(const Session& s, int layer) {
  const EncoderRecord& e = *s.encoder();
  StackedAttention v;
  v.trace = e.trace.layers[static_cast<size_t>(layer)].self_attn;
  const int n = static_cast<int>(e.src_ids.size());
  v.runs.push_back({0, n, n});
  v.q_ids = e.src_ids;
  v.q_step.assign(e.src_ids.size(), -1);
  v.k_ids = e.src_ids;
  return v;
}

void stacked_head_maps(const AttentionTrace& a, const std::vector<RowRun>& runs, int head, Mat& raw, Mat& weights) {
  const Eigen::Index nq = a.q.rows(), nk = a.k.rows();
  raw = Mat::Constant(nq, nk, kNaN);
  weights = Mat::Zero(nq, nk);
  const Heads heads(a.n_heads, a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads);
  Mat w, r;
  for (const RowRun& run : runs) {
    const Mat mask = a.masks[0].block(run.row0, 0, run.rows, run.cols);
    head_attention(a.q.middleRows(run.row0, run.rows), a.k.topRows(run.cols), heads, head, mask, w, &r);
    raw.block(run.row0, 0, run.rows, run.cols) = r;
    weights.block(run.row0, 0, run.rows, run.cols) = w;
  }
}

StackedAttention decoder_attention(const Session& s, const std::vector<DecodedRow>& rows, int layer, bool cross,
                                   bool maps, const MaskList* like) {
  const Config& c = s.model().config;
  const int h = c.n_heads, d = c.d_attn();  // Q and the heads' concat: h·dk columns
  StackedAttention v;
  Session::Kv kv = s.attended_kv(rows.back().step, layer, cross);
  const int nq = static_cast<int>(rows.size());
  const int nk = static_cast<int>(kv.k.rows());
  AttentionTrace& a = v.trace;
  a.n_heads = h;
  a.n_kv_heads = cross ? h : c.kv_heads();
  a.batch = 1;
  a.scale = sublayer(*rows.back().trace, layer, cross).scale;
  a.q.resize(nq, d);
  a.k = std::move(kv.k);
  a.v = std::move(kv.v);
  if (maps) {
    a.concat.resize(nq, d);
    a.out.resize(nq, c.d_model);
  }
  Mat mask = Mat::Constant(nq, nk, kMasked);
  for (int i = 0; i < nq; ++i) {
    const DecodedRow& r = rows[static_cast<size_t>(i)];
    const AttentionTrace& t = sublayer(*r.trace, layer, cross);
    const int cols = std::min(nk, static_cast<int>(t.masks[0].cols()));
    a.q.row(i) = t.q.row(r.row);
    if (maps) {
      a.concat.row(i) = t.concat.row(r.row);
      a.out.row(i) = t.out.row(r.row);
    }
    mask.row(i).head(cols) = t.masks[0].row(r.row).head(cols);
    v.q_ids.push_back(r.id);
    v.q_step.push_back(r.step);
  }
  std::vector<Mat> masks;
  masks.push_back(std::move(mask));
  a.masks = std::move(masks);
  if (like) share_if_same(a.masks, *like);
  // The runs of rows one recording holds side by side (a prefill's rows are scored together, as
  // the forward scored them), each over the keys its step saw.
  for (int i0 = 0; i0 < nq;) {
    const DecodedRow& r = rows[static_cast<size_t>(i0)];
    int m = 1;
    while (i0 + m < nq && rows[static_cast<size_t>(i0 + m)].trace == r.trace &&
           rows[static_cast<size_t>(i0 + m)].row == r.row + m)
      ++m;
    const int cols = std::min(nk, static_cast<int>(sublayer(*r.trace, layer, cross).masks[0].cols()));
    v.runs.push_back({i0, m, cols});
    i0 += m;
  }
  if (maps) {
    a.raw_scores.resize(static_cast<size_t>(h));
    a.weights.resize(static_cast<size_t>(h));
    for (int hh = 0; hh < h; ++hh)
      stacked_head_maps(a, v.runs, hh, a.raw_scores[static_cast<size_t>(hh)], a.weights[static_cast<size_t>(hh)]);
  }
  if (cross) {
    v.k_ids = s.encoder()->src_ids;
  } else {
    for (int j = 0; j < nk; ++j) v.k_ids.push_back(j < nq ? rows[static_cast<size_t>(j)].id : -2);
  }
  return v;
}

}  // namespace sf
