#include "train/tasks.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "train/grammar.h"

namespace sf {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  // Final avalanche so that nearby keys spread over the buckets.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

std::vector<std::string> digits(int n) {
  std::vector<std::string> d;
  for (int i = 0; i < n; ++i) d.push_back(std::to_string(i));
  return d;
}

std::vector<std::string> random_digits(Rng& rng, const TaskOptions& o) {
  const int len = o.min_len + static_cast<int>(rng.below(static_cast<uint64_t>(o.max_len - o.min_len + 1)));
  std::vector<std::string> s;
  for (int i = 0; i < len; ++i) s.push_back(std::to_string(rng.below(static_cast<uint64_t>(o.n_symbols))));
  return s;
}

std::vector<std::string> number_tokens(int x) {
  std::vector<std::string> t;
  for (char c : std::to_string(x)) t.push_back(std::string(1, c));
  return t;
}

std::vector<std::string> chars(const std::string& s) {
  std::vector<std::string> t;
  for (char c : s) t.push_back(c == ' ' ? "_" : std::string(1, c));
  return t;
}

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kDays[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int days_in_month(int y, int m) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : d[m - 1];
}

constexpr int kFirstYear = 1900, kLastYear = 2099;

}  // namespace

const std::vector<std::string>& induction_letters() {
  static const std::vector<std::string> letters = [] {
    std::vector<std::string> v;
    for (char ch = 'a'; ch <= 'z'; ++ch) v.push_back(std::string(1, ch));
    return v;
  }();
  return letters;
}

std::vector<std::string> induction_half(Rng& rng, int n) {
  // A partial Fisher–Yates shuffle: n different letters, so every repeated token has exactly one
  // earlier copy and the token to copy is never ambiguous.
  std::vector<std::string> pool = induction_letters();
  n = std::min(n, static_cast<int>(pool.size()));
  for (int i = 0; i < n; ++i) {
    const size_t j = static_cast<size_t>(i) + rng.below(pool.size() - static_cast<size_t>(i));
    std::swap(pool[static_cast<size_t>(i)], pool[j]);
  }
  pool.resize(static_cast<size_t>(n));
  return pool;
}

int day_of_week(int y, int m, int d) {
  // Sakamoto's method: 0 = Sunday; shifted so that 0 = Monday.
  static const int t[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
  if (m < 3) y -= 1;
  const int sunday0 = (y + y / 4 - y / 100 + y / 400 + t[m - 1] + d) % 7;
  return (sunday0 + 6) % 7;
}

std::vector<std::string> date_formats(int y, int m, int d) {
  char buf[64];
  std::vector<std::string> out;
  const std::string month = kMonths[m - 1], mon = month.substr(0, 3);
  std::snprintf(buf, sizeof buf, "%d %s %d", d, month.c_str(), y);
  out.push_back(buf);
  std::snprintf(buf, sizeof buf, "%s %d, %d", mon.c_str(), d, y);
  out.push_back(buf);
  std::snprintf(buf, sizeof buf, "%02d/%02d/%d", d, m, y);
  out.push_back(buf);
  std::snprintf(buf, sizeof buf, "%s %d %s %d", kDays[day_of_week(y, m, d)], d, mon.c_str(), y);
  out.push_back(buf);
  return out;
}

bool Task::held_out(const Example& e) const { return fnv1a(name + "|" + key(e)) % 10 == 0; }

Example Task::sample(Rng& rng, Split split) const {
  for (;;) {
    Example e = generate(rng);
    if (held_out(e) == (split == Split::Validation)) return e;
  }
}

std::vector<Example> Task::sample_many(uint64_t seed, int n, Split split) const {
  Rng rng(seed);
  std::vector<Example> v;
  v.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v.push_back(sample(rng, split));
  return v;
}

static std::vector<std::string> with_specials(const std::vector<std::string>& symbols) {
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  v.insert(v.end(), symbols.begin(), symbols.end());
  return v;
}

std::vector<std::string> Task::src_vocab() const { return with_specials(src_symbols); }
std::vector<std::string> Task::tgt_vocab() const { return with_specials(tgt_symbols); }

int Task::model_max_len() const {
  return arch == Arch::EncoderDecoder ? std::max(max_src, max_tgt + 1) : 1 + max_src + max_tgt + 1;
}

std::string Task::text(const std::vector<std::string>& tokens) const {
  std::string s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokenizer == Tokenizer::Character)
      s += tokens[i] == "_" ? " " : tokens[i];
    else
      s += (i ? " " : "") + tokens[i];
  }
  return s;
}

