// The sentence tasks' mini-language (train/grammar.h, train/lexicon.h): German inflection against
// hand-written forms, whole sentences translated by hand, verb-second and verb-last word order,
// the language model's probes, the held-out split and determinism.
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"
#include "train/grammar.h"
#include "train/lexicon.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace sf {
namespace {

using namespace lexicon;
using grammar::Clause;
using grammar::NounPhrase;
using grammar::Sentence;

NounPhrase np(const char* det, const char* noun_en, Number n = Number::Sg, const char* adj = nullptr) {
  NounPhrase p;
  p.det = det;
  p.noun = noun(noun_en);
  p.number = n;
  p.adj = adj ? adjective(adj) : nullptr;
  EXPECT_TRUE(p.noun) << noun_en;
  return p;
}

Clause clause(NounPhrase subj, const char* verb_en) {
  Clause c;
  c.subject.np = std::move(subj);
  c.verb = verb(verb_en);
  EXPECT_TRUE(c.verb) << verb_en;
  return c;
}
Clause clause(const char* pronoun_en, const char* verb_en) {
  Clause c;
  c.subject.pronoun = pronoun(pronoun_en);
  c.verb = verb(verb_en);
  EXPECT_TRUE(c.subject.pronoun && c.verb) << pronoun_en << " " << verb_en;
  return c;
}

std::string en(const Sentence& s) { return test::joined(grammar::realise(s).src); }
std::string de(const Sentence& s) { return test::joined(grammar::realise(s).tgt); }

// Article + adjective + noun in one gender, number and case.
std::string de_np(const char* det, const char* noun_en, Number n, Case c, const char* adj) {
  const Noun& w = *noun(noun_en);
  return de_article(det, w.gender, n, c) + " " + de_adjective(*adjective(adj), det, w.gender, n, c) + " " +
         de_noun(w, n, c);
}

TEST(Lexicon, GermanNounPhrasesDeclineByGenderNumberAndCase) {
  const Number S = Number::Sg, P = Number::Pl;
  const Case N = Case::Nom, A = Case::Acc, D = Case::Dat;
  // Definite article, weak adjective endings (a grammar book's table).
  EXPECT_EQ(de_np("the", "dog", S, N, "small"), "der kleine Hund");
  EXPECT_EQ(de_np("the", "dog", S, A, "small"), "den kleinen Hund");
  EXPECT_EQ(de_np("the", "dog", S, D, "small"), "dem kleinen Hund");
  EXPECT_EQ(de_np("the", "cat", S, N, "small"), "die kleine Katze");
  EXPECT_EQ(de_np("the", "cat", S, A, "small"), "die kleine Katze");
  EXPECT_EQ(de_np("the", "cat", S, D, "small"), "der kleinen Katze");
  EXPECT_EQ(de_np("the", "horse", S, N, "small"), "das kleine Pferd");
  EXPECT_EQ(de_np("the", "horse", S, A, "small"), "das kleine Pferd");
  EXPECT_EQ(de_np("the", "horse", S, D, "small"), "dem kleinen Pferd");
  EXPECT_EQ(de_np("the", "dog", P, N, "small"), "die kleinen Hunde");
  EXPECT_EQ(de_np("the", "dog", P, D, "small"), "den kleinen Hunden");  // dative plural -n
  EXPECT_EQ(de_np("the", "car", P, D, "small"), "den kleinen Autos");   // not after -s
  EXPECT_EQ(de_np("the", "cat", P, D, "small"), "den kleinen Katzen");  // nor after -n
  // Indefinite and possessive articles, mixed endings: the adjective shows the gender.
  EXPECT_EQ(de_np("a", "dog", S, N, "small"), "ein kleiner Hund");
  EXPECT_EQ(de_np("a", "dog", S, A, "small"), "einen kleinen Hund");
  EXPECT_EQ(de_np("a", "dog", S, D, "small"), "einem kleinen Hund");
  EXPECT_EQ(de_np("a", "cat", S, N, "small"), "eine kleine Katze");
  EXPECT_EQ(de_np("a", "cat", S, D, "small"), "einer kleinen Katze");
  EXPECT_EQ(de_np("a", "horse", S, N, "small"), "ein kleines Pferd");
  EXPECT_EQ(de_np("a", "horse", S, A, "small"), "ein kleines Pferd");
  EXPECT_EQ(de_np("my", "horse", S, D, "small"), "meinem kleinen Pferd");
  EXPECT_EQ(de_np("my", "dog", P, N, "small"), "meine kleinen Hunde");
  EXPECT_EQ(de_np("my", "dog", P, D, "small"), "meinen kleinen Hunden");
  // An adjective ending in -e takes no second e; umlauts and ß pass through.
  EXPECT_EQ(de_np("the", "girl", S, N, "tired"), "das müde Mädchen");
  EXPECT_EQ(de_np("a", "dog", S, N, "tired"), "ein müder Hund");
  EXPECT_EQ(de_np("the", "man", P, D, "big"), "den großen Männern");
  EXPECT_EQ(std::string(de_pronoun(*noun("girl"), S)), "es");  // das Mädchen → es
  EXPECT_EQ(std::string(de_pronoun(*noun("dog"), S)), "er");
  EXPECT_EQ(std::string(de_pronoun(*noun("dog"), P)), "sie");
  EXPECT_EQ(std::string(en_indefinite("apple")), "an");
  EXPECT_EQ(std::string(en_indefinite("old")), "an");
  EXPECT_EQ(std::string(en_indefinite("dog")), "a");
}

TEST(Grammar, VerbsAgreeWithPersonAndNumberInBothLanguages) {
  struct Case {
    const char* pronoun;
    const char* english;
    const char* german;
  };
  const Case cases[] = {{"i", "i sleep", "ich schlafe"},       {"you", "you sleep", "du schläfst"},
                        {"he", "he sleeps", "er schläft"},     {"she", "she sleeps", "sie schläft"},
                        {"it", "it sleeps", "es schläft"},     {"we", "we sleep", "wir schlafen"},
                        {"they", "they sleep", "sie schlafen"}};
  for (const Case& c : cases) {
    Sentence s;
    s.main = clause(c.pronoun, "sleep");
    EXPECT_EQ(en(s), c.english);
    EXPECT_EQ(de(s), c.german);
  }
  Sentence s;
  s.main = clause("i", "be");
  s.main.predicate = adjective("tired");
  EXPECT_EQ(en(s), "i am tired");
  EXPECT_EQ(de(s), "ich bin müde");
  s.main = clause("you", "read");
  s.main.object1 = np("a", "book");
  EXPECT_EQ(en(s), "you read a book");
  EXPECT_EQ(de(s), "du liest ein Buch");
  s.main = clause(np("the", "dog", Number::Pl, "old"), "be");
  s.main.predicate = adjective("happy");
  EXPECT_EQ(en(s), "the old dogs are happy");
  EXPECT_EQ(de(s), "die alten Hunde sind glücklich");
}

TEST(Grammar, CasesOfObjectsAndPrepositions) {
  Sentence s;
  s.main = clause(np("the", "man"), "give");
  s.main.object1 = np("the", "dog");
  s.main.object2 = np("a", "ball", Number::Sg, "red");
  EXPECT_EQ(en(s), "the man gives the dog a red ball");
  EXPECT_EQ(de(s), "der Mann gibt dem Hund einen roten Ball");  // dative, then accusative
  s.main = clause(np("a", "woman"), "see");
  s.main.object1 = np("the", "dog", Number::Sg, "old");
  s.main.prep = preposition("with");
  s.main.prep_object = np("my", "cat", Number::Pl);
  EXPECT_EQ(en(s), "a woman sees the old dog with my cats");
  EXPECT_EQ(de(s), "eine Frau sieht den alten Hund mit meinen Katzen");
  s.main = clause(np("the", "child"), "sleep");
  s.main.prep = preposition("without");
  s.main.prep_object = np("a", "apple", Number::Sg);
  EXPECT_EQ(en(s), "the child sleeps without an apple");
  EXPECT_EQ(de(s), "das Kind schläft ohne einen Apfel");  // ohne takes the accusative
}

TEST(Grammar, VerbSecondAfterAFrontedAdverb) {
  Sentence s;
  s.adverb = adverb("today");
  s.main = clause(np("the", "dog"), "sleep");
  EXPECT_EQ(en(s), "today the dog sleeps");
  EXPECT_EQ(de(s), "heute schläft der Hund");
  s.main = clause(np("the", "woman"), "read");
  s.main.object1 = np("the", "letter");
  EXPECT_EQ(en(s), "today the woman reads the letter");
  EXPECT_EQ(de(s), "heute liest die Frau den Brief");
}

TEST(Grammar, VerbLastInSubordinateClausesAndPronounsTakeTheGermanGender) {
  Sentence s;
  s.main = clause(np("the", "man"), "be");
  s.main.predicate = adjective("sad");
  s.has_sub = true;
  s.conjunction = conjunction("because");
  s.sub = clause(np("the", "dog"), "be");
  s.sub.predicate = adjective("tired");
  EXPECT_EQ(en(s), "the man is sad because the dog is tired");
  EXPECT_EQ(de(s), "der Mann ist traurig , weil der Hund müde ist");
  s.sub = clause(np("the", "dog"), "see");
  s.sub.object1 = np("the", "cat", Number::Pl);
  EXPECT_EQ(en(s), "the man is sad because the dog sees the cats");
  EXPECT_EQ(de(s), "der Mann ist traurig , weil der Hund die Katzen sieht");
  // "it" refers to the dog (masculine in German) and "she" to the girl (neuter).
  s.main = clause(np("the", "dog"), "sleep");
  s.main.predicate = nullptr;
  s.sub = clause("it", "be");
  s.sub.predicate = adjective("tired");
  EXPECT_EQ(en(s), "the dog sleeps because it is tired");
  EXPECT_EQ(de(s), "der Hund schläft , weil er müde ist");
  s.main = clause(np("the", "girl"), "sleep");
  s.sub = clause("she", "be");
  s.sub.predicate = adjective("tired");
  EXPECT_EQ(de(s), "das Mädchen schläft , weil es müde ist");
  s.sub = clause("he", "be");  // matches nothing in the main clause: er
  s.sub.predicate = adjective("tired");
  EXPECT_EQ(de(s), "das Mädchen schläft , weil er müde ist");
  // A saying verb with "that"; a ditransitive verb last.
  Sentence t;
  t.main = clause("she", "say");
  t.has_sub = true;
  t.sub = clause(np("my", "father"), "give");
  t.sub.object1 = np("the", "horse", Number::Pl);
  t.sub.object2 = np("a", "apple");
  EXPECT_EQ(en(t), "she says that my father gives the horses an apple");
  EXPECT_EQ(de(t), "sie sagt , dass mein Vater den Pferden einen Apfel gibt");
}

// Over many generated sentences: a subordinate clause's German ends with its finite verb, a
// fronted adverb is followed by the verb, and English and German have the same number of words
// apart from the comma.
TEST(Grammar, GeneratedSentencesKeepTheWordOrderRules) {
  std::set<std::string> finite;
  for (const Verb& v : verbs()) finite.insert({v.de_pl, v.de_1sg, v.de_2sg, v.de_3sg});
  std::set<std::string> adverbs_de;
  for (const Word& w : adverbs()) adverbs_de.insert(w.de);
  Rng rng(11);
  int subordinate = 0, fronted = 0;
  for (int i = 0; i < 5000; ++i) {
    const Example e = grammar::translation(rng);
    ASSERT_LE(static_cast<int>(e.src.size()), grammar::kMaxEnglish);
    ASSERT_LE(static_cast<int>(e.tgt.size()), grammar::kMaxGerman);
    const bool comma = std::find(e.tgt.begin(), e.tgt.end(), ",") != e.tgt.end();
    EXPECT_EQ(e.tgt.size(), e.src.size() + (comma ? 1 : 0)) << test::joined(e.src);
    if (comma) {
      ++subordinate;
      EXPECT_TRUE(finite.count(e.tgt.back())) << test::joined(e.tgt);
    }
    if (adverbs_de.count(e.tgt.front())) {
      ++fronted;
      EXPECT_TRUE(finite.count(e.tgt[1])) << test::joined(e.tgt);
    }
  }
  EXPECT_GT(subordinate, 2000);
  EXPECT_GT(fronted, 500);
}

TEST(Grammar, LanguageModelProbesNameTheRightWords) {
  Rng rng(5);
  int agreement = 0, pronoun = 0;
  const std::set<std::string> singular{"is", "was", "sleeps", "sees"}, plural{"are", "were", "sleep", "see"};
  for (int i = 0; i < 3000; ++i) {
    const Example e = grammar::lm_sentence(rng);
    ASSERT_TRUE(e.src.empty());
    ASSERT_EQ(e.probes.size(), 1u);
    ASSERT_LE(static_cast<int>(e.tgt.size()), grammar::kMaxLmWords);
    const Probe& p = e.probes[0];
    ASSERT_LT(p.at, static_cast<int>(e.tgt.size()));
    // The sentence's own word is accepted.
    EXPECT_NE(std::find(p.accept.begin(), p.accept.end(), e.tgt[static_cast<size_t>(p.at)]), p.accept.end());
    if (p.kind == grammar::kAgreement) {
      ++agreement;
      // The head noun is the sentence's second or third word (after the article and an adjective):
      // a plural head accepts only plural forms.
      const Noun* head = nullptr;
      bool plural_head = false;
      for (int k = 1; k <= 2 && !head; ++k)
        for (const Noun& n : nouns()) {
          if (e.tgt[static_cast<size_t>(k)] == n.en_sg) head = &n;
          if (e.tgt[static_cast<size_t>(k)] == n.en_pl) head = &n, plural_head = true;
        }
      ASSERT_TRUE(head) << test::joined(e.tgt);
      for (const std::string& w : p.accept) {
        EXPECT_EQ(plural.count(w), plural_head ? plural.count(w) : 0u) << test::joined(e.tgt);
        EXPECT_EQ(singular.count(w), plural_head ? 0u : singular.count(w)) << test::joined(e.tgt);
      }
      EXPECT_TRUE(std::find(p.accept.begin(), p.accept.end(), plural_head ? "are" : "is") != p.accept.end());
    } else {
      ++pronoun;
      ASSERT_EQ(p.kind, grammar::kPronoun);
      EXPECT_EQ(e.tgt[static_cast<size_t>(p.at) - 1], "too");
      // The pronoun after "because" names exactly one of the two nouns.
      const std::string pron = e.tgt[static_cast<size_t>(p.at) - 3];
      EXPECT_TRUE(pron == "he" || pron == "she" || pron == "it" || pron == "they") << test::joined(e.tgt);
      const bool alive = std::find(p.accept.begin(), p.accept.end(), "tired") != p.accept.end();
      if (pron == "he" || pron == "she") {
        EXPECT_TRUE(alive) << test::joined(e.tgt);
      }
    }
  }
  EXPECT_GT(agreement, 1500);
  EXPECT_GT(pronoun, 900);
}

TEST(Grammar, HandCheckedLanguageModelSentence) {
  // Find "… didn't cross the street because it was too …" among generated sentences: with a
  // woman as the subject, "it" can only be the street.
  Rng rng(3);
  int found = 0;
  for (int i = 0; i < 20000 && found < 3; ++i) {
    const Example e = grammar::lm_sentence(rng);
    const std::string s = test::joined(e.tgt);
    if (s.rfind("the woman didn't cross the street because it was too", 0) == 0) {
      ++found;
      EXPECT_EQ(e.probes[0].accept, (std::vector<std::string>{"wide", "long", "busy"}));
    }
    if (s.rfind("the woman didn't cross the street because she was too", 0) == 0) {
      ++found;
      EXPECT_EQ(e.probes[0].accept, (std::vector<std::string>{"tired", "weak", "lazy", "scared"}));
    }
  }
  EXPECT_GE(found, 1);
}

TEST(Grammar, SentenceTasksSplitDisjointlyAndDeterministically) {
  for (const char* name : {"en-de", "en-lm"}) {
    auto t = make_task(name);
    ASSERT_TRUE(t.ok()) << t.error();
    const auto train = t->sample_many(7, 4000, Split::Train);
    const auto again = t->sample_many(7, 4000, Split::Train);
    const auto other = t->sample_many(8, 50, Split::Train);
    const auto val = t->sample_many(kValidationSeed, 1000, Split::Validation);
    std::set<std::string> held, seen;
    int differ = 0;
    for (size_t i = 0; i < 50; ++i) differ += train[i].tgt != other[i].tgt;
    EXPECT_GT(differ, 40) << name;  // another seed, other sentences
    for (size_t i = 0; i < train.size(); ++i) {
      EXPECT_EQ(train[i].src, again[i].src) << name;
      EXPECT_EQ(train[i].tgt, again[i].tgt) << name;
      seen.insert(t->key(train[i]));
    }
    for (const auto& e : val) {
      EXPECT_TRUE(t->held_out(e)) << name;
      held.insert(t->key(e));
      EXPECT_FALSE(seen.count(t->key(e))) << name << ": a held-out sentence was trained on: " << t->key(e);
    }
    EXPECT_GT(held.size(), 900u) << name;  // mostly distinct sentences
    // Every word is in the vocabulary; the model's max_len holds the longest example.
    TrainOptions o;
    o.task = name;
    const Config c = model_config(o, *t);
    for (const auto* set : {&train, &val})
      for (const auto& e : *set) {
        for (const auto& s : e.src) ASSERT_GE(c.src_vocab.id(s), 0) << name << ": '" << s << "'";
        for (const auto& s : e.tgt) ASSERT_GE(c.tgt_vocab.id(s), 0) << name << ": '" << s << "'";
        EXPECT_LE(static_cast<int>(e.src.size() + (c.has_encoder() ? 0 : 1)), c.max_len);
        EXPECT_LE(static_cast<int>(e.tgt.size()) + 1, c.max_len);
      }
    EXPECT_EQ(t->example_input(3), t->example_input(3));
    EXPECT_NE(t->example_input(3), t->example_input(4));
  }
  // The language model's example input stops before its probe: after "too" (pronoun) or after the
  // distractor, which ends with a noun or a verb ("the keys to the cabinet", "the books that the
  // woman reads").
  auto lm = make_task("en-lm");
  std::set<std::string> ends{"too"};
  for (const Noun& n : nouns()) ends.insert({n.en_sg, n.en_pl});
  for (const Verb& v : verbs()) ends.insert({v.en_base, v.en_3sg});
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto in = lm->example_input(seed);
    ASSERT_GE(in.size(), 3u);
    EXPECT_TRUE(ends.count(in.back())) << test::joined(in);
  }
}

}  // namespace
}  // namespace sf
