// inspect_csv.cpp — the Inspect panel's grids as CSV (a header row, one value per line of the
// grid), the same numbers the panel draws.
#include <cstdio>
#include <sstream>

#include "analysis/rollout.h"
#include "inspect_panel.h"

namespace sf::gui {

namespace {

// A CSV field: quoted, with quotes doubled (tokens may hold commas and quotes).
std::string field(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

const char* block_name(Block b) {
  switch (b) {
    case Block::SelfAttention:
      return "self";
    case Block::CrossAttention:
      return "cross";
    case Block::FeedForward:
      return "mlp";
    default:
      return "";
  }
}

}  // namespace

bool InspectPanel::csv(std::string& out, std::string& error) const {
  const auto d = data();
  std::ostringstream o;
  const InspectRun* r = d->run.get();
  switch (tab_) {
    case InspectTab::Lens:
      if (!r || r->top.empty()) return error = "inspect-csv: the logit lens has nothing computed yet", false;
      o << "point,label,position,input,top_id,top,prob\n";
      for (size_t p = 0; p < r->top.size(); ++p)
        for (size_t i = 0; i < r->top[p].size(); ++i) {
          const LensCell& cell = r->top[p][i];
          o << p << "," << field(r->point_names[p]) << "," << i << "," << field(r->tokens[i]) << "," << cell.ids.front()
            << "," << field(display_token(*r->out_vocab, cell.ids.front())) << "," << num(cell.probs.front()) << "\n";
        }
      break;
    case InspectTab::Attribution: {
      if (!d->attribution) return error = "inspect-csv: no attribution computed (" + d->attribution_error + ")", false;
      const Attribution& a = *d->attribution;
      o << "kind,layer,block,head,value\n";
      for (const AttributionPart& p : a.parts)
        o << to_string(p.kind) << "," << p.layer << "," << block_name(p.block) << "," << p.head << "," << num(p.value)
          << "\n";
      o << "sum,-1,,-1," << num(a.sum) << "\n";
      o << "total,-1,,-1," << num(a.total) << "\n";
      break;
    }
    case InspectTab::Heads:
      if (!d->detection) return error = "inspect-csv: the head detectors have not run yet", false;
      o << "stack,pattern,layer,head,score\n";
      for (const StackScores& st : d->detection->stacks)
        for (int p = 0; p < kHeadPatterns; ++p)
          for (size_t l = 0; l < st.score[size_t(p)].size(); ++l)
            for (size_t h = 0; h < st.score[size_t(p)][l].size(); ++h)
              o << (st.side == Side::Encoder ? "encoder" : "decoder") << "," << to_string(static_cast<HeadPattern>(p))
                << "," << l << "," << h << "," << num(st.score[size_t(p)][l][h]) << "\n";
      break;
    case InspectTab::Rollout: {
      if (!r) return error = "inspect-csv: nothing recorded yet", false;
      const std::vector<Mat>& R = roll_stack_ == 0 ? r->rollout_enc : r->rollout_dec;
      if (R.empty()) return error = "inspect-csv: no rollout for this stack", false;
      const int l = roll_layer_ < 0 || roll_layer_ >= int(R.size()) ? int(R.size()) - 1 : roll_layer_;
      const Mat& m = R[size_t(l)];  // (n, n)
      o << "layer,position";
      for (Eigen::Index j = 0; j < m.cols(); ++j) o << ",from " << j;
      o << "\n";
      for (Eigen::Index i = 0; i < m.rows(); ++i) {
        o << l << "," << i;
        for (Eigen::Index j = 0; j < m.cols(); ++j) o << "," << num(m(i, j));
        o << "\n";
      }
      break;
    }
    case InspectTab::Ablation: {
      if (abl_sel_.empty())
        return error = "inspect-csv: nothing is ablated (click heads, or the script's ablate)", false;
      if (!d->ablation || d->ablation_run != d->run)
        return error = "inspect-csv: no ablation computed (" + d->ablation_error + ")", false;
      const AblationResult& a = *d->ablation;
      const Vocab& v = output_vocab(d->run->in.model->config);
      o << "run,rank,id,token,prob\n";
      for (auto [name, list] : {std::pair<const char*, const std::vector<TokenProb>*>{"clean", &a.clean_top_k},
                                {"ablated", &a.ablated_top_k}})
        for (size_t k = 0; k < list->size(); ++k)
          o << name << "," << k << "," << (*list)[k].id << "," << field(display_token(v, (*list)[k].id)) << ","
            << num((*list)[k].prob) << "\n";
      o << "kl,,,," << num(a.kl) << "\n";
      break;
    }
    case InspectTab::Patching: {
      if (!d->patch) return error = "inspect-csv: nothing patched yet (" + d->patch_error + ")", false;
      const PatchView& pv = *d->patch;
      const Config& cfg = pv.request.model->config;
      const std::vector<int>& ids = cfg.has_decoder() ? pv.inputs.corrupt.tgt_ids : pv.inputs.corrupt.src_ids;
      const Vocab& v = cfg.has_decoder() ? cfg.tgt_vocab : cfg.src_vocab;
      const bool heads = per_head(pv.result.what);
      o << (heads ? "layer,head,recovered\n" : "layer,position,token,recovered\n");
      for (int l = 0; l < pv.result.rows(); ++l)
        for (int i = 0; i < pv.result.cols(); ++i) {
          o << l << "," << i << ",";
          if (!heads) o << field(v.token(ids[size_t(i)])) << ",";
          o << num(pv.result.recovered[size_t(l)][size_t(i)]) << "\n";
        }
      break;
    }
  }
  out = o.str();
  return true;
}

}  // namespace sf::gui