Task as_decoder_only(const Task& t) {
  Task d = t;
  d.arch = Arch::DecoderOnly;
  std::vector<std::string> sym = t.src_symbols;
  for (const auto& s : t.tgt_symbols)
    if (std::find(sym.begin(), sym.end(), s) == sym.end()) sym.push_back(s);
  if (std::find(sym.begin(), sym.end(), "=") == sym.end()) sym.push_back("=");
  d.src_symbols.clear();
  d.tgt_symbols = sym;
  d.max_src = t.max_src + 1;
  auto gen = t.generate;
  d.generate = [gen](Rng& rng) {
    Example e = gen(rng);
    e.src.push_back("=");
    return e;
  };
  return d;
}

std::vector<std::string> Task::example_input(uint64_t seed) const {
  Rng rng(seed ^ 0x6578616d706c65ULL);
  const Example e = sample(rng, Split::Validation);
  if (!e.probes.empty()) return {e.tgt.begin(), e.tgt.begin() + e.probes.front().at};
  return e.src;
}

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names{"copy",    "reverse", "sort",  "add",      "dates",
                                              "copy-lm", "en-de",   "en-lm", "induction"};
  return names;
}

namespace {

// A task's name and its default held-out key: the input sequence.
Task named_task(const std::string& name) {
  Task t;
  t.name = name;
  t.key = [](const Example& e) { return join(e.src); };
  return t;
}

// copy, reverse, sort: a random digit sequence and the same digits copied, reversed or sorted.
Task digit_sequence_task(const std::string& name, const TaskOptions& o) {
  Task t = named_task(name);
  t.description = name == "copy"      ? "copy a digit sequence"
                  : name == "reverse" ? "reverse a digit sequence"
                                      : "sort a digit sequence ascending";
  t.src_symbols = t.tgt_symbols = digits(o.n_symbols);
  t.max_src = t.max_tgt = o.max_len;
  t.generate = [o, name](Rng& rng) {
    Example e;
    e.src = random_digits(rng, o);
    e.tgt = e.src;
    if (name == "reverse") std::reverse(e.tgt.begin(), e.tgt.end());
    if (name == "sort") std::sort(e.tgt.begin(), e.tgt.end());
    return e;
  };
  return t;
}

// add: "3 4 7 + 5 8" -> "4 0 5".
Task addition_task() {
  Task t = named_task("add");
  t.description = "add two numbers of 1-3 digits, digit by digit";
  t.src_symbols = digits(10);
  t.src_symbols.push_back("+");
  t.tgt_symbols = digits(10);
  t.max_src = 7;
  t.max_tgt = 4;
  t.generate = [](Rng& rng) {
    // Operand lengths uniform in 1..3, then the digits: short sums are as common as long ones.
    auto number = [&rng]() {
      const int len = 1 + static_cast<int>(rng.below(3));
      int lo = len == 1 ? 0 : len == 2 ? 10 : 100;
      int hi = len == 1 ? 9 : len == 2 ? 99 : 999;
      return lo + static_cast<int>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
    };
    const int a = number(), b = number();
    Example e;
    e.src = number_tokens(a);
    e.src.push_back("+");
    for (auto& s : number_tokens(b)) e.src.push_back(s);
    e.tgt = number_tokens(a + b);
    return e;
  };
  return t;
}

// dates: a date written in one of four formats, character by character, to ISO 8601.
Task dates_task() {
  Task t = named_task("dates");
  t.description = "normalise a written date to ISO 8601 (character level)";
  t.tokenizer = Tokenizer::Character;
  std::set<std::string> sym;
  int longest = 0;
  for (int m = 1; m <= 12; ++m)
    for (const std::string& f : date_formats(2000, m, 28))
      for (auto& c : chars(f)) sym.insert(c);
  for (int wd = 0; wd < 7; ++wd) {
    std::string s = kDays[wd];
    for (auto& c : chars(s)) sym.insert(c);
  }
  for (int d = 0; d <= 9; ++d) sym.insert(std::to_string(d));
  // Longest input: the longest weekday + "30" + "Sep" ... or the full month name format.
  for (int wd = 0; wd < 7; ++wd) longest = std::max(longest, static_cast<int>(std::string(kDays[wd]).size()) + 13);
  for (int m = 0; m < 12; ++m) longest = std::max(longest, static_cast<int>(std::string(kMonths[m]).size()) + 8);
  t.src_symbols.assign(sym.begin(), sym.end());
  t.tgt_symbols = digits(10);
  t.tgt_symbols.push_back("-");
  t.max_src = longest;
  t.max_tgt = 10;
  t.generate = [](Rng& rng) {
    const int y = kFirstYear + static_cast<int>(rng.below(kLastYear - kFirstYear + 1));
    const int m = 1 + static_cast<int>(rng.below(12));
    const int d = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(days_in_month(y, m))));
    const auto formats = date_formats(y, m, d);
    Example e;
    e.src = chars(formats[rng.below(formats.size())]);
    char iso[64];  // as date_formats: room for any int, which the compiler cannot bound here
    std::snprintf(iso, sizeof iso, "%04d-%02d-%02d", y, m, d);
    e.tgt = chars(iso);
    return e;
  };
  t.key = [](const Example& e) { return join(e.tgt); };  // the date: held out in every format
  return t;
}

