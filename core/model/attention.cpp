#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/cached_attention.h"
#include "base/gemm.h"
#include "base/phase_timer.h"
#include "base/prefetch.h"
#include "base/threads.h"
#include "base/vmath.h"
#include "model/linear.h"
#include "model/mask.h"

namespace sf {

namespace {

// The max and the sum of a row in interleaved chains: one chain of dependent max or add
// instructions (3 to 4 cycles each) per key would bound a softmax row by latency. The sum keeps
// four chains, the order its bits depend on; the max takes the same value in any order, so a long
// row's runs in 64 (four registers of 16), the rest of it and a short row's in four.
float row_max(const float* x, Eigen::Index n) {
  constexpr int L = 64;
  float m[L];
  for (float& v : m) v = x[0];
  Eigen::Index j = 0;
  for (; j + L <= n; j += L)
    for (int l = 0; l < L; ++l) m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
  for (int w = n >= L ? L / 2 : 0; w >= 4; w /= 2)  // 64 chains into four
    for (int l = 0; l < w; ++l) m[l] = m[l + w] > m[l] ? m[l + w] : m[l];
  for (; j + 4 <= n; j += 4)
    for (int l = 0; l < 4; ++l) m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
  for (; j < n; ++j) m[0] = x[j] > m[0] ? x[j] : m[0];
  const float a = m[0] > m[1] ? m[0] : m[1], b = m[2] > m[3] ? m[2] : m[3];
  return a > b ? a : b;
}
float row_sum(const float* x, Eigen::Index n) {
  float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  Eigen::Index j = 0;
  for (; j + 4 <= n; j += 4)
    for (int l = 0; l < 4; ++l) s[l] += x[j + l];
  for (; j < n; ++j) s[0] += x[j];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// Asks for a block (rows × cols floats, rows `stride` apart) ahead of use. A head's operands are
// a few dozen short rows, each on lines of its own, too few for the hardware prefetchers to follow:
// the per-head products waited on them.
void prefetch_block(const float* p, Eigen::Index rows, Eigen::Index cols, Eigen::Index stride) {
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; c += 16) prefetch_line<0, 3>(p + r * stride + c);
}

// The head the loops over (sequence b, head h) reach after (b, h): false after the last.
bool next_head(int b, int h, int batch, int n_heads, int& nb, int& nh) {
  nb = h + 1 < n_heads ? b : b + 1;
  nh = h + 1 < n_heads ? h + 1 : 0;
  return nb < batch;
}

}  // namespace

namespace {

// The softmax's passes over rows [0, n_rows) of p, `cols` floats each and consecutive, against
// the mask's rows mk (the same layout): scale and mask, subtract the row's max, exp, zero the
// masked keys, divide by the row's sum. No branches on the data: a causal mask moves its cut every
// row, which a branch mispredicts.
void softmax_rows(float* p, const float* mk, Eigen::Index n_rows, Eigen::Index cols, float scale) {
  const Eigen::Index size = n_rows * cols;
  // (mk is 0 or −inf: p · scale + mk is the rounded product, or −inf, contracted to an FMA or not)
  for (Eigen::Index i = 0; i < size; ++i) p[i] = p[i] * scale + mk[i];
  for (Eigen::Index i = 0; i < n_rows; ++i) {
    float* row = p + i * cols;
    const float mx = row_max(row, cols);
    // every key masked: keep −inf (not −inf − −inf = NaN); zeroed below
    const float shift = mx == kMasked ? 0.0f : mx;
    for (Eigen::Index j = 0; j < cols; ++j) row[j] -= shift;
  }
  // exp_value gives ~1e−38, not 0, for −inf: a masked key must get exactly 0 (the row still
  // sums to 1: those terms are below float resolution next to the unmasked ones).
  for (Eigen::Index i = 0; i < size; ++i) p[i] = mk[i] == kMasked ? 0.0f : exp_value(p[i]);
  for (Eigen::Index i = 0; i < n_rows; ++i) {
    float* row = p + i * cols;
    const float sum = row_sum(row, cols);
    // every key masked: no distribution to form, the row stays 0 (not 0/0)
    const float div = sum > 0.0f ? sum : 1.0f;
    for (Eigen::Index j = 0; j < cols; ++j) row[j] /= div;
  }
}

// softmax_rows for one row whose mask is 0 on keys [0, cut) and −inf on [cut, n): the same passes
// and the same bits without reading the mask. The masked keys' terms are exactly 0 in the sum, which
// runs over the keys up to the next multiple of 4 (or n), so that every kept term lands in the
// chain it does over the whole row (row_sum).
void softmax_prefix(float* row, Eigen::Index cut, Eigen::Index n, float scale) {
  for (Eigen::Index j = 0; j < cut; ++j) row[j] *= scale;  // (p · scale + 0: the same float)
  std::fill(row + cut, row + n, 0.0f);
  if (cut == 0) return;  // every key masked: the row stays 0
  const float mx = row_max(row, cut);
  const float shift = mx == kMasked ? 0.0f : mx;
  for (Eigen::Index j = 0; j < cut; ++j) row[j] = exp_value(row[j] - shift);
  const float sum = row_sum(row, std::min(n, (cut + 3) / 4 * 4));
  const float div = sum > 0.0f ? sum : 1.0f;
  for (Eigen::Index j = 0; j < cut; ++j) row[j] /= div;
}

// One long row's softmax over its first n keys: without the mask when the row is a prefix row
// (cut ≥ 0, QueryBlocks::cut), else against its mask row mk.
void softmax_row(float* row, const float* mk, Eigen::Index cut, Eigen::Index n, float scale) {
  if (cut >= 0) return softmax_prefix(row, std::min(cut, n), n, scale);
  softmax_rows(row, mk, 1, n, scale);
}

// Keys from which a row counts as long: the softmax runs such rows one at a time, its passes over
// lines still in L1 rather than over a matrix (4 MB at 1,024 tokens) that spills to L3 between them.
constexpr Eigen::Index kLongRow = 64;

}  // namespace

void masked_softmax(Mat& s, const Mat& mask, float scale) {
  // Short rows (a handful of keys, 11 in the copy task's training, shorter than one SIMD register)
  // go through whole-matrix passes (the n_q · n_k floats are contiguous); long ones (a prompt's
  // hundreds of keys) row by row. The same operations on every entry either way.
  const Eigen::Index rows = s.rows(), cols = s.cols();
  if (s.size() == 0) return;                              // no queries, or no keys to attend to
  const Eigen::Index band = cols >= kLongRow ? 1 : rows;  // rows per pass
  for (Eigen::Index r0 = 0; r0 < rows; r0 += band)
    softmax_rows(s.data() + r0 * cols, mask.data() + r0 * cols, std::min(band, rows - r0), cols, scale);
}

namespace {

// What a long row's mask (n keys of 0 or −inf) leaves visible: 1 + its last unmasked key, and its
// cut when it is 0 on [0, cut) and −inf on [cut, n) (else −1; QueryBlocks::cut). GPT-2's mask over
// 1,024 tokens (4 MB) is read once per layer, in one pass of sums the compiler vectorises: a row
// of only 0 and −inf is such a row exactly when its z zeros sit at keys 0 … z − 1, the only z keys
// whose indices add up to z(z − 1)/2. Other rows (a padded key among the visible ones) then find
// their last unmasked key from the end.
struct RowKeys {
  Eigen::Index visible, cut;
};
RowKeys row_keys(const float* mk, Eigen::Index n) {
  constexpr uint32_t kMaskedBits = 0xFF800000u;  // −inf
  int64_t zeros = 0, zero_at = 0, other = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    uint32_t u;
    std::memcpy(&u, mk + j, sizeof u);
    const bool zero = u == 0, masked = u == kMaskedBits;
    zeros += zero;
    zero_at += zero ? j : 0;
    other += !(zero || masked);
  }
  if (other == 0 && zero_at == zeros * (zeros - 1) / 2) return {zeros, zeros};
  Eigen::Index j = n;
  while (j > 0 && mk[j - 1] == kMasked) --j;
  return {j, -1};
}

}  // namespace

