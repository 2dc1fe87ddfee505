#include "analysis/word_order.h"

#include <algorithm>

#include "model/decoder.h"
#include "model/encoder.h"

namespace sf {

namespace {

int argmax_of_last_row(const Mat& logits) {
  Eigen::Index best = 0;
  logits.row(logits.rows() - 1).maxCoeff(&best);
  return static_cast<int>(best);
}

// The greedy first output token: after <s> with the memory of `src` (encoder-decoder), after the
// prompt `src` (decoder-only).
int first_prediction(const Model& m, const Mat* memory, const std::vector<int>& src, const RunOptions& opt) {
  const Config& c = m.config;
  EncoderContext enc;
  if (memory) enc = {memory, &src};
  const std::vector<int> bos{c.tgt_vocab.bos()};
  return argmax_of_last_row(decode(m, memory ? bos : src, 1, enc, nullptr, nullptr, opt));
}

// The top MLM prediction at row `row` of the encoder output x.
int mlm_top(const Model& m, const Mat& x, int row) {
  Eigen::Index best = 0;
  mlm_logits(m, x.row(row), nullptr).row(0).maxCoeff(&best);
  return static_cast<int>(best);
}

// One setting: the outputs a (original order) and b (reversed), and the predictions on each.
WordOrderRun run_both_orders(const Model& m, const std::vector<int>& ids, const std::vector<int>& rev, int skip,
                             bool pe) {
  const Config& c = m.config;
  RunOptions opt;
  opt.positional_encoding = pe;
  WordOrderRun out;
  const int n = static_cast<int>(ids.size());
  Mat a, b;  // (n, d) the stack's output for the original and the reversed order
  if (!c.has_decoder()) {
    a = encode(m, ids, 1, nullptr, opt);
    b = encode(m, rev, 1, nullptr, opt);
    if (c.mlm_head) {
      const auto at = std::find(ids.begin(), ids.end(), mask_token(c.src_vocab));
      const int p = at == ids.end() ? 0 : static_cast<int>(at - ids.begin());
      out.next = mlm_top(m, a, p);
      out.next_reversed = mlm_top(m, b, reversed_position(p, n, skip));
    }
  } else if (c.has_encoder()) {
    a = encode(m, ids, 1, nullptr, opt);
    b = encode(m, rev, 1, nullptr, opt);
    out.next = first_prediction(m, &a, ids, opt);
    out.next_reversed = first_prediction(m, &b, rev, opt);
  } else {
    DecoderTrace ta, tb;
    decode(m, ids, 1, {}, nullptr, &ta, opt);
    decode(m, rev, 1, {}, nullptr, &tb, opt);
    a = std::move(ta.output);
    b = std::move(tb.output);
    out.next = first_prediction(m, nullptr, ids, opt);
    out.next_reversed = first_prediction(m, nullptr, rev, opt);
  }
  out.per_token.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const float diff = (a.row(i) - b.row(reversed_position(i, n, skip))).cwiseAbs().maxCoeff();
    out.per_token[static_cast<size_t>(i)] = diff;
    out.max_diff = std::max(out.max_diff, diff);
  }
  return out;
}

}  // namespace

int reversed_position(int i, int n, int skip) { return i < skip ? i : n - 1 - (i - skip); }

WordOrder word_order(const Model& m, const PreparedInput& in) {
  const Config& c = m.config;
  WordOrder d;
  d.ids = c.has_encoder() ? in.src_ids : in.tgt_ids;
  const int skip = c.has_encoder() ? 0 : 1;  // decoder-only: <s> stays first
  d.reversed = d.ids;
  std::reverse(d.reversed.begin() + std::min<size_t>(static_cast<size_t>(skip), d.reversed.size()), d.reversed.end());
  if (d.ids.empty()) return d;
  d.with_pe = run_both_orders(m, d.ids, d.reversed, skip, true);
  d.without_pe = run_both_orders(m, d.ids, d.reversed, skip, false);
  return d;
}

}  // namespace sf
