#include "analysis/ablation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "analysis/logit_lens.h"

namespace sf {

namespace {

int stack_layers(const Config& c) {
  return predicting_stack(c) == Stack::Encoder ? c.n_encoder_layers : c.n_decoder_layers;
}
int stack_heads(const Config& c) { return predicting_stack(c) == Stack::Encoder ? c.encoder_heads() : c.n_heads; }

bool parse_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoi(s);
  return true;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string{} : s.substr(a, b - a + 1);
}

}  // namespace

Stack predicting_stack(const Config& c) { return c.has_decoder() ? Stack::Decoder : Stack::Encoder; }

int prediction_position(const Model& m, const PreparedInput& in) {
  const Config& c = m.config;
  if (c.has_decoder()) return static_cast<int>(in.tgt_ids.size()) - 1;
  const int mask = mask_token(c.src_vocab);
  for (size_t i = 0; i < in.src_ids.size(); ++i)
    if (mask >= 0 && in.src_ids[i] == mask) return static_cast<int>(i);
  return static_cast<int>(in.src_ids.size()) - 1;
}

const Mat& stack_logits(const Model& m, const Trace& t) {
  return m.config.has_decoder() ? t.decoder.logits : t.encoder.logits;
}

std::string target_label(const AblationTarget& t) {
  const std::string l = std::to_string(t.layer) + ".";
  switch (t.kind) {
    case SiteKind::SelfAttention:
      return l + (t.head < 0 ? "attn" : std::to_string(t.head));
    case SiteKind::CrossAttention:
      return l + (t.head < 0 ? "cross" : "x" + std::to_string(t.head));
    case SiteKind::Mlp:
      return l + "mlp";
    case SiteKind::Stream:
      return l + "stream";
  }
  return l;
}

Result<bool> check_target(const Model& m, const AblationTarget& t) {
  const Config& c = m.config;
  const int layers = stack_layers(c), heads = stack_heads(c);
  const std::string what = target_label(t);
  if (t.layer < 0 || t.layer >= layers)
    return Error{"ablate " + what + ": expected a layer in 0.." + std::to_string(layers - 1) + ", found " +
                 std::to_string(t.layer)};
  if (t.kind == SiteKind::CrossAttention && !c.has_cross_attention())
    return Error{"ablate " + what + ": expected self-attention heads or an MLP, found cross-attention in a " +
                 std::string(to_string(c.arch)) + " model, which has none"};
  if (t.kind == SiteKind::Mlp && c.d_ff <= 0)
    return Error{"ablate " + what + ": expected a layer with an MLP, found a configuration without MLPs"};
  if (t.kind == SiteKind::Stream) return Error{"ablate " + what + ": expected a head or a sublayer, found the stream"};
  if (t.head >= heads || (t.head < -1))
    return Error{"ablate " + what + ": expected a head in 0.." + std::to_string(heads - 1) + ", found " +
                 std::to_string(t.head)};
  return true;
}

Result<std::vector<AblationTarget>> parse_ablation(const Model& m, const std::string& spec) {
  std::vector<AblationTarget> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    const size_t dot = item.find('.');
    AblationTarget t;
    const auto bad = [&] {
      return Error{"ablate: expected LAYER.HEAD, LAYER.xHEAD, LAYER.attn, LAYER.cross or LAYER.mlp, found '" + item +
                   "'"};
    };
    if (dot == std::string::npos || !parse_int(item.substr(0, dot), t.layer)) return bad();
    const std::string rest = item.substr(dot + 1);
    if (rest == "mlp") {
      t.kind = SiteKind::Mlp;
    } else if (rest == "attn") {
      t.kind = SiteKind::SelfAttention;
    } else if (rest == "cross") {
      t.kind = SiteKind::CrossAttention;
    } else if (!rest.empty() && rest[0] == 'x' && parse_int(rest.substr(1), t.head)) {
      t.kind = SiteKind::CrossAttention;
    } else if (parse_int(rest, t.head)) {
      t.kind = SiteKind::SelfAttention;
    } else {
      return bad();
    }
    if (auto ok = check_target(m, t); !ok) return Error{ok.error()};
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  if (out.empty()) return Error{"ablate: expected at least one head or sublayer, found '" + spec + "'"};
  return out;
}