QueryBlocks visible_keys(const Mat& mask) {
  const Eigen::Index rows = mask.rows(), cols = mask.cols();
  QueryBlocks qb;
  if (cols < kLongRow) return QueryBlocks{{0, rows}, {cols}, {}};
  std::vector<Eigen::Index> visible;  // (rows)
  for (Eigen::Index r = 0; r < rows; ++r) {
    const RowKeys k = row_keys(mask.data() + r * cols, cols);
    visible.push_back(k.visible);
    qb.cut.push_back(k.cut);
  }
  // Blocks of QueryBlocks::kRows rows, the last one taking the rest (never a block of one row, which the
  // product would run as a matrix-vector product, summing in another order).
  const Eigen::Index count = std::max<Eigen::Index>(1, rows / QueryBlocks::kRows);
  bool skips = false;
  for (Eigen::Index blk = 0; blk < count; ++blk) {
    const Eigen::Index r0 = blk * QueryBlocks::kRows, r1 = blk + 1 < count ? r0 + QueryBlocks::kRows : rows;
    Eigen::Index seen = 0;  // 1 + the last key a row of the block leaves unmasked
    for (Eigen::Index r = r0; r < r1; ++r) seen = std::max(seen, visible[static_cast<size_t>(r)]);
    const Eigen::Index keys = std::min(cols, (seen + 3) / 4 * 4);
    skips = skips || keys < cols;
    qb.start.push_back(r0);
    qb.keys.push_back(keys);
  }
  qb.start.push_back(rows);
  if (!skips) {
    qb.start = {0, rows};
    qb.keys = {cols};
  }
  return qb;
}

