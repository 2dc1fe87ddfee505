// head_detector.h — what kind of head is this? Each head's attention on a probe sequence is
// compared with an ideal pattern P (n, n), 1 where the kind of head would look (TransformerLens'
// head_detector.py, its "mul" measure):
//
//   score = Σ_ij A_ij · P_ij / Σ_ij A_ij          (0: never looks there, 1: looks nowhere else)
//
//   previous token   P[i, i−1] = 1
//   duplicate token  P[i, j] = 1 for j < i with token j = token i
//   induction        P[i, j] = 1 for 0 < j ≤ i with token j−1 = token i (the token after an earlier
//                    copy of the current one: the duplicate pattern shifted one key to the right)
//   first token      P[i, 0] = 1 (an attention sink)
//
// The probe is the one TransformerLens uses for induction: r random tokens repeated, r r, after
// <s>: on the second copy a previous-token head looks one back, a duplicate-token head at the same
// token in the first copy, an induction head at the token that followed it there.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "model/model.h"
#include "model/trace.h"
#include "stepper/stage.h"

namespace sf {

enum class HeadPattern { PreviousToken, DuplicateToken, Induction, FirstToken };
constexpr int kHeadPatterns = 4;
const char* to_string(HeadPattern p);
// The pattern as a JSON key: "previous_token", "duplicate_token", "induction", "first_token".
const char* head_pattern_key(HeadPattern p);

// (n, n) the ideal pattern for the ids a stack reads (lower-triangular, 0 or 1).
Mat detection_pattern(HeadPattern p, const std::vector<int>& ids);
// Σ A ⊙ P / Σ A for one head's weights (n, n); 0 when A sums to 0.
double pattern_score(const Mat& attention, const Mat& pattern);

// r random non-special tokens of the model's input vocabulary, repeated (r r); r shrinks to what
// max_len allows after <s>. Deterministic per seed.
std::vector<int> repeated_random_tokens(const Model& m, int r, uint64_t seed);

// [pattern][layer][head] scores of every self-attention head of one stack.
struct StackScores {
  Side side = Side::Decoder;
  std::vector<int> ids;  // (n) what the stack read
  std::vector<std::vector<std::vector<double>>> score;
};
struct HeadDetection {
  std::vector<int> tokens;          // r r
  Trace trace;                      // the probe's full recording (to open a head's map on it)
  std::vector<StackScores> stacks;  // the encoder (when the model has one), then the decoder
};
// Runs the probe (the encoder reads r r; the decoder reads <s> r r, teacher-forced) and scores
// every head for every pattern.
Result<HeadDetection> detect_heads(const Model& m, int r, uint64_t seed);

// Over training: the probe the scores are measured on is kHeadProbeLength random tokens repeated
// (fewer when max_len is shorter), drawn with kHeadProbeSeed, the same at every step of a run.
constexpr int kHeadProbeLength = 10;
constexpr uint64_t kHeadProbeSeed = 1;
// Appends each decoder self-attention head's previous-token, duplicate-token, induction and
// first-token score on that probe to metrics["heads"] (created at the first call): "step", and per
// pattern (head_pattern_key) per step a list over layers of a list over heads. A trainer's probe
// hook (train/trainer.h, MetricsProbe).
void record_head_scores(nlohmann::json& metrics, int64_t step, const Model& m);

}  // namespace sf
