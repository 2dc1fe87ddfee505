#include "analysis/compare.h"

#include <algorithm>
#include <tuple>

namespace sf {

// ---- keys ---------------------------------------------------------------------------------------

namespace {

auto tie(const AlignKey& k) { return std::tie(k.side, k.step, k.section, k.layer, k.block, k.phase); }

int block_ordinal(Block b) {
  switch (b) {
    case Block::SelfAttention:
      return 0;
    case Block::CrossAttention:
      return 1;
    case Block::FeedForward:
      return 2;
    case Block::None:
      break;
  }
  return 0;
}

const char* block_word(int b) { return b == 0 ? "self-attention" : b == 1 ? "cross-attention" : "feed-forward"; }

}  // namespace

WeightDifference weight_difference(const Mat& a, const Mat& b) {
  WeightDifference d;
  const Eigen::Index r = std::min(a.rows(), b.rows()), c = std::min(a.cols(), b.cols());
  d.diff = a.topLeftCorner(r, c) - b.topLeftCorner(r, c);
  d.max_abs = d.diff.size() ? d.diff.cwiseAbs().maxCoeff() : 0.0f;
  d.cut = a.rows() != b.rows() || a.cols() != b.cols();
  return d;
}

bool AlignKey::operator<(const AlignKey& o) const { return tie(*this) < tie(o); }
bool AlignKey::operator==(const AlignKey& o) const { return tie(*this) == tie(o); }

AlignKey align_key(Side side, int step, const StageKey& k) {
  AlignKey a;
  a.side = side == Side::Encoder ? 0 : 1;
  a.step = side == Side::Encoder ? -1 : step;
  switch (k.kind) {
    case StageKind::Embed:
      a.section = 0;
      break;
    case StageKind::Positional:
      a.section = 1;
      break;
    case StageKind::Norm:
    case StageKind::SelfAttention:
    case StageKind::CrossAttention:
    case StageKind::FeedForward:
    case StageKind::AddNorm:
      a.section = 2;
      a.layer = k.layer;
      a.block = block_ordinal(k.block);
      a.phase = k.kind == StageKind::Norm ? 0 : k.kind == StageKind::AddNorm ? 2 : 1;
      break;
    case StageKind::FinalNorm:
      a.section = 3;
      break;
    case StageKind::Memory:
    case StageKind::Logits:
      a.section = 4;
      break;
    case StageKind::Choose:
      a.section = 5;
      break;
  }
  return a;
}

AlignKey align_key(const Session& s, int index) {
  const Config& c = s.model().config;
  const std::vector<StageKey> enc = encoder_layout(c);
  const int E = static_cast<int>(enc.size());
  if (index < E) return align_key(Side::Encoder, -1, enc[static_cast<size_t>(index)]);
  const std::vector<StageKey> dec = decoder_layout(c);
  const int D = static_cast<int>(dec.size());
  return align_key(Side::Decoder, (index - E) / D, dec[static_cast<size_t>((index - E) % D)]);
}

std::string describe(const AlignKey& k) {
  std::string s = k.side == 0 ? "encoder" : "decoder step " + std::to_string(k.step);
  static const char* sections[] = {"embed", "positional encoding", "", "final norm", "", "choose"};
  if (k.section == 2) {
    static const char* phases[] = {" (norm before)", "", " (add & norm after)"};
    return s + " · layer " + std::to_string(k.layer) + " · " + block_word(k.block) + phases[k.phase];
  }
  if (k.section == 4) return s + (k.side == 0 ? " · memory" : " · logits");
  return s + " · " + sections[k.section];
}

// ---- placement switch ---------------------------------------------------------------------------

Model with_norm_placement(const Model& m, NormPlacement p) {
  Config c = m.config;
  Weights w = m.weights;
  if (c.norm == p) return Model::make(std::move(c), std::move(w));
  c.norm = p;
  const auto fresh = [&](LayerNormWeights& n) {
    n.weight = RowVec::Ones(c.d_model);
    n.bias = RowVec::Zero(c.d_model);
  };
  if (p == NormPlacement::Pre) {
    if (c.has_encoder()) fresh(w.encoder_norm);
    fresh(w.decoder_norm);
  } else {
    w.encoder_norm = {};
    w.decoder_norm = {};
  }
  return Model::make(std::move(c), std::move(w));
}

// ---- comparison ---------------------------------------------------------------------------------

Result<Comparison> Comparison::create(std::shared_ptr<const Model> a, std::shared_ptr<const Model> b,
                                      const std::string& src, const std::string& tgt, const DecodeSettings& settings,
                                      bool use_cache) {
  Comparison c;
  const char* names[] = {"A", "B"};
  int i = 0;
  for (auto* m : {&a, &b}) {
    auto s = Session::create(*m, src, tgt, settings, use_cache);
    if (!s) return Error{std::string("run ") + names[i] + ": " + s.error()};
    c.runs_.push_back(std::move(*s));
    ++i;
  }
  c.src_ = src;
  c.tgt_ = tgt;
  c.home();
  return c;
}

std::vector<std::string> Comparison::warnings() const {
  std::vector<std::string> out;
  for (int i = 0; i < 2; ++i)
    for (const std::string& w : runs_[static_cast<size_t>(i)].warnings()) out.push_back((i ? "B: " : "A: ") + w);
  return out;
}

int Comparison::last_at_or_before(int i, const AlignKey& k) const {
  const Session& s = runs_[static_cast<size_t>(i)];
  int lo = 0, hi = s.stage_count();  // first index with key > k, in [lo, hi]
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (align_key(s, mid) <= k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

bool Comparison::ensure_stage(int i, int index) {
  Session& s = runs_[static_cast<size_t>(i)];
  if (index < s.stage_count()) return true;
  if (s.finished()) return false;
  const int keep = s.cursor();
  s.jump(index);  // computes the steps up to `index` (or until decoding finishes)
  s.jump(keep);
  return index < s.stage_count();
}

void Comparison::align() {
  for (int i = 0; i < 2; ++i) runs_[static_cast<size_t>(i)].jump(std::max(0, last_at_or_before(i, key_)));
}

bool Comparison::move_to(const AlignKey& k) {
  key_ = k;
  align();
  message_.clear();
  return true;
}

bool Comparison::refuse(std::string why) {
  message_ = std::move(why);
  return false;
}

void Comparison::home() { move_to(std::min(align_key(runs_[0], 0), align_key(runs_[1], 0))); }

bool Comparison::forward() {
  std::optional<AlignKey> next;
  for (int i = 0; i < 2; ++i) {
    const int j = last_at_or_before(i, key_) + 1;  // the first stage after the point
    if (!ensure_stage(i, j)) continue;
    const AlignKey k = align_key(runs_[static_cast<size_t>(i)], j);
    if (!next || k < *next) next = k;
  }
  if (!next) return refuse("already at the last stage: both runs have finished decoding");
  return move_to(*next);
}

bool Comparison::back() {
  std::optional<AlignKey> prev;
  for (int i = 0; i < 2; ++i) {
    const int j = last_at_or_before(i, key_);
    if (j < 0) continue;
    AlignKey k = align_key(runs_[static_cast<size_t>(i)], j);
    if (k == key_) {  // the run sits exactly on the point: the stage before it
      if (j == 0) continue;
      k = align_key(runs_[static_cast<size_t>(i)], j - 1);
    }
    if (!prev || *prev < k) prev = k;
  }
  if (!prev) return refuse("already at the first stage");
  return move_to(*prev);
}

bool Comparison::next_token() {
  const int step = key_.side == 0 ? -1 : key_.step;
  const int target = key_.side == 1 && key_.section == 5 ? step + 1 : std::max(step, 0);
  bool any = false;
  for (int i = 0; i < 2; ++i) {
    const Session& s = runs_[static_cast<size_t>(i)];
    const int E = encoder_stage_count(s.model().config), D = decoder_stage_count(s.model().config);
    any = ensure_stage(i, E + (target + 1) * D - 1) || any;
  }
  if (!any) return refuse("no next token: both runs have finished decoding");
  return move_to(AlignKey{1, target, 5, 0, 0, 0});
}

bool Comparison::prev_token() {
  if (key_.side == 0) return refuse("no earlier token: still on the encoder side");
  if (key_.step > 0) return move_to(AlignKey{1, key_.step - 1, 5, 0, 0, 0});
  // Before the first token: the encoder's last stage (Memory), or the very first stage.
  std::optional<AlignKey> enc;
  for (int i = 0; i < 2; ++i) {
    const Session& s = runs_[static_cast<size_t>(i)];
    const int E = encoder_stage_count(s.model().config);
    if (E > 0) {
      const AlignKey k = align_key(s, E - 1);
      if (!enc || *enc < k) enc = k;
    }
  }
  if (!enc) return refuse("no earlier token: this is the first decoding step");
  return move_to(*enc);
}

void Comparison::run_to_end() {
  for (Session& s : runs_) s.run_to_end();
  move_to(std::max(align_key(runs_[0], runs_[0].stage_count() - 1), align_key(runs_[1], runs_[1].stage_count() - 1)));
}

std::vector<AlignKey> Comparison::timeline() const {
  std::vector<AlignKey> all;
  for (const Session& s : runs_)
    for (int i = 0; i < s.stage_count(); ++i) all.push_back(align_key(s, i));
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

int Comparison::position() const {
  const std::vector<AlignKey> t = timeline();
  return static_cast<int>(std::upper_bound(t.begin(), t.end(), key_) - t.begin()) - 1;
}

bool Comparison::jump(int position) {
  const std::vector<AlignKey> t = timeline();
  if (position < 0 || position >= static_cast<int>(t.size())) {
    return refuse("no point " + std::to_string(position) + " on the timeline (known: 0 .. " +
                  std::to_string(static_cast<int>(t.size()) - 1) + ")");
  }
  return move_to(t[static_cast<size_t>(position)]);
}

bool Comparison::at_end() const {
  if (!finished()) return false;
  for (int i = 0; i < 2; ++i) {
    const Session& s = runs_[static_cast<size_t>(i)];
    if (align_key(s, s.stage_count() - 1) > key_) return false;
  }
  return true;
}

Result<bool> Comparison::set_input(const std::string& src, const std::string& tgt) {
  auto c = create(runs_[0].model_ptr(), runs_[1].model_ptr(), src, tgt, runs_[0].settings(), runs_[0].use_cache());
  if (!c) return Error{c.error()};
  *this = std::move(*c);
  return true;
}

Result<bool> Comparison::set_settings(const DecodeSettings& s) {
  auto c = create(runs_[0].model_ptr(), runs_[1].model_ptr(), src_, tgt_, s, runs_[0].use_cache());
  if (!c) return Error{c.error()};
  *this = std::move(*c);
  return true;
}

}  // namespace sf
