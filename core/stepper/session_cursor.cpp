// session_cursor.cpp — moving a Session's cursor over the stages (computing a step only when the
// cursor enters one not computed yet), and the changes that restart it.
#include "stepper/session.h"

#include <chrono>
#include <limits>

namespace sf {

// ---- movement -----------------------------------------------------------------------------------

int Session::step_first_stage(int step) const {
  return encoder_stage_count(model_->config) + step * decoder_stage_count(model_->config);
}

int Session::stage_count() const { return step_first_stage(static_cast<int>(steps_.size())); }

bool Session::forward() {
  if (cursor_ + 1 >= stage_count() && !compute_next_step()) {
    message_ = model_->config.has_decoder()
                   ? "already at the last stage: decoding finished (" + finish_reason() + ")"
                   : "already at the last stage: an encoder-only model has no decoder to step into";
    return false;
  }
  ++cursor_;
  message_.clear();
  return true;
}

bool Session::back() {
  if (cursor_ == 0) {
    message_ = "already at the first stage";
    return false;
  }
  --cursor_;
  message_.clear();
  return true;
}

bool Session::next_token() {
  const int s = current_step();
  const int choose_here = s >= 0 ? step_first_stage(s + 1) - 1 : -1;
  const int target_step = cursor_ < choose_here ? s : s + 1;
  if (target_step >= static_cast<int>(steps_.size()) && !compute_next_step()) {
    message_ = model_->config.has_decoder()
                   ? "no next token: decoding finished (" + finish_reason() + ")"
                   : "no next token: an encoder-only model does not decode (its predictions are per position)";
    return false;
  }
  // One step at a time: the next token is at most one step away.
  cursor_ = step_first_stage(target_step + 1) - 1;
  message_.clear();
  return true;
}

bool Session::prev_token() {
  const int s = current_step();
  if (s < 0) {
    message_ = "no earlier token: still on the encoder side";
    return false;
  }
  // From anywhere in step s, back to the choice of step s − 1; before step 0 lies the memory.
  const int target = s > 0 ? step_first_stage(s) - 1 : step_first_stage(0) - 1;
  if (target < 0) {
    message_ = "no earlier token: this is the first decoding step";
    return false;
  }
  cursor_ = target;
  message_.clear();
  return true;
}

bool Session::jump(int stage) {
  if (stage < 0) {
    message_ = "stage " + std::to_string(stage) + " does not exist: expected 0 or more";
    return false;
  }
  while (stage >= stage_count() && compute_next_step()) {
  }
  const int target = std::min(stage, stage_count() - 1);
  message_ = target < stage ? "decoding finished (" + finish_reason() + ") at stage " + std::to_string(target) +
                                  "; stage " + std::to_string(stage) + " does not exist"
                            : "";
  const bool moved = target != cursor_;
  cursor_ = target;
  return moved;
}

bool Session::jump_to_step(int step) {
  if (step < 0) {
    message_ = "step " + std::to_string(step) + " does not exist: expected 0 or more";
    return false;
  }
  while (step >= static_cast<int>(steps_.size()) && compute_next_step()) {
  }
  if (step >= static_cast<int>(steps_.size())) {
    const bool moved = cursor_ != stage_count() - 1;
    cursor_ = stage_count() - 1;
    message_ = "decoding finished (" + finish_reason() + ") after step " + std::to_string(steps_.size() - 1) +
               "; step " + std::to_string(step) + " does not exist";
    return moved;
  }
  const int target = step_first_stage(step + 1) - 1;
  const bool moved = target != cursor_;
  cursor_ = target;
  message_.clear();
  return moved;
}

void Session::run_to_end() { run_for(std::numeric_limits<double>::infinity()); }

bool Session::run_for(double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  while (compute_next_step())
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= seconds) break;
  cursor_ = stage_count() - 1;
  message_.clear();
  return finished();
}

void Session::reset() {
  restart();
  message_.clear();
}

// ---- changes ------------------------------------------------------------------------------------

Result<bool> Session::set_input(const std::string& src, const std::string& tgt) {
  auto s = create(model_, src, tgt, settings_, use_cache_);
  if (!s) return Error{s.error()};
  *this = std::move(*s);
  return true;
}

namespace {

// Greedy and sampling differ only in how a step picks its token: a change between them, or of
// their knobs, leaves the steps already decided valid. Beam and forced decoding, the run switches
// and max_len change what earlier steps are.
bool keeps_prefix(const DecodeSettings& a, const DecodeSettings& b) {
  const auto picks = [](Strategy s) { return s == Strategy::Greedy || s == Strategy::Sample; };
  return picks(a.strategy) && picks(b.strategy) && a.max_len == b.max_len &&
         a.run.positional_encoding == b.run.positional_encoding && a.run.causal_mask == b.run.causal_mask;
}

}  // namespace

Result<bool> Session::set_settings(const DecodeSettings& settings) {
  std::vector<int> keep;
  if (keeps_prefix(settings_, settings))
    for (int t = 0; t < current_step() && t < static_cast<int>(steps_.size()); ++t)
      keep.push_back(steps_[static_cast<size_t>(t)]->chosen);
  auto s = create(model_, src_text_, tgt_text_, settings, use_cache_, std::move(keep));
  if (!s) return Error{s.error()};
  *this = std::move(*s);
  return true;
}

void Session::set_use_cache(bool on) {
  if (on == use_cache_) return;
  const int target = cursor_;
  use_cache_ = on;
  restart();
  jump(target);
  message_ = std::string("cache ") + (on ? "on" : "off") + ": history recomputed up to the same stage";
}

int Session::current_step() const {
  const int E = encoder_stage_count(model_->config);
  return cursor_ < E || !model_->config.has_decoder() ? -1 : (cursor_ - E) / decoder_stage_count(model_->config);
}

std::shared_ptr<const StepRecord> Session::current_record() const {
  const int s = current_step();
  return s < 0 ? nullptr : steps_[static_cast<size_t>(s)];
}

}  // namespace sf
