// tasks.h — seeded toy tasks with a fixed train/validation split and an exact-match metric.
//
// Every task turns a random example into source tokens and target tokens:
//   copy     3 5 1 1          → 3 5 1 1              (diagonal attention)
//   reverse  3 5 1 1          → 1 1 5 3              (anti-diagonal)
//   sort     3 5 1 1          → 1 1 3 5              (a permutation)
//   add      3 4 7 + 5 8      → 4 0 5                (carries)
//   dates    21 November 2026 → 2026-11-21           (character level; four input formats)
//   copy-lm  3 5 1 1 =        → 3 5 1 1              (decoder-only: one sequence, prompt then answer)
//   en-de    because the dog is tired → , weil der Hund müde ist   (word level; train/grammar.h)
//   en-lm    the keys to the cabinet are old     (decoder-only language model over whole sentences,
//            scored by probes: the verb's number after a distractor, the referent of a pronoun)
//   induction  k d q a w m z f b t k  →  d q a w m z f b t   (decoder-only: random letters, then the
//            same letters again; the prompt holds the first copy and the repeat's first letter)
// The split is a property of the example, not of the seed: an example is held out when a hash of
// its key (the input sequence; for `add` the operand pair; for `dates` the calendar date, so a
// held-out date is never seen in any format) falls in the validation tenth. Training samples
// reject held-out keys, so validation examples are never trained on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/config.h"
#include "base/rng.h"
#include "train/example.h"

namespace sf {

enum class Split { Train, Validation };

struct TaskOptions {
  int min_len = 1;  // copy/reverse/sort/copy-lm: sequence length range
  int max_len = 10;
  int n_symbols = 10;  // copy/reverse/sort/copy-lm: symbols used (the digits 0 .. n_symbols−1, at most 10)
};

struct Task {
  std::string name;
  std::string description;
  Arch arch = Arch::EncoderDecoder;
  Tokenizer tokenizer = Tokenizer::Word;
  std::vector<std::string> src_symbols;  // vocabulary without the specials (empty for decoder-only)
  std::vector<std::string> tgt_symbols;
  int max_src = 0;                                 // longest source/prompt in tokens
  int max_tgt = 0;                                 // longest answer in tokens
  std::function<Example(Rng&)> generate;           // any example
  std::function<std::string(const Example&)> key;  // what the split hashes

  bool held_out(const Example& e) const;
  // A random example of the split (rejection sampling on held_out).
  Example sample(Rng& rng, Split split) const;
  // n examples of the split, deterministic for the seed.
  std::vector<Example> sample_many(uint64_t seed, int n, Split split) const;
  // Vocabularies with the four specials first: <pad> <s> </s> <unk>, then the symbols.
  std::vector<std::string> src_vocab() const;
  std::vector<std::string> tgt_vocab() const;
  // max_len a model for this task needs (the decoder input with <s>; decoder-only: prompt + answer).
  int model_max_len() const;
  // Text of a token sequence as a user would type it (char tokenizer: "_" back to spaces).
  std::string text(const std::vector<std::string>& tokens) const;
  // An input a user can give a model of this task, as tokens: a held-out example's source (or
  // prompt); for a language model the sentence up to its first probe ("the keys to the cabinet").
  // Deterministic for the seed; different seeds give different examples.
  std::vector<std::string> example_input(uint64_t seed) const;
};

// The names make_task accepts, in a stable order.
const std::vector<std::string>& task_names();
// Fails with a message listing the task names when `name` is unknown.
Result<Task> make_task(const std::string& name, const TaskOptions& opt = {});

// The same task written as one sequence for a decoder-only model: prompt = source + "=", then the
// answer; one vocabulary holding both sides and "=".
Task as_decoder_only(const Task& t);

// The induction task: its 26 symbols (a … z), the length range of each copy, and one copy: n
// different letters in random order (exposed for tests).
constexpr int kInductionMinHalf = 4, kInductionMaxHalf = 10;
const std::vector<std::string>& induction_letters();
std::vector<std::string> induction_half(Rng& rng, int n);

// The dates task's formats of one date, e.g. for 2026-11-21: "21 November 2026", "Nov 21, 2026",
// "21/11/2026", "Saturday 21 Nov 2026". Exposed for tests.
std::vector<std::string> date_formats(int year, int month, int day);
int day_of_week(int year, int month, int day);  // 0 = Monday

}  // namespace sf