namespace {

// The blocks a head runs in: visible_keys' for several queries, one block over every key for one
// query (a cached step) or when every raw score is kept (a full recording).
QueryBlocks head_blocks(const Mat& mask, bool keep_raw) {
  if (mask.rows() > 1 && !keep_raw) return visible_keys(mask);
  return QueryBlocks{{0, mask.rows()}, {mask.cols()}, {}};
}

// softmax(Q_h K_hᵀ · scale + mask) of one head into s (n_q, n_k), each block's scores and softmax
// over the keys it sees and 0 for the rest: Q_h at qh (n_q, dk), row stride lq; K_hᵀ (dk, n_k).
// Q_h K_hᵀ goes to `raw` when given (qb then one block over every key: head_blocks).
void head_weights(const float* qh, Eigen::Index lq, MatRef kh_t, int dk, const Mat& mask, const QueryBlocks& qb,
                  float scale, Mat& s, Mat* raw) {
  const Eigen::Index nq = mask.rows(), nk = mask.cols();
  s.resize(nq, nk);
  if (qb.whole(nk)) {
    {
      const ScopedPhase phase(Phase::HeadsForward);
      gemm(nq, nk, dk, {qh, lq, 1}, kh_t, s.data(), nk, GemmOut::Overwrite);  // Q_h K_hᵀ
    }
    if (raw) *raw = s;
    const ScopedPhase phase(Phase::Softmax);
    if (qb.cut.empty()) return masked_softmax(s, mask, scale);
    for (Eigen::Index i = 0; i < nq; ++i)
      softmax_row(s.data() + i * nk, mask.data() + i * nk, qb.cut[static_cast<size_t>(i)], nk, scale);
    return;
  }
  // K_hᵀ packed once for all the blocks, each reading the leading columns it sees (packing it block
  // by block costs a quarter of Q_h K_hᵀ's time in GPT-2's heads over 1,024 tokens).
  thread_local PackedB kh_t_packed;
  {
    const ScopedPhase phase(Phase::HeadsForward);
    pack_b_into(kh_t, dk, nk, kh_t_packed);
  }
  for (size_t blk = 0; blk < qb.keys.size(); ++blk) {
    const Eigen::Index r0 = qb.start[blk], rows = qb.start[blk + 1] - r0, keys = qb.keys[blk];
    float* const sb = s.data() + r0 * nk;
    {
      const ScopedPhase phase(Phase::HeadsForward);
      gemm(rows, keys, dk, {qh + r0 * lq, lq, 1}, kh_t_packed, sb, nk, GemmOut::Overwrite);  // the keys it sees
    }
    const ScopedPhase phase(Phase::Softmax);
    for (Eigen::Index i = 0; i < rows; ++i) {
      float* const row = sb + i * nk;
      const Eigen::Index cut = qb.cut.empty() ? -1 : qb.cut[static_cast<size_t>(r0 + i)];
      softmax_row(row, mask.data() + (r0 + i) * nk, cut, keys, scale);
      std::fill(row + keys, row + nk, 0.0f);  // masked keys: exactly 0, as the softmax gives them
    }
  }
}

// softmax(q_h K_hᵀ · scale + mask) of heads [c.h0, c.h1) of one query (a cached step) into s
// (h1 − h0, n_k): their scores from one pass over K's rows (base/cached_attention.h), K (n_k, ·)
// with row stride lk, then each head's softmax; head h's raw scores go to raw[h − h0] first when
// raw is given.
void one_query_weights(const float* q, const float* k, Eigen::Index lk, const CachedHeads& c, const Mat& mask,
                       float scale, float* s, Mat* raw) {
  {
    const ScopedPhase phase(Phase::HeadsForward);
    cached_scores(q, k, lk, c, s, c.n);
  }
  for (Eigen::Index h = c.h0; h < c.h1; ++h) {
    float* const row = s + (h - c.h0) * c.n;
    if (raw) raw[h - c.h0] = Eigen::Map<const Mat>(row, 1, c.n);
    if (c.n == 0) continue;  // no keys: nothing to normalise
    const ScopedPhase phase(Phase::Softmax);
    softmax_rows(row, mask.data(), 1, c.n, scale);
  }
}

}  // namespace

