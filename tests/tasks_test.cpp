// The toy tasks: what each produces, that the train/validation split is disjoint and
// deterministic, and how examples become padded batches.
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"
#include "train/batch.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace sf {
namespace {

TEST(Tasks, EveryTaskIsDeterministicAndSplitIsDisjoint) {
  for (const std::string& name : task_names()) {
    auto t = make_task(name);
    ASSERT_TRUE(t.ok()) << t.error();
    const auto a = t->sample_many(7, 300, Split::Train), b = t->sample_many(7, 300, Split::Train);
    const auto val = t->sample_many(kValidationSeed, 300, Split::Validation);
    std::set<std::string> val_keys;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].src, b[i].src) << name;
      EXPECT_FALSE(t->held_out(a[i])) << name;
      EXPECT_LE(static_cast<int>(a[i].src.size()), t->max_src) << name;
      EXPECT_LE(static_cast<int>(a[i].tgt.size()), t->max_tgt) << name;
    }
    for (const auto& e : val) {
      EXPECT_TRUE(t->held_out(e)) << name;
      val_keys.insert(t->key(e));
    }
    for (const auto& e : a) EXPECT_FALSE(val_keys.count(t->key(e))) << name << ": a training key is held out";
    // Every token is in the vocabulary.
    Config c;
    TrainOptions o;
    o.task = name;
    c = model_config(o, *t);
    for (const auto& e : val) {
      for (const auto& s : e.src)
        EXPECT_GE((c.has_encoder() ? c.src_vocab : c.tgt_vocab).id(s), 0) << name << ": '" << s << "'";
      for (const auto& s : e.tgt) EXPECT_GE(c.tgt_vocab.id(s), 0) << name << ": '" << s << "'";
    }
  }
  EXPECT_FALSE(make_task("nonsense").ok());
}

TEST(Tasks, WhatEachTaskComputes) {
  Rng rng(3);
  for (int i = 0; i < 50; ++i) {
    Example c = make_task("copy")->generate(rng), r = make_task("reverse")->generate(rng),
            s = make_task("sort")->generate(rng);
    EXPECT_EQ(c.src, c.tgt);
    EXPECT_EQ(std::vector<std::string>(r.src.rbegin(), r.src.rend()), r.tgt);
    EXPECT_TRUE(std::is_sorted(s.tgt.begin(), s.tgt.end()));
    EXPECT_TRUE(std::is_permutation(s.src.begin(), s.src.end(), s.tgt.begin()));
    EXPECT_GE(c.src.size(), 1u);
    EXPECT_LE(c.src.size(), 10u);
  }
  auto add = make_task("add");
  for (int i = 0; i < 200; ++i) {
    Example e = add->generate(rng);
    const std::string text = test::joined(e.src);  // "3 4 7 + 5 8"
    std::string a, b, sum;
    bool plus = false;
    for (auto& s : e.src) {
      if (s == "+")
        plus = true;
      else
        (plus ? b : a) += s;
    }
    for (auto& s : e.tgt) sum += s;
    EXPECT_EQ(std::stoi(a) + std::stoi(b), std::stoi(sum)) << text;
    EXPECT_EQ(std::to_string(std::stoi(sum)), sum) << "no leading zeros: " << text;
  }
  auto lm = make_task("copy-lm");
  EXPECT_EQ(lm->arch, Arch::DecoderOnly);
  Example e = lm->generate(rng);
  EXPECT_EQ(e.src.back(), "=");
  EXPECT_EQ(std::vector<std::string>(e.src.begin(), e.src.end() - 1), e.tgt);
}

// Induction: a prompt of 4–10 different letters and the first letter again; the answer is the rest
// of the repeat, so prompt + answer is the same letters twice.
TEST(Tasks, InductionRepeatsDistinctLetters) {
  auto t = make_task("induction");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->arch, Arch::DecoderOnly);
  EXPECT_EQ(t->tgt_symbols.size(), 26u);
  TrainOptions o;
  o.task = "induction";
  const Config c = model_config(o, *t);
  EXPECT_EQ(c.max_len, 1 + 2 * kInductionMaxHalf + 1);  // <s>, both copies, </s>
  Rng rng(11);
  std::set<std::string> firsts;
  std::set<size_t> lengths;
  for (int i = 0; i < 500; ++i) {
    const Example e = t->generate(rng);
    const size_t n = e.src.size() - 1;  // the length of one copy
    ASSERT_GE(n, static_cast<size_t>(kInductionMinHalf));
    ASSERT_LE(n, static_cast<size_t>(kInductionMaxHalf));
    ASSERT_EQ(e.tgt.size(), n - 1);
    const std::vector<std::string> half(e.src.begin(), e.src.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(std::set<std::string>(half.begin(), half.end()).size(), n) << test::joined(half) << ": distinct";
    std::vector<std::string> whole = e.src;
    whole.insert(whole.end(), e.tgt.begin(), e.tgt.end());
    ASSERT_EQ(whole.size(), 2 * n);
    for (size_t k = 0; k < n; ++k) EXPECT_EQ(whole[k], whole[k + n]) << test::joined(whole);
    for (const auto& s : whole) EXPECT_GE(c.tgt_vocab.id(s), 4) << s;  // a letter, not a special
    firsts.insert(half.front());
    lengths.insert(n);
  }
  EXPECT_EQ(firsts.size(), 26u) << "every letter starts some sequence";
  EXPECT_EQ(lengths.size(), static_cast<size_t>(kInductionMaxHalf - kInductionMinHalf + 1)) << "every length";
  // induction_half: n different letters, at most all 26.
  Rng r2(2);
  EXPECT_EQ(induction_half(r2, 40).size(), 26u);
  // Only the repeat after its first letter is scored: the batch's targets are the answer and </s>.
  const Example e = t->generate(rng);
  const Batch b = make_batch(c, {e});
  int scored = 0;
  for (int y : b.tgt_y) scored += y != c.tgt_vocab.pad();
  EXPECT_EQ(scored, static_cast<int>(e.tgt.size()) + 1);
}

