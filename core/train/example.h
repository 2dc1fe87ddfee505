// example.h — one example of a toy task (tasks.h) as words: the source, the expected answer and,
// for a language model, the probes that score it. The sentence generators (grammar.h) write them
// too.
#pragma once

#include <string>
#include <vector>

namespace sf {

// A point in a language-model sentence where the next word is determined up to a set: the word
// tgt[at], predicted from <s> tgt[0 .. at), is right when greedy decoding picks one of `accept`.
struct Probe {
  int at = 0;
  std::string kind;                 // what it tests, e.g. "agreement" or "pronoun" (grammar.h)
  std::vector<std::string> accept;  // the words counted right (tgt[at] among them)
};

struct Example {
  std::vector<std::string> src;  // encoder-decoder: the source; decoder-only: the prompt (ends with "="),
                                 // empty for a language model (every word of tgt is trained on)
  std::vector<std::string> tgt;  // the expected answer (no <s>, no </s>)
  std::vector<Probe> probes;     // a language model's probes (then the metric); empty otherwise
};

}  // namespace sf
