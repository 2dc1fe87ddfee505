#include "train/examples.h"

#include <algorithm>
#include <set>

#include "base/rng.h"
#include "stepper/run.h"

namespace sf {

namespace {

// Sentences for models that read words or subwords: the first is the lecture's ambiguous-"it"
// sentence ("Transformer Architecture", self-attention), the others give a batch lengths to pad.
const char* const kSentences[] = {
    "The animal didn't cross the street because it was too tired.",
    "The cat sat on the mat.",
    "I like green tea.",
    "She reads a book in the garden every morning.",
    "Paris is the capital of France.",
};

const Vocab& input_vocab(const Config& c) { return c.has_encoder() ? c.src_vocab : c.tgt_vocab; }

// Whether the example fits max_len with its framing: <s> (and </s>) on the decoder side, the
// tokenizer's own framing (at most two tokens, BERT's [CLS] … [SEP]) on the encoder side.
bool fits(const Config& c, const Example& e) {
  const size_t n = static_cast<size_t>(c.max_len);
  if (!c.has_decoder()) return e.src.size() + 2 <= n;
  if (!c.has_encoder()) return 1 + e.src.size() + e.tgt.size() + 1 <= n;
  return e.src.size() + 2 <= n && e.tgt.size() + 2 <= n;
}

bool in_vocab(const Vocab& v, const std::vector<std::string>& tokens) {
  return std::all_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return v.id(t) >= 0; });
}

std::string join(const std::vector<std::string>& words, bool chars) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i && !chars ? " " : "") + words[i];
  return out;
}

// An input text as vocabulary entries (the tokenizer's pieces), or false when a piece is unknown.
bool tokens_of(const Vocab& v, const std::string& text, std::vector<std::string>& out) {
  const Tokenized t = v.tokenize(text);
  if (!t.unknown.empty() || t.ids.empty()) return false;
  out.clear();
  for (int id : t.ids) out.push_back(v.token(id));
  return true;
}

// 1. The model's task, its held-out examples, distinct source lengths first.
std::vector<ModelExample> from_task(const Config& c, const std::string& name, int n, uint64_t seed) {
  auto made = make_task(name);
  if (!made) return {};
  Task t = *made;
  if (c.arch == Arch::DecoderOnly && t.arch != Arch::DecoderOnly) t = as_decoder_only(t);
  if (t.arch != c.arch) return {};
  const Vocab& sv = input_vocab(c);
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + 17);
  std::vector<ModelExample> out;
  std::set<size_t> lengths;
  for (int tries = 0; tries < 400 && static_cast<int>(out.size()) < n; ++tries) {
    Example e = t.sample(rng, Split::Validation);
    if (e.src.empty() && !e.tgt.empty()) {
      // A language model's example is a sentence: it reads the words up to the first probe (the
      // point whose next word the task checks), and the rest is what it should continue with.
      const size_t cut = e.probes.empty() ? e.tgt.size() : static_cast<size_t>(std::max(1, e.probes.front().at));
      e.src.assign(e.tgt.begin(), e.tgt.begin() + static_cast<std::ptrdiff_t>(std::min(cut, e.tgt.size())));
      e.tgt.erase(e.tgt.begin(), e.tgt.begin() + static_cast<std::ptrdiff_t>(e.src.size()));
      e.probes.clear();
    }
    if (!fits(c, e) || !in_vocab(sv, e.src) || (c.has_decoder() && !in_vocab(c.tgt_vocab, e.tgt))) continue;
    if (lengths.count(e.src.size()) && tries < 300) continue;  // a batch shows different lengths
    lengths.insert(e.src.size());
    out.push_back({t.text(e.src), t.text(e.tgt), e});
  }
  return out;
}

// 2. Sentences, for a vocabulary that has every word of one.
std::vector<ModelExample> from_sentences(const Config& c, int n, uint64_t seed) {
  const Vocab& v = input_vocab(c);
  if (v.tokenizer() == Tokenizer::Character) return {};
  const size_t count = sizeof kSentences / sizeof kSentences[0];
  std::vector<ModelExample> out;
  for (size_t i = 0; i < count && static_cast<int>(out.size()) < n; ++i) {
    const std::string text = with_mask_token(c, kSentences[(i + seed) % count]);
    ModelExample m;
    if (!tokens_of(v, text, m.tokens.src) || !fits(c, m.tokens)) continue;
    m.src_text = text;
    out.push_back(std::move(m));
  }
  return out;
}