TEST(Tasks, DatesFormatsAndWeekdays) {
  EXPECT_EQ(day_of_week(2026, 11, 21), 5);  // a Saturday
  EXPECT_EQ(day_of_week(2000, 1, 1), 5);    // a Saturday
  EXPECT_EQ(day_of_week(1900, 1, 1), 0);    // a Monday
  const auto f = date_formats(2026, 11, 21);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], "21 November 2026");
  EXPECT_EQ(f[1], "Nov 21, 2026");
  EXPECT_EQ(f[2], "21/11/2026");
  EXPECT_EQ(f[3], "Saturday 21 Nov 2026");
  auto t = make_task("dates");
  EXPECT_EQ(t->tokenizer, Tokenizer::Character);
  Rng rng(5);
  TrainOptions o;
  o.task = "dates";
  const Config c = model_config(o, *t);
  for (int i = 0; i < 100; ++i) {
    Example e = t->generate(rng);
    ASSERT_EQ(e.tgt.size(), 10u);
    EXPECT_EQ(e.tgt[4], "-");
    // The model's character tokenizer reads the example's text back as the same tokens.
    EXPECT_EQ(c.src_vocab.tokenize(t->text(e.src)).pieces, e.src) << t->text(e.src);
  }
}

TEST(Tasks, AnyTaskRunsDecoderOnly) {
  TrainOptions o;
  o.task = "sort";
  o.arch = Arch::DecoderOnly;
  o.arch_set = true;
  auto t = options_task(o);
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->arch, Arch::DecoderOnly);
  Rng rng(1);
  Example e = t->generate(rng);
  EXPECT_EQ(e.src.back(), "=");
  o.task = "copy-lm";
  o.arch = Arch::EncoderDecoder;
  EXPECT_FALSE(options_task(o).ok());
}

TEST(Batches, PaddingAndTargetsForBothArchitectures) {
  TrainOptions o;
  o.task = "copy";
  auto t = make_task("copy");
  const Config c = model_config(o, *t);
  const std::vector<Example> ex{{{"3", "5"}, {"3", "5"}, {}}, {{"7"}, {"7"}, {}}};
  const Batch b = make_batch(c, ex);
  const int pad = c.tgt_vocab.pad(), bos = c.tgt_vocab.bos(), eos = c.tgt_vocab.eos();
  const int d3 = c.tgt_vocab.id("3"), d5 = c.tgt_vocab.id("5"), d7 = c.tgt_vocab.id("7");
  EXPECT_EQ(b.n, 2);
  EXPECT_EQ(b.m, 3);
  EXPECT_EQ(b.src,
            (std::vector<int>{c.src_vocab.id("3"), c.src_vocab.id("5"), c.src_vocab.id("7"), c.src_vocab.pad()}));
  EXPECT_EQ(b.tgt_in, (std::vector<int>{bos, d3, d5, bos, d7, pad}));
  EXPECT_EQ(b.tgt_y, (std::vector<int>{d3, d5, eos, d7, eos, pad}));
  EXPECT_EQ(b.target_tokens, 5);
  const Batch second = b.rows(1, 1, pad);
  EXPECT_EQ(second.tgt_in, (std::vector<int>{bos, d7, pad}));
  EXPECT_EQ(second.target_tokens, 2);

  o.task = "copy-lm";
  auto lm = make_task("copy-lm");
  const Config cl = model_config(o, *lm);
  const Batch bl = make_batch(cl, {{{"3", "5", "="}, {"3", "5"}, {}}});
  const int p = cl.tgt_vocab.pad(), eq = cl.tgt_vocab.id("=");
  const int l3 = cl.tgt_vocab.id("3"), l5 = cl.tgt_vocab.id("5");
  EXPECT_EQ(bl.tgt_in, (std::vector<int>{cl.tgt_vocab.bos(), l3, l5, eq, l3, l5}));
  EXPECT_EQ(bl.tgt_y, (std::vector<int>{p, p, p, l3, l5, cl.tgt_vocab.eos()}));  // the prompt is not scored
}

}  // namespace
}  // namespace sf