const std::vector<Mat>& MaskList::list() const {
  static const std::vector<Mat> none;
  return masks_ ? *masks_ : none;
}

bool share_if_same(MaskList& a, const MaskList& b) {
  if (a.storage() == b.storage()) return true;
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  a = b;
  return true;
}

std::vector<Mat> AttentionTrace::all_scores() const {
  std::vector<Mat> out;
  for (size_t i = 0; i < raw_scores.size(); ++i) out.push_back(scores(i));
  return out;
}

void attend(const Eigen::Ref<const Mat>& q, const Eigen::Ref<const Mat>& k, const Eigen::Ref<const Mat>& v, Heads heads,
            const MaskList& masks, Mat& concat, AttentionTrace* tr) {
  const int n_heads = heads.q;
  const int B = static_cast<int>(masks.size());
  const int d = static_cast<int>(q.cols());  // h·dk
  const int dk = d / n_heads;
  const int dkv = static_cast<int>(k.cols());  // h_kv·dk
  const int nq = static_cast<int>(q.rows()) / B;
  const int nk = static_cast<int>(k.rows()) / B;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  concat.resize(q.rows(), d);
  if (tr) {
    tr->n_heads = n_heads;
    tr->n_kv_heads = heads.kv;
    tr->batch = B;
    tr->scale = scale;
    tr->kv_row0 = 0;
    tr->raw_scores.resize(tr->kind == Recording::Full ? static_cast<size_t>(B * n_heads) : 0);
    tr->weights.resize(tr->kind == Recording::Compact ? 0 : static_cast<size_t>(B * n_heads));
    const ScopedPhase phase(Phase::RecordingCopy);
    if (tr->kind != Recording::Training) tr->masks = masks;  // (the backward does not read them)
  }
  // A compact recording keeps Q, K and the mask, from which head_attention gives any head's map
  // again: a long prefill never holds every head's (n_q, n_k) weights at once.
  const bool keep_weights = tr && tr->kind != Recording::Compact;
  const Eigen::Index lq = q.outerStride(), lk = k.outerStride(), lv = v.outerStride();
  // Kᵀ (h_kv·dk, B·n_k), transposed once rather than head by head inside the products, when
  // several queries read each key. One query (a cached decoding step) reads K's rows as they are
  // (query_heads below), where transposing would double the traffic over the cache.
  Mat kt;
  if (nq > 1) kt.resize(dkv, k.rows());
  // Part i of `parts` of Kᵀ: a range of K's rows (every sequence's keys, every K/V head) in one
  // transpose, not one per head and sequence (the copy task's training ran 1,536 transposes of
  // 11 × 32 floats a step, whose calls cost more than their copying).
  const auto transpose_keys = [&](int i, int parts) {
    const ScopedPhase phase(Phase::Transpose);
    const Eigen::Index r0 = k.rows() * i / parts, r1 = k.rows() * (i + 1) / parts;
    transpose_copy(k.data() + r0 * lk, lk, r1 - r0, dkv, kt.data() + r0, kt.cols());
  };
  // The keys each block of queries sees, per sequence (one block over every key when the masks
  // hide no suffix of keys, or a full recording keeps every raw score).
  const bool raw = tr && tr->kind == Recording::Full;
  std::vector<QueryBlocks> blocks;
  for (int b = 0; b < B; ++b) blocks.push_back(head_blocks(masks[static_cast<size_t>(b)], raw));
  // Head h of sequence b's several queries: scores, softmax, values into its columns of concat;
  // `scratch` holds its (n_q, n_k) weights when no recording keeps them.
  const auto one_head = [&](int b, int h, Mat& scratch) {
    int nb, nh;
    if (next_head(b, h, B, n_heads, nb, nh)) {  // the next head's operands
      const int nkvh = heads.kv_of(nh);
      prefetch_block(q.data() + nb * nq * lq + nh * dk, nq, dk, lq);
      prefetch_block(v.data() + nb * nk * lv + nkvh * dk, nk, dk, lv);
      prefetch_block(kt.data() + nkvh * dk * kt.cols() + nb * nk, dk, nk, kt.cols());
    }
    const int kvh = heads.kv_of(h);                                              // the K/V head query head h reads
    const float* qh = q.data() + b * nq * lq + h * dk;                           // (n_q, dk), row stride lq
    const float* vh = v.data() + b * nk * lv + kvh * dk;                         // (n_k, dk), row stride lv
    const MatRef kh_t{kt.data() + kvh * dk * kt.cols() + b * nk, kt.cols(), 1};  // K_hᵀ (dk, n_k)
    const size_t idx = static_cast<size_t>(b * n_heads + h);
    Mat& s = keep_weights ? tr->weights[idx] : scratch;  // (n_q, n_k)
    const Mat& mask = masks[static_cast<size_t>(b)];
    const QueryBlocks& qb = blocks[static_cast<size_t>(b)];
    head_weights(qh, lq, kh_t, dk, mask, qb, scale, s, raw ? &tr->raw_scores[idx] : nullptr);
    const ScopedPhase phase(Phase::HeadsForward);
    float* const out = concat.data() + b * nq * d + h * dk;  // the head's columns of concat (n_q, dk)
    if (qb.keys.size() == 1) {
      gemm(nq, dk, qb.keys[0], {s.data(), nk, 1}, {vh, lv, 1}, out, d, GemmOut::Overwrite);  // P V_h
      return;
    }
    // Several blocks: V_h packed once for all of them, each reading the leading rows (keys) it sees.
    thread_local PackedB vh_packed;
    pack_b_into({vh, lv, 1}, nk, dk, vh_packed);
    for (size_t blk = 0; blk < qb.keys.size(); ++blk) {
      const Eigen::Index r0 = qb.start[blk], rows = qb.start[blk + 1] - r0;
      gemm(rows, dk, qb.keys[blk], {s.data() + r0 * nk, nk, 1}, vh_packed, out + r0 * d, d, GemmOut::Overwrite);
    }
  };
  // Heads [h0, h1) of sequence b's one query (a cached step): their weights (one_query_weights),
  // then their values from one pass over V's rows; `scratch` holds the (h1 − h0, n_k) weights.
  const auto query_heads = [&](int b, int h0, int h1, Mat& scratch) {
    const CachedHeads c{dk, n_heads / heads.kv, h0, h1, nk};
    scratch.resize(h1 - h0, nk);
    const size_t first = static_cast<size_t>(b * n_heads + h0);  // head h0's recording
    one_query_weights(q.data() + b * lq, k.data() + b * nk * lk, lk, c, masks[static_cast<size_t>(b)], scale,
                      scratch.data(), raw ? &tr->raw_scores[first] : nullptr);
    if (keep_weights)
      for (int h = h0; h < h1; ++h) tr->weights[first + static_cast<size_t>(h - h0)] = scratch.row(h - h0);
    const ScopedPhase phase(Phase::HeadsForward);
    cached_values(scratch.data(), nk, v.data() + b * nk * lv, lv, c, concat.data() + b * d);
  };
  const int n_items = B * n_heads;
  int T = 1;
#ifdef _OPENMP
  // Enough work to pay for waking the cores: they share the heads, each head whole (its products
  // then run on one core each, and give the same bits as on one core). The softmax and the small
  // products of a short input then run in parallel too. Several queries per head need 2²⁰
  // multiply-adds. One query (a cached step) needs 2¹⁶, since its threads are awake from the
  // projection just before it, and splits only while the step's products do (a region that waits
  // for a busy core costs a scheduler slice, model/linear.h): SmolLM2-135M's 30 layers of one-query
  // attention at t = 129 (2¹⁶·1.1 multiply-adds each) take 0.32–0.34 ms on one core and
  // 0.31–0.34 ms on two: each core's range of heads reads part of every cache row, which streams
  // worse than whole rows, so two cores gain little here.
  const int64_t work = int64_t{nq} * nk * dk * n_items;
  const bool enough = nq > 1 ? work >= (int64_t{1} << 20) : work >= (int64_t{1} << 16) && small_splits_pay();
  if (n_items > 1 && enough && !omp_in_parallel()) T = std::min(threads(), n_items);
#endif
  // The work items: a head of a sequence for several queries; for one query, a range of its heads,
  // all of them on one core, else as many ranges as the threads need.
  const int parts = nq > 1 ? n_heads : std::min(n_heads, (T + B - 1) / B);
  const auto run_item = [&](int i, Mat& scratch) {
    const int b = i / parts, part = i % parts;
    if (nq > 1) return one_head(b, part, scratch);
    query_heads(b, part * n_heads / parts, (part + 1) * n_heads / parts, scratch);
  };
  const int n_run = B * parts;
  if (T <= 1) {
    if (nq > 1) transpose_keys(0, 1);
    Mat scratch;
    for (int i = 0; i < n_run; ++i) run_item(i, scratch);
    return;
  }
  RegionErrors errors;  // a head's scratch, or its recorded weights, may fail to allocate
#ifdef _OPENMP
  // One region: the threads share the transpose, then (after a barrier) the heads.
#pragma omp parallel num_threads(T)
  {
    if (nq > 1) transpose_keys(omp_get_thread_num(), omp_get_num_threads());
#pragma omp barrier
    Mat scratch;
#pragma omp for schedule(static)
    for (int i = 0; i < n_run; ++i) errors.run([&] { run_item(i, scratch); });
  }
#endif
  errors.rethrow();
}

