// session.h — the stepper the explorer and `stepformer decode` drive: a model, an input, the
// encoder recording, the KV cache, the tokens decoded so far and the history of every step.
//
// The unit of computation is one decoder step (all layers for the fed token(s), then the choice);
// the unit of movement is a stage (stage.h). An encoder-only model (BERT) has no decoder steps:
// its stages are the encoder's, ending with the masked-LM head, all computed at creation. Entering the first stage of a
// step that has not been computed runs that step once, recording everything, and keeps it in the history; every other
// movement only moves the cursor. So stepping back then forward shows the very same numbers
// (bit for bit), and the views "as of a stage" (tokens, KV cache) are derived from the cursor:
// at layer 1's self-attention stage of step 3, layers 0 and 1 already hold the row of step 3 and
// layer 2 does not yet.
//
// Threads: a Session is a value. Copying one is cheap — the recorded history is shared as
// shared_ptr<const …> and the live caches are copied only when the original next computes a step —
// so a worker thread can run the Session and publish `std::make_shared<const Session>(s)` after
// each operation, and the UI thread reads that snapshot freely. A Session itself is not
// thread-safe: one thread mutates it.
//
// Files: session.cpp (creation, computing a step), session_cursor.cpp (movement and restarts),
// session_views.cpp (stages, tokens, the KV cache view, cost, tensors by name).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stepper/cost.h"
#include "stepper/decoding.h"
#include "model/model.h"
#include "base/result.h"
#include "stepper/run.h"
#include "io/safetensors.h"
#include "stepper/stage.h"
#include "model/trace.h"

namespace sf {

// The encoder side, computed once per input (encoder-decoder models).
struct EncoderRecord {
  EncoderTrace trace;        // every intermediate of the encoder (trace.output == memory)
  Mat memory;                // (n_src, d) what cross-attention reads
  std::vector<int> src_ids;  // (n_src) the source as fed (for the padding mask)
};

// One decoder step, immutable once computed.
struct StepRecord {
  int step = 0;          // 0 feeds <s> (decoder-only: the prefill of <s> + prompt)
  std::vector<int> fed;  // (m) token ids fed at this step (m = 1 except the prefill)
  int position0 = 0;     // absolute position of fed[0]
  int query_row0 = 0;    // row of fed[0] in the trace: 0 with the cache, position0 without
  bool cached = true;    // computed with the KV cache (false: the whole prefix recomputed)

  // The recording of the focused hypothesis (greedy/sample/forced: the only one; beam: the parent
  // of the best new beam). Rows: cache on: the m fed rows; off: every row 0 .. position0 + m − 1.
  // Cache on, not beam: a compact recording (DecoderTrace::compact; whole_trace(step) restores it).
  std::shared_ptr<const DecoderTrace> trace;
  // Beam: the recording of every beam expanded at this step, [b] for beams_before[b] (finished
  // beams are not run: null). Otherwise empty.
  std::vector<std::shared_ptr<const DecoderTrace>> beam_traces;
  int focus = 0;  // beam: index in beams_before of the hypothesis `trace` belongs to

  int chosen = 0;                // the token appended to the focused/best hypothesis
  float chosen_prob = 0;         // its probability under softmax(logits) (temperature 1)
  int argmax = 0;                // the most likely token (differs from `chosen` when sampling/forcing)
  std::vector<Alternative> top;  // the 10 most likely next tokens of the focused hypothesis
  SampleInfo sample;             // Sample: how the distribution was narrowed and the draw
  SamplingTable sampling;        // Sample: raw, tempered and renormalised p of the likeliest tokens
  bool kept = false;             // `chosen` was kept from before a settings change, not drawn again

  std::vector<Beam> beams_before;         // beam: the list this step expanded
  std::vector<BeamCandidate> candidates;  // beam: every proposal, kept or pruned
  std::vector<Beam> beams;                // beam: the list after this step, best first

  std::vector<int> tokens;    // generated tokens after this step (best hypothesis), </s> included
  bool finished = false;      // decoding stops after this step
  std::string finish_reason;  // "</s>", "max length 12", "target consumed", "all beams finished"