// 3. Digits (the digits of π read well and repeat a token), else the vocabulary's first ordinary
// tokens; sequences of decreasing length.
std::vector<ModelExample> from_symbols(const Config& c, int n, uint64_t seed) {
  const Vocab& v = input_vocab(c);
  const bool chars = v.tokenizer() == Tokenizer::Character;
  const std::string pi = "31415926535897932384";
  std::vector<std::string> symbols;
  bool digits = true;
  for (char d : pi) digits &= v.id(std::string(1, d)) >= 0;
  if (digits) {
    for (char d : pi) symbols.push_back(std::string(1, d));
  } else {
    for (const std::string& t : v.tokens())
      if (!t.empty() && t[0] != '<' && t[0] != '[' && symbols.size() < 20) symbols.push_back(t);
  }
  if (symbols.empty()) return {};
  const size_t room = static_cast<size_t>(std::max(1, std::min(8, c.max_len - 2)));
  std::vector<ModelExample> out;
  for (int i = 0; i < n; ++i) {
    const size_t len = std::max<size_t>(1, room - std::min(room - 1, static_cast<size_t>(2 * i)));
    const size_t start = static_cast<size_t>(seed + static_cast<uint64_t>(i)) % symbols.size();
    ModelExample m;
    for (size_t k = 0; k < len; ++k) m.tokens.src.push_back(symbols[(start + k) % symbols.size()]);
    m.src_text = with_mask_token(c, join(m.tokens.src, chars));
    if (m.src_text != join(m.tokens.src, chars) && !tokens_of(v, m.src_text, m.tokens.src)) continue;
    if (!fits(c, m.tokens)) continue;
    out.push_back(std::move(m));
    if (i > 0 && len == 1) break;
  }
  return out;
}

}  // namespace

std::string with_mask_token(const Config& c, const std::string& text) {
  const int mask = mask_token(c.src_vocab);
  if (c.has_decoder() || !c.mlm_head || mask < 0 || text.find(c.src_vocab.token(mask)) != std::string::npos)
    return text;
  std::vector<std::string> words;
  for (size_t i = 0, j; i < text.size(); i = j + 1) {
    j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    if (j > i) words.push_back(text.substr(i, j - i));
  }
  if (words.size() < 2) return text;
  words[words.size() / 2] = c.src_vocab.token(mask);
  return join(words, false);
}

std::vector<ModelExample> model_examples(const Config& c, const std::map<std::string, std::string>& metadata, int n,
                                         uint64_t seed) {
  std::vector<ModelExample> out;
  if (n <= 0) return out;
  if (seed == 0) {
    auto it = metadata.find("stepformer.example");
    ModelExample m;
    if (it != metadata.end() && !it->second.empty()) {
      m.src_text = with_mask_token(c, it->second);
      if (tokens_of(input_vocab(c), m.src_text, m.tokens.src) && fits(c, m.tokens)) out.push_back(std::move(m));
    }
  }
  const auto add = [&](std::vector<ModelExample> more) {
    for (ModelExample& m : more)
      if (static_cast<int>(out.size()) < n &&
          std::none_of(out.begin(), out.end(), [&](const ModelExample& o) { return o.src_text == m.src_text; }))
        out.push_back(std::move(m));
  };
  if (auto it = metadata.find("stepformer.task"); it != metadata.end()) add(from_task(c, it->second, n, seed));
  if (out.empty()) add(from_sentences(c, n, seed));
  if (out.empty()) add(from_symbols(c, n, seed));
  return out;
}

std::string model_example_text(const Config& c, const std::map<std::string, std::string>& metadata, uint64_t seed) {
  const std::vector<ModelExample> e = model_examples(c, metadata, 1, seed);
  return e.empty() ? std::string() : e.front().src_text;
}

}  // namespace sf
