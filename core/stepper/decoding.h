// decoding.h — choosing the next token, and the hypotheses being decoded: greedy, temperature
// sampling with top-k / top-p, beam search, forced (teacher) decoding.
//
// These are the pieces the stepper (session.h), the trainer's evaluation (train/evaluate.h), the
// command line and the benchmark share: one decoder step for B sequences (next_logits) and one
// greedy loop (greedy_decode_batch). Nothing here records unless given a trace: a decoding step
// that records nothing pays nothing for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/decoder.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "base/result.h"
#include "base/rng.h"
#include "base/tensor.h"
#include "model/trace.h"

namespace sf {

enum class Strategy {
  Greedy,  // the most likely token (lowest id on a tie)
  Sample,  // a draw from softmax(logits / T), narrowed by top-k then top-p
  Beam,    // the `beam_width` best partial outputs by summed log-probability
  Forced,  // teacher forcing: the next token of a given target, then </s>
};
const char* to_string(Strategy s);

constexpr int kMaxBeamWidth = 8;

struct DecodeSettings {
  Strategy strategy = Strategy::Greedy;
  float temperature = 1.0f;  // Sample: p ∝ exp(logit / T). T ≤ 0 is rejected (use Greedy for argmax)
  int top_k = 0;             // Sample: keep the k most likely tokens; 0 keeps all
  float top_p = 1.0f;        // Sample: keep the smallest most-likely set with mass ≥ p; in (0, 1]
  uint64_t seed = 0;         // Sample: sf::Rng seed; the same seed gives the same tokens everywhere
  int beam_width = 4;        // Beam: 1 .. min(kMaxBeamWidth, V)
  int max_len = 0;           // most tokens to generate (</s> included); 0: as many as positions allow
  RunOptions run;            // teaching switches (no PE, no causal mask), for encoder and decoder
};

// Checks the settings against the model (temperature, top-k, top-p, beam width, max_len ≥ 0).
// The message names the field, what was expected and what was found.
Result<bool> validate(const DecodeSettings& s, const Model& m);

// How many tokens can be generated after a decoder prefix of `prefix_len` tokens: positions run
// 0 .. max_len − 1 and the last generated token is never fed, so max_len − prefix_len + 1,
// further limited by settings.max_len when that is > 0.
int generation_limit(const Model& m, int prefix_len, const DecodeSettings& s);

// ---- choosing a token -------------------------------------------------------------------------

struct Alternative {
  int id = 0;
  float prob = 0;      // softmax(logits)[id] (temperature 1)
  float log_prob = 0;  // log_softmax(logits)[id]
};

// The n most likely tokens of one row of logits (1, V), best first, ties broken by lower id.
std::vector<Alternative> top_alternatives(const RowVec& logits, int n);

// Index of the largest logit (lowest id on a tie).
int argmax(const RowVec& logits);

// Encoder-only models with a masked-LM head (BERT): what the head predicts at one position.
struct MaskedPrediction {
  int position = 0;              // row of the input
  int input_id = 0;              // the token fed there
  bool masked = false;           // that token is the mask token (`mask`)
  std::vector<Alternative> top;  // the k most likely tokens, most likely first (softmax of the row)
};
// The top-k predictions of MLM logits (n, V) for the input ids (n) at every position holding
// `mask` and at `also` (−1: none), in position order.
std::vector<MaskedPrediction> masked_predictions(const std::vector<int>& ids, const Mat& logits, int mask, int k,
                                                 int also = -1);

// What a sampling choice saw: how the distribution was narrowed and the random draw.
struct SampleInfo {
  int kept = 0;         // tokens left after top-k and top-p
  float kept_mass = 0;  // their mass under softmax(logits / T), before renormalising
  float u = 0;          // the uniform draw in [0, 1) that picked the token
  float prob = 0;       // the chosen token's probability in the renormalised, narrowed distribution
};

// Draws one token from softmax(logits / T) restricted by top-k then top-p (settings must be
// valid). Uses exactly one rng.uniform() per call, so a seed fixes the whole run.
int sample_token(const RowVec& logits, const DecodeSettings& s, Rng& rng, SampleInfo* info);

// The distribution sample_token draws from, token by token, for display: the raw probability
// p = softmax(logits) (T = 1), the tempered p_T = softmax(logits / T), and the renormalised
// p' = p_T / (mass top-k and top-p keep) for a kept token, 0 for a token they remove.
struct SamplingRow {
  int id = 0;
  float p = 0;       // softmax(logits)[id]
  float p_temp = 0;  // softmax(logits / T)[id]
  float p_kept = 0;  // p_T[id] / kept mass, 0 when not kept: the probability it is drawn
  bool kept = false;
};
struct SamplingTable {
  std::vector<SamplingRow> rows;  // the most likely first (the same order at every T > 0)
  int kept = 0;                   // tokens top-k and top-p keep
  float kept_mass = 0;            // their mass under p_T
  float temperature = 1;
};
// The `rows` most likely tokens (settings must be valid), plus `also` (−1: none) at the end when
// it is not among them (a chosen token outside the top rows).
SamplingTable sampling_table(const RowVec& logits, const DecodeSettings& s, int rows, int also = -1);

// ---- beam search ------------------------------------------------------------------------------

struct Beam {
  std::vector<int> tokens;  // (t) generated tokens, without <s> / prompt
  float score = 0;          // sum of the log-probabilities of `tokens` (no length penalty)
  int parent = -1;          // index in the previous beam list (-1 before the first step)
  bool finished = false;    // ended with </s>: carried forward unchanged, never expanded again
};

struct BeamCandidate {
  int parent = 0;         // index of the beam it extends (in the previous beam list)
  int token = 0;          // the token appended
  float score = 0;        // parent score + log p(token | parent)
  bool kept = false;      // survived into the new beam list; false: pruned
  bool finished = false;  // token is </s>
};

// One round of beam search. log_probs[b] (1, V) belongs to beams[b] (ignored for finished beams).
// Each live beam proposes its `width` best continuations; the new list is the best `width` of
// (finished beams ∪ proposals), best first (ties: earlier parent, then lower id). `candidates`
// receives every proposal, marked kept or pruned.
std::vector<Beam> beam_step(const std::vector<Beam>& beams, const std::vector<RowVec>& log_probs, int width, int eos,
                            std::vector<BeamCandidate>* candidates);

// ---- running the decoder ----------------------------------------------------------------------

// One sequence being decoded: its decoder input so far and (cache on) its KV cache.
struct Hypothesis {
  std::vector<int> ids;  // (t) decoder input: <s> [prompt] generated…; the newest is fed next
  KvCache cache;         // cache on: rows [0, cache.length) hold ids[0 .. cache.length)
};

// Starts a hypothesis on a prefix (<s> [prompt]); sizes the cache when it is on.
void start_hypothesis(const Model& m, const std::vector<int>& prefix, bool use_cache, Hypothesis& h);

// Runs the decoder for the next position of B sequences of equal length t, decoded together:
// ids (B·t) sequence by sequence, cache (null: off) holding the same B sequences. Cache on: feeds
// each sequence's ids[cache->length ..] (the whole prefix the first time — a prefill — then one
// token) and appends them to the cache. Cache off: recomputes the whole decoder over ids.
// Returns the logits of each sequence's last position (B, V) and records into `tr` when given
// (cache on: only the fed rows; off: every row). The one decoder call every decoding path makes.
Mat next_logits(const Model& m, const EncoderContext& enc, const std::vector<int>& ids, int batch, KvCache* cache,
                DecoderTrace* tr, const RunOptions& opt = {});

// The same for one hypothesis (B = 1): the stepper's step. Returns (1, V).
RowVec next_logits(const Model& m, const EncoderContext& enc, Hypothesis& h, bool use_cache, DecoderTrace* tr,
                   const RunOptions& opt = {});

// ---- greedy decoding of a batch -----------------------------------------------------------------

// Greedy decoding of B sequences at once (the trainer's evaluation): each step runs the decoder
// once for the whole batch and appends each row's argmax (the stepper's greedy choice, the same
// function), until every row has produced </s> (rows already finished are run but ignored) or
// max_new tokens, or positions run out. inputs: per sequence the
// source ids (encoder-decoder; padded to the longest and encoded as one batch) or the prompt ids
// without <s> (decoder-only; prompts of one length form a batch, since left padding would shift
// positions). Returns per sequence the generated ids, without </s>. Cache on (the default) and
// off give the same tokens up to float rounding of near ties.
std::vector<std::vector<int>> greedy_decode_batch(const Model& m, const std::vector<std::vector<int>>& inputs,
                                                  int max_new, bool use_cache = true);

}  // namespace sf