  std::vector<int> row_step;  // (rows) the step at which each self-attention K/V row came in
  int64_t cache_bytes = 0;    // self + cross K/V held after this step, all hypotheses (0 if off)
  double millis = 0;          // wall time of the step's computation
};

// The KV cache as of the cursor, for the focused hypothesis. The matrices are the K/V the step
// attended over, gathered from the recording (Session::attended_kv) and kept alive by `hold`: the
// rows a cache holds never change once written, so the recording of the K/V the step attended
// over *is* the cache's contents.
struct KvLayerView {
  const Mat* self_k = nullptr;   // rows [0, self_rows) valid, (·, d); head h: cols [h·dk, (h+1)·dk)
  const Mat* self_v = nullptr;   // same shape
  int self_rows = 0;             // rows held as of the stage
  int new_rows = 0;              // of those, written at the current step (0 before this layer's
                                 // self-attention stage)
  const Mat* cross_k = nullptr;  // (n_src, d) once computed; null before and for decoder-only
  const Mat* cross_v = nullptr;
  bool cross_new = false;  // computed at the current step (step 0)
};
struct KvCacheView {
  bool enabled = true;              // false: the cache is off; the pointers show the K/V recomputed
  int step = -1;                    // the decoder step; -1 on the encoder side (nothing cached yet)
  int sequences = 1;                // hypotheses holding a cache (beam width for beam search)
  std::vector<int> row_step;        // (rows of the fullest layer) step at which each row came in
  std::vector<KvLayerView> layers;  // (L_dec)
  int64_t self_bytes = 0;           // 2 × L × rows × h_kv·d_k × 4 × sequences (layers not yet
                                    // extended counted at their row count), 0 when off
  int64_t cross_bytes = 0;          // 2 × (layers computed) × n_src × d × 4 × sequences, 0 when off
  // The self-attention cache per layer at its row count, beside a multi-head cache of the same
  // model (what grouped-query attention saves); computed with the cache off too (what it would hold).
  KvCacheTable table;
  std::shared_ptr<const void> hold;
};

// One layer's whole K and V as some holder already gathered them for decoder step `step`
// (Session::attended_kv's rows; an attention view's StackedAttention), for Session::cache to point
// into instead of gathering a second copy; `owner` keeps the matrices alive.
struct GatheredKv {
  int step = -1;
  const Mat* k = nullptr;
  const Mat* v = nullptr;
  std::shared_ptr<const void> owner;
};

class Session {
 public:
  // Tokenises and checks the input (empty source, over max_len, forced without a target) and the
  // settings, then runs the encoder. Unknown words become <unk> and are listed in warnings().
  // `keep`: tokens the first steps choose instead of deciding (a settings change keeps the
  // decoded prefix); they must be valid ids, at most the generation limit.
  static Result<Session> create(std::shared_ptr<const Model> model, const std::string& src, const std::string& tgt = "",
                                const DecodeSettings& settings = {}, bool use_cache = true, std::vector<int> keep = {});

  // ---- movement: true when the cursor moved; false leaves everything as it was and sets message()
  bool forward();               // one stage (computes the next step when entering it)
  bool back();                  // one stage
  bool next_token();            // to the Choose stage of this step, or of the next step
  bool prev_token();            // to the Choose stage of the previous step (or Memory / stage 0)
  bool jump(int stage);         // to a stage index (computing steps as needed; clamped at the end)
  bool jump_to_step(int step);  // to the Choose stage of a step
  void run_to_end();            // compute until decoding finishes; cursor on the last stage
  void reset();                 // forget every step; cursor on stage 0 (same input and settings)
  // Computes steps until decoding finishes or `seconds` have passed, at least one step when any is
  // left (a view that opens on a decode: a small model's whole one, a large model's first steps
  // instead of minutes of computing); cursor on the last stage computed. True: decoding finished.
  bool run_for(double seconds);

  // ---- changes that restart (on error nothing changes)
  Result<bool> set_input(const std::string& src, const std::string& tgt = "");
  // A change of temperature, top-k, top-p or seed — or between greedy and sampling — keeps the
  // tokens chosen before the cursor's step and decides again from that step on (a lecturer turns
  // T up mid-sentence); any other change starts over.
  Result<bool> set_settings(const DecodeSettings& s);
  // Recomputes the history with the cache on/off and returns to the same stage, so the two can be
  // compared at one point (the stage list is the same; the logits agree within 1e-5).
  void set_use_cache(bool on);

  // ---- reading
  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> model_ptr() const { return model_; }
  const PreparedInput& input() const { return input_; }
  const std::vector<std::string>& warnings() const { return input_.warnings; }
  const DecodeSettings& settings() const { return settings_; }
  bool use_cache() const { return use_cache_; }
  const std::string& message() const { return message_; }  // last no-op / status message

