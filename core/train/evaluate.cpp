#include "train/evaluate.h"

#include <algorithm>

#include "train/batch.h"

namespace sf {

namespace {

// Each probe is one prompt (the sentence before the probed word) and one greedy word.
EvalResult evaluate_probes(const Model& m, const std::vector<Example>& examples, int chunk) {
  const Vocab& v = m.config.tgt_vocab;
  EvalResult r;
  r.metric = "probe accuracy";
  std::vector<std::vector<int>> prompts;
  std::vector<const Probe*> probes;
  for (const Example& e : examples)
    for (const Probe& p : e.probes) {
      prompts.push_back(to_ids(v, std::vector<std::string>(e.tgt.begin(), e.tgt.begin() + p.at)));
      probes.push_back(&p);
    }
  r.examples = static_cast<int>(probes.size());
  for (size_t b0 = 0; b0 < prompts.size(); b0 += static_cast<size_t>(chunk)) {
    const size_t b1 = std::min(prompts.size(), b0 + static_cast<size_t>(chunk));
    auto outs = greedy_decode_batch(m, std::vector<std::vector<int>>(prompts.begin() + b0, prompts.begin() + b1), 1);
    for (size_t i = b0; i < b1; ++i) {
      const Probe& p = *probes[i];
      const std::vector<int>& out = outs[i - b0];
      const std::string word = out.empty() ? v.token(v.eos()) : v.token(out.front());
      const bool ok = std::find(p.accept.begin(), p.accept.end(), word) != p.accept.end();
      r.exact += ok;
      auto& k = r.by_kind[p.kind];
      k[0] += ok;
      k[1] += 1;
      if (!ok && r.failures.size() < 20) r.failures.push_back(static_cast<int>(i));
      r.outputs.push_back(out);
    }
  }
  return r;
}

}  // namespace

EvalResult evaluate(const Model& m, const std::vector<Example>& examples, int chunk) {
  if (std::any_of(examples.begin(), examples.end(), [](const Example& e) { return !e.probes.empty(); }))
    return evaluate_probes(m, examples, chunk);
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
