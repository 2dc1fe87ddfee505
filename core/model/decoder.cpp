#include "model/decoder.h"

#include "base/phase_timer.h"
#include "base/prefetch.h"
#include "model/encoder.h"
#include "model/linear.h"
#include "model/mask.h"
#include "model/sublayers.h"

namespace sf {

namespace {

// Masks for masked self-attention: key j visible to query i iff j <= pos0 + i (causal, unless
// switched off for the "leak" demonstration), j > pos0 + i − W with a sliding window W, and key j
// is not <pad>.
std::vector<Mat> self_masks(const Model& m, const std::vector<int>& tgt_ids, int batch, const KvCache* cache,
                            bool causal) {
  const ScopedPhase phase(Phase::Embedding);
  const size_t mlen = tgt_ids.size() / static_cast<size_t>(batch);
  std::vector<Mat> masks;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> keys = cache ? cache->sequence_ids(b) : std::vector<int>{};
    const int pos0 = static_cast<int>(keys.size());
    keys.insert(keys.end(), tgt_ids.begin() + static_cast<std::ptrdiff_t>(b * mlen),
                tgt_ids.begin() + static_cast<std::ptrdiff_t>((b + 1) * mlen));
    masks.push_back(
        make_mask(static_cast<int>(mlen), keys, decoder_pad_key(m.config), causal, pos0, m.config.sliding_window));
  }
  return masks;
}

// The first `rows` cached rows of every sequence of a self-attention buffer (B·max_len, d),
// stacked (B·rows, d) as attention reads them (a copy: one sequence reads its buffer in place).
Mat cached_rows(const Mat& buffer, const KvCache& cache, int rows) {
  Mat out(cache.batch * rows, buffer.cols());
  for (int b = 0; b < cache.batch; ++b) out.middleRows(b * rows, rows) = buffer.middleRows(b * cache.capacity, rows);
  return out;
}

// Asks for the cached K and V rows this call's attention reads (`rows` of every sequence) before
// the layer's projections run: they arrive while the products stream the weights, and the heads
// then read them from the cache instead of waiting on memory row by row (SmolLM2-135M's heads at
// t = 129: 0.26–0.29 against 0.32–0.33 ms a step, alternated).
void prefetch_cached_rows(const KvCacheLayer& kv, const KvCache& cache, int rows) {
  if (rows == 0) return;
  for (int b = 0; b < cache.batch; ++b)
    for (const Mat* m : {&kv.self_k, &kv.self_v})
      prefetch_bytes(m->row(b * cache.capacity).data(), int64_t{rows} * m->cols() * int64_t{sizeof(float)});
}

// One decode call: what every layer reads besides its own weights.
struct DecodeCall {
  const Model& m;
  const EncoderContext& enc;
  KvCache* cache;               // null: the whole target at once
  const MaskList& masks;        // [b] self-attention (m, keys), one copy for every layer
  const MaskList& cross_masks;  // [b] cross-attention (m, n_src)
  Heads heads;
  const Rotation* rot;  // null: q and k are not turned
  const Intervention* iv;
  int batch, mlen, pos0;
};

// Sizes the recording for this call's layers.
void start_trace(DecoderTrace& tr, const Config& c, int batch, int pos0) {
  tr.batch = batch;
  tr.pos0 = pos0;
  tr.layers.resize(static_cast<size_t>(c.n_decoder_layers));
  tr.ffn = c.has_ffn();
  spread_kind(tr);
}

// Masked self-attention of one layer. Without a cache over the block's own rows; with one, only
// the new rows are projected (and rotated) and appended, and attention reads every cached row.
void self_attention(const DecodeCall& r, const DecoderLayerWeights& w, KvCacheLayer* kv, const Mat& in, Mat& out,
                    AttentionTrace* at, const Hook& hook) {
  const int batch = r.batch, mlen = r.mlen, pos0 = r.pos0;
  if (!kv) {
    attention_forward(w.self_attn, r.heads, in, in, r.masks, out, at, r.rot, &hook);
  } else {
    prefetch_cached_rows(*kv, *r.cache, pos0);
    Mat q, k_new, v_new;  // (B·m, h·dk), (B·m, h_kv·dk) twice
    project_self(w.self_attn, in, r.rot, q, k_new, v_new,
                 at && at->kind == Recording::Full ? &at->k_unrotated : nullptr);
    const int capacity = r.cache->capacity;
    for (int b = 0; b < batch; ++b) {
      kv->self_k.middleRows(b * capacity + pos0, mlen) = k_new.middleRows(b * mlen, mlen);
      kv->self_v.middleRows(b * capacity + pos0, mlen) = v_new.middleRows(b * mlen, mlen);
    }
    if (batch == 1)  // the common case: attend over the buffers in place
      attention_with_qkv(w.self_attn, r.heads, std::move(q), kv->self_k.topRows(pos0 + mlen),
                         kv->self_v.topRows(pos0 + mlen), r.masks, out, at, r.rot, &hook);
    else
      attention_with_qkv(w.self_attn, r.heads, std::move(q), cached_rows(kv->self_k, *r.cache, pos0 + mlen),
                         cached_rows(kv->self_v, *r.cache, pos0 + mlen), r.masks, out, at, r.rot, &hook);
  }
  if (hook.output(out) && at && at->kind != Recording::Training) at->out = out;
}

// Cross-attention of one layer over the encoder's memory; with a cache, the memory's K and V are
// projected once (they depend on nothing else) and reused at every step.
void cross_attention(const DecodeCall& r, const DecoderLayerWeights& w, KvCacheLayer* kv, const Mat& in, Mat& out,
                     AttentionTrace* at, const Hook& hook) {
  const int n_heads = r.m.config.n_heads;
  if (!kv) {
    attention_forward(w.cross_attn, n_heads, in, *r.enc.memory, r.cross_masks, out, at, nullptr, &hook);
  } else {
    if (!kv->cross_ready) {
      linear_forward_same_input(*r.enc.memory,
                                {{&w.cross_attn.k_proj, &kv->cross_k}, {&w.cross_attn.v_proj, &kv->cross_v}});
      kv->cross_ready = true;
    }
    attention_with_kv(w.cross_attn, n_heads, in, kv->cross_k, kv->cross_v, r.cross_masks, out, at, nullptr, &hook);
  }
  if (hook.output(out) && at && at->kind != Recording::Training) at->out = out;
}

// Decoder layer l on the residual stream x (B·m, d), in place: masked self-attention, cross-
// attention (encoder-decoder) and the feed-forward sublayer, each in its residual connection — or
// attention and MLP side by side on one stream (the parallel residual).
void decoder_layer(const DecodeCall& r, int l, Mat& x, DecoderLayerTrace* lt) {
  const Config& c = r.m.config;
  const DecoderLayerWeights& w = r.m.weights.decoder[static_cast<size_t>(l)];
  KvCacheLayer* kv = r.cache ? &r.cache->layers[static_cast<size_t>(l)] : nullptr;
  if (r.iv) r.iv->stream(Stack::Decoder, l, x, r.batch, r.pos0);
  const Hook self_hook{r.iv, Stack::Decoder, SiteKind::SelfAttention, l, r.batch, r.pos0};
  const Hook cross_hook{r.iv, Stack::Decoder, SiteKind::CrossAttention, l, r.batch, r.pos0};
  const Hook mlp_hook{r.iv, Stack::Decoder, SiteKind::Mlp, l, r.batch, r.pos0};
  const auto self_sublayer = [&](const Mat& in, Mat& out) {
    self_attention(r, w, kv, in, out, lt ? &lt->self_attn : nullptr, self_hook);
  };
  Mat y;
  if (c.residual == Residual::Parallel) {
    parallel_residual_block(
        w.norm1, w.norm2, x, self_sublayer,
        [&](const Mat& in, Mat& out) { mlp_sublayer(c, w.ffn, in, out, lt ? &lt->ffn : nullptr, mlp_hook); }, y,
        lt ? &lt->self_block : nullptr, lt ? &lt->ffn_block : nullptr);
    x = std::move(y);
    return;
  }
  residual_block(c.norm, w.norm1, x, self_sublayer, y, lt ? &lt->self_block : nullptr);
  if (c.has_cross_attention()) {
    Mat z;
    residual_block(
        c.norm, w.norm2, y,
        [&](const Mat& in, Mat& out) {
          cross_attention(r, w, kv, in, out, lt ? &lt->cross_attn : nullptr, cross_hook);
        },
        z, lt ? &lt->cross_block : nullptr);
    y = std::move(z);
  }
  if (!c.has_ffn()) {  // an attention-only layer ends with its attention block
    x = std::move(y);
    return;
  }
  ffn_connection(c, w.ffn_norm(c.arch), w.ffn, y, x, lt ? &lt->ffn : nullptr, lt ? &lt->ffn_block : nullptr, mlp_hook);
}

// The cache takes this call's tokens: their ids, the step that added them, the new length.
void advance_cache(KvCache& cache, const std::vector<int>& tgt_ids, int mlen) {
  cache.append_ids(tgt_ids);
  cache.row_step.insert(cache.row_step.end(), static_cast<size_t>(mlen), cache.step);
  cache.length += mlen;
  cache.step += 1;
}

// The stack's output and its logits, as much of them as the recording keeps.
void record_output(DecoderTrace& tr, Mat&& x, const Mat& logits, int batch) {
  const ScopedPhase phase(Phase::RecordingCopy);
  tr.output = std::move(x);
  if (tr.kind == Recording::Compact) {
    // The last row only (one sequence): the next-token distribution. A prefill's other rows
    // (1000 GPT-2 prompt tokens: 200 MB) are recomputed from `output` by Session::whole_trace.
    tr.logits = batch == 1 ? Mat(logits.bottomRows(1)) : logits;  // decode() computed only that row
  } else if (tr.kind == Recording::Training) {
    tr.logits = logits;  // the trainer's loss reads the returned logits; no distributions
  } else {
    record_logits(logits, tr.logits, tr.log_probs, tr.probs);
  }
}

}  // namespace