void head_attention(const Eigen::Ref<const Mat>& q, const Eigen::Ref<const Mat>& k, Heads heads, int head,
                    const Mat& mask, Mat& weights, Mat* raw) {
  const int dk = static_cast<int>(q.cols()) / heads.q;
  const int nq = static_cast<int>(q.rows()), nk = static_cast<int>(k.rows());
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));  // as attend() forms it
  const int kvh = heads.kv_of(head);
  if (nq == 1) {  // as attend() reads one query: K's rows as they are
    weights.resize(1, nk);
    one_query_weights(q.data(), k.data(), k.outerStride(), CachedHeads{dk, heads.q / heads.kv, head, head + 1, nk},
                      mask, scale, weights.data(), raw);
    return;
  }
  // K_hᵀ as attend() reads it: transposed (its columns of it) when several queries read each key.
  Mat kt(dk, nk);
  transpose_copy(k.data() + kvh * dk, k.outerStride(), nk, dk, kt.data(), kt.cols());
  head_weights(q.data() + head * dk, q.outerStride(), MatRef{kt.data(), kt.cols(), 1}, dk, mask,
               head_blocks(mask, raw != nullptr), scale, weights, raw);
}

namespace {

// Rotates the projected q when `rot` is given, runs the core over k, v, applies W_o; records Q,
// concat and the output, and K/V only when record_kv (attention_forward moves its own K/V into
// the trace instead of copying).
void attend_projected(const AttentionWeights& w, Heads heads, Mat q, const Eigen::Ref<const Mat>& k,
                      const Eigen::Ref<const Mat>& v, const MaskList& masks, Mat& out, AttentionTrace* tr,
                      bool record_kv, const Rotation* rot, const Hook* hook) {
  Mat concat;  // (B·n_q, h·dk)
  if (rot) {
    if (tr && tr->kind == Recording::Full) tr->q_unrotated = q;
    apply_rotary(q, *rot);
  }
  attend(q, k, v, heads, masks, concat, tr);
  if (hook) hook->heads(concat, heads.q);
  linear_forward(concat, w.o_proj, out);
  if (tr) {
    tr->q = std::move(q);
    if (record_kv) {
      tr->k = k;
      tr->v = v;
    }
    tr->concat = std::move(concat);
    if (tr->kind != Recording::Training) tr->out = out;
  }
}

// K turned by the rotation when one is given, its unrotated projection kept in `unrotated` when
// given.
void rotate_keys(Mat& k, const Rotation* rot, Mat* unrotated) {
  if (!rot) return;
  if (unrotated) *unrotated = k;
  apply_rotary(k, *rot);
}

}  // namespace