// en-de: English sentences of the grammar (train/grammar.h) and their German translations.
Task translation_task() {
  Task t = named_task("en-de");
  t.description = "translate an English sentence to German (word level; agreement, verb-second, verb-last)";
  t.src_symbols = grammar::english_words();
  t.tgt_symbols = grammar::german_words();
  t.max_src = grammar::kMaxEnglish;
  t.max_tgt = grammar::kMaxGerman;
  t.generate = grammar::translation;
  return t;
}

// en-lm: a decoder-only language model of the grammar's English sentences.
Task english_lm_task() {
  Task t = named_task("en-lm");
  t.description = "English language model (word level; agreement across distractors, pronouns)";
  t.arch = Arch::DecoderOnly;
  t.tgt_symbols = grammar::lm_words();
  t.max_src = 0;
  t.max_tgt = grammar::kMaxLmWords;
  t.generate = grammar::lm_sentence;
  t.key = [](const Example& e) { return join(e.tgt); };  // the sentence
  return t;
}

// Olsson et al. 2022, "In-context Learning and Induction Heads": random tokens, then the same
// tokens again. Nothing predicts the first copy or the repeat's first token, so both are the
// prompt; the loss falls on the rest of the repeat (and the end), which a model predicts by
// finding the current token earlier and copying the token that followed it there. The length
// varies, so no fixed offset ("the token 9 back") answers it.
Task induction_task() {
  Task t = named_task("induction");
  t.description = "random letters, then the same letters again: predict the repeat (induction heads)";
  t.arch = Arch::DecoderOnly;
  t.tgt_symbols = induction_letters();
  t.max_src = kInductionMaxHalf + 1;
  t.max_tgt = kInductionMaxHalf - 1;
  t.generate = [](Rng& rng) {
    const int half = kInductionMinHalf +
                     static_cast<int>(rng.below(static_cast<uint64_t>(kInductionMaxHalf - kInductionMinHalf + 1)));
    Example e;
    e.src = induction_half(rng, half);
    e.src.push_back(e.src.front());
    e.tgt.assign(e.src.begin() + 1, e.src.begin() + half);
    return e;
  };
  return t;
}

}  // namespace

Result<Task> make_task(const std::string& name, const TaskOptions& o) {
  if (o.min_len < 1 || o.max_len < o.min_len || o.n_symbols < 2 || o.n_symbols > 10)
    return Error{"task options: expected 1 <= min_len <= max_len and 2 <= symbols <= 10, found min_len " +
                 std::to_string(o.min_len) + ", max_len " + std::to_string(o.max_len) + ", symbols " +
                 std::to_string(o.n_symbols)};
  if (name == "copy" || name == "reverse" || name == "sort") return digit_sequence_task(name, o);
  if (name == "add") return addition_task();
  if (name == "dates") return dates_task();
  if (name == "copy-lm") {
    auto copy = make_task("copy", o);
    if (!copy) return copy;
    Task t = as_decoder_only(*copy);
    t.name = name;
    t.description = "decoder-only copy: the prompt '3 5 1 =' continues with '3 5 1'";
    return t;
  }
  if (name == "en-de") return translation_task();
  if (name == "en-lm") return english_lm_task();
  if (name == "induction") return induction_task();
  std::string names;
  for (const auto& n : task_names()) names += (names.empty() ? "" : ", ") + n;
  return Error{"task: expected one of " + names + "; found '" + name + "'"};
}

}  // namespace sf