  int cursor() const { return cursor_; }
  int stage_count() const;       // stages known so far (encoder + computed steps)
  Stage stage(int index) const;  // 0 ≤ index < stage_count()
  Stage current() const { return stage(cursor_); }
  std::vector<Stage> stages() const;  // every known stage
  bool finished() const;              // decoding has stopped (no step to compute)
  bool at_end() const { return finished() && cursor_ == stage_count() - 1; }

  // Encoder recording (null for decoder-only models).
  std::shared_ptr<const EncoderRecord> encoder() const { return encoder_; }
  // Encoder-only models with an MLM head: the top-k predictions at every mask-token position and
  // at `also` (−1: none), in position order. Empty without an MLM head. They are computed with the
  // encoder; a viewer shows them once the cursor reaches the head's stage (the last one).
  std::vector<MaskedPrediction> masked_predictions(int k, int also = -1) const;
  const std::vector<std::shared_ptr<const StepRecord>>& steps() const { return steps_; }
  int current_step() const;                                  // decoder step of the cursor; -1 on the encoder side
  std::shared_ptr<const StepRecord> current_record() const;  // null on the encoder side

  std::vector<int> tokens() const;  // generated tokens as of the cursor (chosen ones only)
  std::string text() const;         // tokens() detokenised, </s> dropped
  // The KV cache as of the cursor. `self` / `cross` ([layer], or empty): K/V already gathered,
  // which the view shares (its pointers point into them) wherever they hold the rows it shows —
  // gathered for the cursor's step, or for an earlier step of a cached recording, whose rows the
  // later steps only extend; every other layer's K/V are gathered for the view.
  KvCacheView cache(const std::vector<GatheredKv>& self = {}, const std::vector<GatheredKv>& cross = {}) const;
  CostReport cost() const;  // at the current step (t = decoder input length)

  // The whole K and V (rows, d) a step's decoder layer attended over (self: every position up to
  // the step's last fed row; cross: the source). A cached step's recording holds only the rows it
  // added (AttentionTrace::kv_row0); this gathers the rest from the steps that wrote them.
  struct Kv {
    Mat k, v;
  };
  Kv attended_kv(int step, int layer, bool cross) const;
  // A step's attention weights for one layer's self- or cross-attention, [head] (the recording's
  // query rows, the keys attended): the recording's own, or for a compact recording (which keeps
  // Q, K and the mask, not the maps) the same numbers computed again by the forward's
  // head_attention. `keys`, when given, is a K that holds the step's keys as its first rows (a
  // later step's attended_kv(...).k), so a caller reading many steps gathers K once.
  std::vector<Mat> attention_weights(int step, int layer, bool cross, const Mat* keys = nullptr) const;
  // Bytes of tensor data the session holds (the encoder's recording and every step's, each shared
  // recording counted once), the model's weights and the live KV caches not included: what a long
  // input costs beyond the model. Grows as O(n·d·layers) with the input length n, plus the
  // prefill's (n_q, n_k) mask per attention kind (its layers share one; each counted once).
  int64_t retained_bytes() const;
  // A step's recording with every attention's whole K/V restored (kv_row0 = 0): what an export
  // or a tensor lookup shows. The stored recording itself when nothing was left out.
  std::shared_ptr<const DecoderTrace> whole_trace(int step) const;

  // A recorded tensor by the name a Stage's TensorRef gives ("encoder.…", "steps.{t}.…").
  std::optional<Tensor> tensor(const std::string& name) const;

 private:
  struct Live;  // the hypotheses being decoded (caches, rng); copied on write

  Session() = default;
  Result<bool> restart();                    // encoder + empty decode state from input_/settings_/use_cache_
  bool compute_next_step();                  // appends to steps_; false when finished
  const std::string& finish_reason() const;  // why decoding stopped (empty while it goes on)
  void own_live();                           // copy-on-write of live_
  int step_first_stage(int step) const;

  std::shared_ptr<const Model> model_;
  std::string src_text_, tgt_text_;
  PreparedInput input_;
  DecodeSettings settings_;
  bool use_cache_ = true;
  int limit_ = 0;          // most steps (generation_limit)
  std::vector<int> keep_;  // tokens the first steps keep instead of deciding (create's `keep`)
  std::shared_ptr<const EncoderRecord> encoder_;
  std::vector<std::shared_ptr<const StepRecord>> steps_;
  std::shared_ptr<Live> live_;
  int cursor_ = 0;
  std::string message_;
};

}  // namespace sf