void attention_with_kv(const AttentionWeights& w, Heads heads, const Mat& x_q, const Eigen::Ref<const Mat>& k,
                       const Eigen::Ref<const Mat>& v, const MaskList& masks, Mat& out, AttentionTrace* tr,
                       const Rotation* rot, const Hook* hook) {
  Mat q;  // (B·n_q, h·dk)
  linear_forward(x_q, w.q_proj, q);
  attention_with_qkv(w, heads, std::move(q), k, v, masks, out, tr, rot, hook);
}

void attention_with_qkv(const AttentionWeights& w, Heads heads, Mat q, const Eigen::Ref<const Mat>& k,
                        const Eigen::Ref<const Mat>& v, const MaskList& masks, Mat& out, AttentionTrace* tr,
                        const Rotation* rot, const Hook* hook) {
  attend_projected(w, heads, std::move(q), k, v, masks, out, tr, true, rot, hook);
}

void project_self(const AttentionWeights& w, const Mat& x, const Rotation* rot, Mat& q, Mat& k, Mat& v,
                  Mat* k_unrotated) {
  linear_forward_same_input(x, {{&w.q_proj, &q}, {&w.k_proj, &k}, {&w.v_proj, &v}});
  rotate_keys(k, rot, k_unrotated);
}

void attention_forward(const AttentionWeights& w, Heads heads, const Mat& x_q, const Mat& x_kv, const MaskList& masks,
                       Mat& out, AttentionTrace* tr, const Rotation* rot, const Hook* hook) {
  Mat q, k, v;  // (B·n_q, h·dk), (B·n_k, h_kv·dk) twice
  Mat* const k_unrotated = tr && tr->kind == Recording::Full ? &tr->k_unrotated : nullptr;
  if (&x_q == &x_kv) {  // self-attention: Q, K and V read the same input
    project_self(w, x_q, rot, q, k, v, k_unrotated);
  } else {
    linear_forward(x_q, w.q_proj, q);
    linear_forward_same_input(x_kv, {{&w.k_proj, &k}, {&w.v_proj, &v}});
    rotate_keys(k, rot, k_unrotated);
  }
  attend_projected(w, heads, std::move(q), k, v, masks, out, tr, false, rot, hook);
  if (tr) {
    tr->k = std::move(k);
    tr->v = std::move(v);
  }
}