Mat decode(const Model& m, const std::vector<int>& tgt_ids, int batch, const EncoderContext& enc, KvCache* cache,
           DecoderTrace* tr, const RunOptions& opt) {
  const Config& c = m.config;
  const int rows = static_cast<int>(tgt_ids.size());
  const int mlen = rows / batch;
  const int pos0 = cache ? cache->length : 0;
  if (cache) cache->reserve(pos0 + mlen);
  const MaskList masks = self_masks(m, tgt_ids, batch, cache, opt.causal_mask);
  const MaskList cross_masks =
      c.has_cross_attention() ? source_masks(m, *enc.src_ids, batch, mlen) : std::vector<Mat>{};
  if (tr) start_trace(*tr, c, batch, pos0);

  Mat x;  // (B·m, d) the residual stream
  embed(m.embedding(/*source=*/false), tgt_ids, batch, pos0, opt.positional_encoding, x, tr ? &tr->embed : nullptr);

  Rotation rotation = m.rotation(pos0, mlen);
  // A rotary model without positional encoding (the explorer's switch, the word order test):
  // q and k are not turned, so the scores do not see positions.
  const Rotation* rot = c.positional == Positional::Rotary && opt.positional_encoding ? &rotation : nullptr;
  if (rot) tabulate_angles(rotation);
  const DecodeCall call{
      m,     enc,  cache, masks, cross_masks, Heads(c.n_heads, c.kv_heads()), rot, opt.intervention.get(),
      batch, mlen, pos0};
  for (int l = 0; l < c.n_decoder_layers; ++l)
    decoder_layer(call, l, x, tr ? &tr->layers[static_cast<size_t>(l)] : nullptr);
  close_stack(c.norm, m.weights.decoder_norm, x, tr ? &tr->final_norm : nullptr);
  Mat logits;  // (B·m, V); a compact recording of one sequence: the last row's, (1, V)
  if (tr && tr->kind == Recording::Compact && batch == 1 && x.rows() > 1)
    generator_forward(m.weights, c, Mat(x.bottomRows(1)), logits);
  else
    generator_forward(m.weights, c, x, logits);

  if (cache) advance_cache(*cache, tgt_ids, mlen);
  if (tr) record_output(*tr, std::move(x), logits, batch);
  return logits;
}

}  // namespace sf
