#include "train/evaluate.h"

#include <algorithm>
#include <map>

#include "model/decoder.h"
#include "model/encoder.h"
#include "train/batch.h"

namespace sf {

namespace {

// Greedy continuation of B decoder inputs of equal length `len0` (rows of `dec`, B·len0 ids).
std::vector<std::vector<int>> continue_greedy(const Model& m, std::vector<int> dec, int batch, int len0,
                                              const EncoderContext& enc, int max_new) {
  const Vocab& tv = m.config.tgt_vocab;
  std::vector<std::vector<int>> out(static_cast<size_t>(batch));
  std::vector<char> done(static_cast<size_t>(batch), 0);
  int len = len0;
  for (int step = 0; step < max_new && len < m.config.max_len + 1; ++step) {
    if (len > m.config.max_len) break;
    const Mat logits = decode(m, dec, batch, enc, nullptr, nullptr);  // (B·len, V)
    std::vector<int> next(static_cast<size_t>(batch));
    bool all_done = true;
    for (int b = 0; b < batch; ++b) {
      Eigen::Index arg;
      logits.row(b * len + len - 1).maxCoeff(&arg);
      next[static_cast<size_t>(b)] = static_cast<int>(arg);
      if (!done[static_cast<size_t>(b)]) {
        if (arg == tv.eos())
          done[static_cast<size_t>(b)] = 1;
        else
          out[static_cast<size_t>(b)].push_back(static_cast<int>(arg));
      }
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
    std::vector<int> grown;
    grown.reserve(static_cast<size_t>(batch * (len + 1)));
    for (int b = 0; b < batch; ++b) {
      grown.insert(grown.end(), dec.begin() + b * len, dec.begin() + (b + 1) * len);
      grown.push_back(next[static_cast<size_t>(b)]);
    }
    dec = std::move(grown);
    ++len;
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> greedy_decode_batch(const Model& m, const std::vector<std::vector<int>>& inputs,
                                                  int max_new) {
  const Config& c = m.config;
  std::vector<std::vector<int>> result(inputs.size());
  if (inputs.empty()) return result;
  if (c.has_encoder()) {
    size_t n = 0;
    for (auto& s : inputs) n = std::max(n, s.size());
    std::vector<int> src;
    for (auto& s : inputs) {
      src.insert(src.end(), s.begin(), s.end());
      src.insert(src.end(), n - s.size(), c.src_vocab.pad());
    }
    const int B = static_cast<int>(inputs.size());
    const Mat memory = encode(m, src, B, nullptr);
    std::vector<int> dec(static_cast<size_t>(B), c.tgt_vocab.bos());
    return continue_greedy(m, dec, B, 1, {&memory, &src}, max_new);
  }
  // Decoder-only: prompts of different lengths would need left padding, which shifts positions;
  // decode each prompt length as its own batch instead.
  std::map<size_t, std::vector<size_t>> by_len;
  for (size_t i = 0; i < inputs.size(); ++i) by_len[inputs[i].size()].push_back(i);
  for (auto& [len, idx] : by_len) {
    std::vector<int> dec;
    for (size_t i : idx) {
      dec.push_back(c.tgt_vocab.bos());
      dec.insert(dec.end(), inputs[i].begin(), inputs[i].end());
    }
    auto outs = continue_greedy(m, dec, static_cast<int>(idx.size()), static_cast<int>(len) + 1, {}, max_new);
    for (size_t k = 0; k < idx.size(); ++k) result[idx[k]] = std::move(outs[k]);
  }
  return result;
}

EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk) {
  const Config& c = m.config;
  EvalResult r;
  r.examples = static_cast<int>(examples.size());
  for (size_t b0 = 0; b0 < examples.size(); b0 += static_cast<size_t>(chunk)) {
    const size_t b1 = std::min(examples.size(), b0 + static_cast<size_t>(chunk));
    std::vector<std::vector<int>> inputs;
    int max_new = 0;
    for (size_t i = b0; i < b1; ++i) {
      inputs.push_back(to_ids(c.has_encoder() ? c.src_vocab : c.tgt_vocab, examples[i].src));
      max_new = std::max(max_new, static_cast<int>(examples[i].tgt.size()) + 1);
    }
    auto outs = greedy_decode_batch(m, inputs, max_new);
    for (size_t i = b0; i < b1; ++i) {
      const bool ok = outs[i - b0] == to_ids(c.tgt_vocab, examples[i].tgt);
      r.exact += ok;
      if (!ok && r.failures.size() < 20) r.failures.push_back(static_cast<int>(i));
      r.outputs.push_back(std::move(outs[i - b0]));
    }
  }
  return r;
}

}  // namespace sf