void attention_backward(const AttentionWeights& w, const Mat& x_q, const Mat& x_kv, const AttentionTrace& tr,
                        const Mat& dout, AttentionWeights& g, Mat& dx_q, Mat* dx_kv, GemmOut kv_out, GemmOut dw_out) {
  const int B = tr.batch, n_heads = tr.n_heads;
  const int d = static_cast<int>(tr.q.cols());
  const int dk = d / n_heads;
  const int nq = static_cast<int>(tr.q.rows()) / B;
  const int nk = static_cast<int>(tr.k.rows()) / B;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));

  Mat dconcat;  // (B·n_q, d)
  linear_backward(tr.concat, w.o_proj, dout, g.o_proj, &dconcat, GemmOut::Overwrite, {}, dw_out);

  Mat dq(B * nq, d), dk_(B * nk, d), dv(B * nk, d);
  Mat dp(nq, nk), prod(nq, nk);  // scratch, reused for every head: dP, then dP ⊙ P
  Mat vt(d, B * nk);             // Vᵀ, transposed once (see attend)
  {
    const ScopedPhase phase(Phase::Transpose);
    transpose_copy(tr.v.data(), d, B * nk, d, vt.data(), vt.cols());
  }
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < n_heads; ++h) {
      int nb, nh;
      if (next_head(b, h, B, n_heads, nb, nh)) {  // the next head's operands
        const Eigen::Index nq_ = nb * nq * d + nh * dk, nk_ = nb * nk * d + nh * dk;
        prefetch_block(dconcat.data() + nq_, nq, dk, d);
        prefetch_block(tr.q.data() + nq_, nq, dk, d);
        prefetch_block(tr.k.data() + nk_, nk, dk, d);
        prefetch_block(vt.data() + nh * dk * vt.cols() + nb * nk, dk, nk, vt.cols());
        const Mat& pn = tr.weights[static_cast<size_t>(nb * n_heads + nh)];
        prefetch_block(pn.data(), 1, pn.size(), 0);
      }
      const Mat& p = tr.weights[static_cast<size_t>(b * n_heads + h)];           // (n_q, n_k)
      const Eigen::Index oq = b * nq * d + h * dk, ok = b * nk * d + h * dk;     // head h of sequence b
      const MatRef dhead{dconcat.data() + oq, d, 1};                             // (n_q, dk)
      const MatRef qh{tr.q.data() + oq, d, 1}, kh{tr.k.data() + ok, d, 1};       // (n_q, dk), (n_k, dk)
      const MatRef vh_t{vt.data() + h * dk * vt.cols() + b * nk, vt.cols(), 1};  // V_hᵀ (dk, n_k)
      {
        const ScopedPhase phase(Phase::HeadsBackward);
        gemm(nq, nk, dk, dhead, vh_t, dp.data(), nk, GemmOut::Overwrite);              // dP = dhead V_hᵀ
        gemm(nk, dk, nq, mat_ref_t(p), dhead, dv.data() + ok, d, GemmOut::Overwrite);  // dV_h = Pᵀ dhead
      }
      // Softmax backward: dS = P ⊙ (dP − Σ_j dP_j P_j), scaled by 1/√dk. The products over the
      // whole block, then each row's sum in four chains (one chain per row waited on every add).
      {
        const ScopedPhase phase(Phase::SoftmaxBackward);
        float* const e = prod.data();
        for (Eigen::Index i = 0; i < dp.size(); ++i) e[i] = dp.data()[i] * p.data()[i];
        for (int i = 0; i < nq; ++i) {
          float* dpi = dp.data() + i * nk;
          const float* pi = p.data() + i * nk;
          const float dot = row_sum(e + i * nk, nk);
          for (int j = 0; j < nk; ++j) dpi[j] = pi[j] * (dpi[j] - dot) * scale;
        }
      }
      const ScopedPhase phase(Phase::HeadsBackward);
      gemm(nq, dk, nk, mat_ref(dp), kh, dq.data() + oq, d, GemmOut::Overwrite);     // dQ_h = dS K_h
      gemm(nk, dk, nq, mat_ref_t(dp), qh, dk_.data() + ok, d, GemmOut::Overwrite);  // dK_h = dSᵀ Q_h
    }
  }
  linear_backward(x_q, w.q_proj, dq, g.q_proj, &dx_q, GemmOut::Overwrite, {}, dw_out);
  Mat* const dkv = dx_kv ? dx_kv : &dx_q;  // (B·n_k, d)
  linear_backward(x_kv, w.k_proj, dk_, g.k_proj, dkv, dx_kv ? kv_out : GemmOut::Accumulate, {}, dw_out);
  linear_backward(x_kv, w.v_proj, dv, g.v_proj, dkv, GemmOut::Accumulate, {}, dw_out);
}

}  // namespace sf
