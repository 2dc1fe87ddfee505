// attention.h — multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2; "Transformer Architecture" lecture,
// Scaled dot product).
//
//   Q = x_q W_qᵀ + b_q,  K = x_kv W_kᵀ + b_k,  V = x_kv W_vᵀ + b_v        (n, d)
//   head_h = softmax(Q_h K_hᵀ / √dk + mask) V_h,  Q_h = Q[:, h·dk:(h+1)·dk]   (n_q, dk)
//   out = concat(head_0 .. head_{h−1}) W_oᵀ + b_o                          (n_q, d)
//
// Attention is the only layer that mixes information across positions. Sequences of a batch are
// stacked as rows (B·n, d); attention runs per sequence b and head.
//
// Grouped-query attention (Ainslie et al. 2023; Llama, Qwen2, Mistral): K and V have fewer heads
// than Q, h_kv; query head h reads K/V head h ÷ (h ÷ h_kv), so K and V (and the KV cache) are
// (n_k, h_kv·dk). Rotary models rotate Q and K after the projections (model/rotary.h).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "model/intervention.h"
#include "model/recording.h"
#include "base/tensor.h"
#include "model/rotary.h"
#include "model/weights.h"

namespace sf {

// The query heads and the K/V heads they share (q == kv: multi-head attention). An int converts
// to the multi-head case.
struct Heads {
  int q = 0, kv = 0;
  Heads(int n) : q(n), kv(n) {}  // NOLINT(google-explicit-constructor): every head its own K/V
  Heads(int n_q, int n_kv) : q(n_q), kv(n_kv) {}
  // The K/V head query head h reads.
  int kv_of(int h) const { return h / (q / kv); }
};

// The additive masks of one attention call, [b] (n_q, n_k) (model/mask.h), immutable and shared:
// a forward builds one list per attention kind and passes it to every layer, whose recordings then
// hold that one copy (a 1,024-token GPT-2 prefill: one 4 MB mask instead of one per layer). It
// reads as a const std::vector<Mat>; a vector converts to it (taking it over).
class MaskList {
 public:
  MaskList() = default;
  MaskList(std::vector<Mat> masks)  // NOLINT(google-explicit-constructor): a list of masks is one
      : masks_(masks.empty() ? nullptr : std::make_shared<const std::vector<Mat>>(std::move(masks))) {}
  MaskList(std::initializer_list<Mat> masks) : MaskList(std::vector<Mat>(masks)) {}

  bool empty() const { return size() == 0; }
  size_t size() const { return masks_ ? masks_->size() : 0; }
  const Mat& operator[](size_t b) const { return (*masks_)[b]; }
  const Mat& at(size_t b) const { return list().at(b); }
  const std::vector<Mat>& list() const;
  // The one copy the lists sharing it hold (null when empty): equal for lists that share it.
  const void* storage() const { return masks_.get(); }

 private:
  std::shared_ptr<const std::vector<Mat>> masks_;
};

// Makes `a` share `b`'s storage when they hold the same masks, bit for bit (a stacked view's mask
// and the previous layer's); true when they share it afterwards.
bool share_if_same(MaskList& a, const MaskList& b);

struct AttentionTrace {
  int n_heads = 0;
  int n_kv_heads = 0;  // K/V heads (= n_heads without grouped-query attention)
  int batch = 0;
  Mat q;  // (B·n_q, h·dk) queries as the scores read them (rotated, for rotary models), head h in
          // columns [h·dk, (h+1)·dk)
  Mat k;  // (B·n_k − kv_row0, h_kv·dk) keys as attended (rotated): rows [kv_row0, n_k) of those attended
  Mat v;  // (B·n_k − kv_row0, h_kv·dk) values, the same rows
  // Rotary models: the projections before the rotation, x W_qᵀ + b (B·n_q, h·dk) and the keys'
  // x W_kᵀ + b of the rows this call projected (B·m, h_kv·dk); empty otherwise.
  Mat q_unrotated;
  Mat k_unrotated;
  // The forward writes every key row (kv_row0 = 0). A stepper Session keeps, for a cached decoder
  // step, only the rows that step added (kv_row0 = its first position; cross-attention: none, step
  // 0 holds them) — the rest are the earlier steps' rows, unchanged — so that a long run's
  // recording grows linearly, not quadratically (Session::attended_kv gathers the whole K/V).
  int kv_row0 = 0;
  Recording kind = Recording::Full;  // set before the run: raw_scores only Full, weights not Compact
                                     // (head_attention computes them from q, k, masks), out not Training
  float scale = 1;                   // 1/√dk
  std::vector<Mat> raw_scores;       // [b·h + head] (n_q, n_k) Q_h K_hᵀ
  MaskList masks;                    // [b] (n_q, n_k) additive: 0 or −inf, shared between layers
  std::vector<Mat> weights;          // [b·h + head] (n_q, n_k) softmax(scores + mask); masked = 0
  Mat concat;                        // (B·n_q, d) heads side by side (input of W_o)
  Mat out;                           // (B·n_q, d) W_o output

