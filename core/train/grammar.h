// grammar.h — a generated mini-language of short English sentences (train/lexicon.h holds the
// words), for two word-level tasks:
//
//   en-de  English → German translation. German needs agreement (articles and adjective endings by
//          gender and case: der kleine Hund / den kleinen Hund / dem kleinen Hund / ein kleiner
//          Hund; verb endings by person and number: ich schlafe, du schläfst, er schläft, wir
//          schlafen), gendered pronouns (the dog … it → der Hund … er; the girl … she → das
//          Mädchen … es), and word-order changes: the verb goes last in a subordinate clause
//          ("… because the dog sees the cat" → "… , weil der Hund die Katze sieht") and second
//          after a fronted adverb ("today the dog sleeps" → "heute schläft der Hund"). Sentences:
//          a main clause, optionally with a fronted adverb; or main clause + because/although/when
//          + subordinate clause; or a saying verb + "that" + subordinate clause.
//   en-lm  an English language model over sentences with something to track:
//          subject–verb agreement across a distractor ("the keys to the cabinet are old", "the dog
//          that sees the cats is happy", "the books that the woman reads are new") and pronouns
//          whose referent decides the adjective ("the woman didn't cross the street because it was
//          too wide" / "… because she was too tired": the pronoun names exactly one of the two
//          nouns by gender or number, and people and animals get tired/weak/lazy/scared while a
//          place gets wide/long/busy and a thing heavy/big/full).
//
// Every sentence is a function of the random draws, so a seed fixes the sequence of examples. The
// language model's examples carry probes (example.h): the main verb after the distractor must have
// the subject's number, and the adjective after "too" must suit the pronoun's referent.
#pragma once

#include <string>
#include <vector>

#include "base/rng.h"
#include "train/lexicon.h"
#include "train/example.h"

namespace sf::grammar {

// ---- a translation sentence as the generator draws it --------------------------------------------

struct NounPhrase {
  const lexicon::Noun* noun = nullptr;  // null: no phrase
  lexicon::Number number = lexicon::Number::Sg;
  std::string det = "the";  // "the", "a" (singular only; English "an" before a vowel), "my"
  const lexicon::Adjective* adj = nullptr;
};

struct Subject {
  const lexicon::Pronoun* pronoun = nullptr;  // a pronoun subject, or
  NounPhrase np;                              // a noun phrase
  lexicon::Person person() const { return pronoun ? pronoun->person : lexicon::Person::Third; }
  lexicon::Number number() const { return pronoun ? pronoun->number : np.number; }
};

struct Clause {
  Subject subject;
  const lexicon::Verb* verb = nullptr;
  const lexicon::Adjective* predicate = nullptr;  // the copula's adjective
  NounPhrase object1;                          // transitive: the object (accusative); ditransitive: the dative object
  NounPhrase object2;                          // ditransitive: the accusative object
  const lexicon::Preposition* prep = nullptr;  // an adjunct (intransitive and transitive verbs)
  NounPhrase prep_object;
};

struct Sentence {
  const lexicon::Word* adverb = nullptr;  // fronted: German puts the verb second, before the subject
  Clause main;
  bool has_sub = false;                        // a subordinate clause follows (German: a comma, verb last)
  const lexicon::Word* conjunction = nullptr;  // because/although/when; null: "that" (after say/think/believe)
  Clause sub;                                  // a pronoun matching the main subject's English pronoun refers to it
};

// The English words (src) and the German translation (tgt) of a sentence.
Example realise(const Sentence& s);

constexpr int kMaxEnglish = 16;  // translation source: longest English sentence in words
constexpr int kMaxGerman = 17;   // its German (the comma before a subordinate clause adds one)
constexpr int kMaxLmWords = 15;  // language-model sentence

// One English sentence and its German translation (src English, tgt German).
Example translation(Rng& rng);
// One English sentence for the language model (src empty, tgt the words) with its probes.
Example lm_sentence(Rng& rng);

// Every word the generators can produce, sorted (the tasks' vocabularies).
std::vector<std::string> english_words();  // translation source
std::vector<std::string> german_words();   // translation target
std::vector<std::string> lm_words();       // language model

// The probe kinds of the language model.
constexpr const char* kAgreement = "agreement";  // verb number after a distractor
constexpr const char* kPronoun = "pronoun";      // adjective class of the pronoun's referent

}  // namespace sf::grammar