Result<EditMode> parse_ablation_mode(const std::string& s) {
  if (s == "zero") return EditMode::Zero;
  if (s == "mean") return EditMode::Mean;
  return Error{"ablate-mode: expected zero or mean, found '" + s + "'"};
}

std::shared_ptr<Intervention> ablation(const Model& m, const std::vector<AblationTarget>& targets, EditMode mode) {
  auto iv = std::make_shared<Intervention>();
  for (const AblationTarget& t : targets) {
    Edit e;
    e.site.stack = predicting_stack(m.config);
    e.site.kind = t.kind;
    e.site.layer = t.layer;
    e.site.head = t.head;
    e.mode = mode;
    iv->add(std::move(e));
  }
  return iv;
}

double kl_divergence(const Mat& log_p, const Mat& log_q, int row) {
  double kl = 0;
  for (Eigen::Index v = 0; v < log_p.cols(); ++v) {
    const double lp = log_p(row, v);
    const double p = std::exp(lp);
    if (p > 0) kl += p * (lp - static_cast<double>(log_q(row, v)));
  }
  return kl;
}

namespace {

std::vector<TokenProb> top_of(const Mat& logits, int row, int k) {
  const LensCell cell = lens_top_k(logits, row, k);
  std::vector<TokenProb> out;
  for (size_t i = 0; i < cell.ids.size(); ++i) out.push_back({cell.ids[i], cell.probs[i]});
  return out;
}

const Mat& stack_log_probs(const Model& m, const Trace& t) {
  return m.config.has_decoder() ? t.decoder.log_probs : t.encoder.log_probs;
}
const Mat& stack_probs(const Model& m, const Trace& t) {
  return m.config.has_decoder() ? t.decoder.probs : t.encoder.probs;
}

}  // namespace

Result<AblationResult> run_ablation(const Model& m, const PreparedInput& in, const std::vector<AblationTarget>& targets,
                                    EditMode mode, const RunOptions& base, int top_k) {
  if (mode == EditMode::Patch) return Error{"ablate: expected mode zero or mean, found patch"};
  if (!m.config.has_decoder() && !m.config.mlm_head)
    return Error{"ablate: expected a model that predicts tokens, found an encoder without a masked-LM head"};
  for (const AblationTarget& t : targets)
    if (auto ok = check_target(m, t); !ok) return Error{ok.error()};
  AblationResult r;
  r.targets = targets;
  r.mode = mode;
  r.position = prediction_position(m, in);
  RunOptions clean = base;
  clean.intervention = nullptr;
  r.clean = run_forward(m, in, clean);
  RunOptions ablated = base;
  ablated.intervention = ablation(m, targets, mode);
  r.ablated = run_forward(m, in, ablated);
  const Mat& pc = stack_probs(m, r.clean);
  const Mat& pa = stack_probs(m, r.ablated);
  r.clean_probs.assign(pc.row(r.position).data(), pc.row(r.position).data() + pc.cols());
  r.ablated_probs.assign(pa.row(r.position).data(), pa.row(r.position).data() + pa.cols());
  r.kl = kl_divergence(stack_log_probs(m, r.clean), stack_log_probs(m, r.ablated), r.position);
  r.clean_top_k = top_of(stack_logits(m, r.clean), r.position, top_k);
  r.ablated_top_k = top_of(stack_logits(m, r.ablated), r.position, top_k);
  r.clean_top = r.clean_top_k.empty() ? 0 : r.clean_top_k.front().id;
  r.ablated_top = r.ablated_top_k.empty() ? 0 : r.ablated_top_k.front().id;
  return r;
}

}  // namespace sf