  const Mat& head_weights(int b, int head) const { return weights[static_cast<size_t>(b * n_heads + head)]; }
  // The K/V head query head h reads.
  int kv_head(int head) const { return n_kv_heads > 0 ? Heads(n_heads, n_kv_heads).kv_of(head) : head; }
  // [b·h + head] (n_q, n_k) Q_h K_hᵀ / √dk before the mask: not stored, since raw × scale is
  // bit for bit what the forward computed (one float product per entry).
  Mat scores(size_t idx) const { return raw_scores[idx] * scale; }
  float score(size_t idx, int i, int j) const { return raw_scores[idx](i, j) * scale; }
  std::vector<Mat> all_scores() const;
};

// Row-wise softmax of s · scale + mask, in place on `s` (n_q, n_k): the scale (1/√dk) in the same
// pass as the mask, each score rounded once as s *= scale would. Keys whose mask is −inf get
// exactly 0; a row with every key masked becomes all zeros (never NaN).
void masked_softmax(Mat& s, const Mat& mask, float scale = 1.0f);

// Blocks of query rows and the keys each sees: a causal mask hides from the first query every key
// after the first, from the last none, so a block of early queries needs the scores, softmax and
// P·V over the first keys only. Block i holds rows [start[i], start[i + 1]) and sees keys
// [0, keys[i]): 1 + the last key any of its rows leaves unmasked, rounded up to a multiple of 4
// (at most n_k). The keys past it would add exact zeros: the weights are the same floats as over
// the whole row, and P·V's sums stop before terms that are 0·v.
struct QueryBlocks {
  static constexpr Eigen::Index kRows = 48;  // rows per block: a multiple of every kernel's height
  std::vector<Eigen::Index> start;           // (blocks + 1)
  std::vector<Eigen::Index> keys;            // (blocks)
  // (n_q) for rows of 64 keys or more, else empty: row i's mask is 0 on keys [0, cut[i]) and −inf
  // from cut[i] on (a causal row, or one that hides nothing), −1 when it is not of that form. The
  // softmax of such a row reads no mask (4 MB per head over 1,024 tokens).
  std::vector<Eigen::Index> cut;
  bool whole(Eigen::Index n_k) const { return keys.size() == 1 && keys[0] == n_k; }
};
// The blocks of a mask (n_q, n_k): one block over every key when no block can skip any (rows
// shorter than 64 keys always; a product over a few keys gains nothing from blocking); and the
// rows' cuts.
QueryBlocks visible_keys(const Mat& mask);

// The attention core on projected Q (B·n_q, h·dk), K and V (B·n_k, h_kv·dk); masks[b] (n_q, n_k).
// Writes concat (B·n_q, h·dk). Records scores/weights into `tr` when given.
void attend(const Eigen::Ref<const Mat>& q, const Eigen::Ref<const Mat>& k, const Eigen::Ref<const Mat>& v, Heads heads,
            const MaskList& masks, Mat& concat, AttentionTrace* tr);

// One head's attention weights of one sequence, (n_q, n_k) softmax(Q_h K_hᵀ / √dk + mask), from
// projected (and rotated) Q (n_q, h·dk) and K (n_k, h_kv·dk): the product and the softmax attend()
// runs for that head, so a recording that keeps Q and K instead of the weights gives back any
// head's map on demand, with the numbers the forward computed. Q_h K_hᵀ goes to `raw` when given.
void head_attention(const Eigen::Ref<const Mat>& q, const Eigen::Ref<const Mat>& k, Heads heads, int head,
                    const Mat& mask, Mat& weights, Mat* raw = nullptr);

// Attention on keys/values already projected (and rotated: a KV cache, or cross-attention K/V
// computed once): projects x_q (B·n_q, d), rotates it when `rot` is given, runs the core over
// k, v (B·n_k, h_kv·dk), applies W_o. A hook given edits the head outputs before W_o
// (model/intervention.h); the recording's concat is then the edited one, what W_o read.
void attention_with_kv(const AttentionWeights& w, Heads heads, const Mat& x_q, const Eigen::Ref<const Mat>& k,
                       const Eigen::Ref<const Mat>& v, const MaskList& masks, Mat& out, AttentionTrace* tr,
                       const Rotation* rot = nullptr, const Hook* hook = nullptr);

// Full attention: projections, the rotation of Q and K when `rot` is given, core, output
// projection (the hook's edits before it, as attention_with_kv). x_q (B·n_q, d), x_kv (B·n_k, d).
void attention_forward(const AttentionWeights& w, Heads heads, const Mat& x_q, const Mat& x_kv, const MaskList& masks,
                       Mat& out, AttentionTrace* tr, const Rotation* rot = nullptr, const Hook* hook = nullptr);

// Q, K and V of a self-attention over x (n, d), projected together (linear_forward_same_input);
// K rotated when `rot` is given (what a KV cache stores), its unrotated projection kept in
// `k_unrotated` when given. Q stays unrotated: attention_with_qkv turns it.
void project_self(const AttentionWeights& w, const Mat& x, const Rotation* rot, Mat& q, Mat& k, Mat& v,
                  Mat* k_unrotated);

// attention_with_kv on a query already projected (project_self's q, unrotated): rotates it when
// `rot` is given, runs the core over k, v and applies W_o, recording as attention_with_kv does.
void attention_with_qkv(const AttentionWeights& w, Heads heads, Mat q, const Eigen::Ref<const Mat>& k,
                        const Eigen::Ref<const Mat>& v, const MaskList& masks, Mat& out, AttentionTrace* tr,
                        const Rotation* rot = nullptr, const Hook* hook = nullptr);

// Backward of attention_forward. x_q (B·n_q, d) and x_kv (B·n_k, d) are the inputs the forward
// read, tr its recording, dout (B·n_q, d). Per sequence b and head h, with P = weights[b·h + h]:
//   dP = dhead Vᵀ,  dV = Pᵀ dhead,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),  dQ = dS K/√dk,  dK = dSᵀ Q/√dk.
// Masked keys have P = 0 and so get exactly zero gradient. Parameter grads accumulate into g (+=),
// the projections' weight matrices written instead with dw_out = Overwrite (see linear_backward);
// dx_q (B·n_q, d) is written (=). dx_kv (B·n_k, d) is written, or added to with kv_out =
// Accumulate (a decoder stack's cross-attention layers all read the encoder's memory). Self-
// attention passes dx_kv = nullptr (x_kv is x_q): the keys' and values' grads are added to dx_q
// as the products make them, with no second matrix and no pass to sum the two.
void attention_backward(const AttentionWeights& w, const Mat& x_q, const Mat& x_kv, const AttentionTrace& tr,
                        const Mat& dout, AttentionWeights& g, Mat& dx_q, Mat* dx_kv,
                        GemmOut kv_out = GemmOut::Overwrite, GemmOut dw_out = GemmOut::Accumulate);

}  // namespace sf
