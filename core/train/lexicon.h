// lexicon.h — the words of the sentence tasks' mini-language (train/grammar.h): English nouns,
// adjectives and verbs with their German counterparts, genders and inflected forms.
//
// German is written in lower case except nouns, which keep their capital (der Hund, die Katze);
// umlauts and ß are UTF-8. No weak nouns (Junge, Student) and no adjectives whose stem changes
// (hoch → hoh-, dunkel → dunkl-), so inflection is stem + ending.
#pragma once

#include <string>
#include <vector>

namespace sf::lexicon {

enum class Gender { Masc, Fem, Neut };
enum class Case { Nom, Acc, Dat };
enum class Number { Sg, Pl };
// What a noun names: who can be a subject (Person, Animal) and which adjectives suit it when a
// pronoun points back to it (the language model's "because it was too …").
enum class Kind { Person, Animal, Thing, Place };

struct Noun {
  const char* en_sg;
  const char* en_pl;
  const char* de_sg;
  const char* de_pl;
  Gender gender;
  Kind kind;
  const char* en_pronoun;  // "he", "she", "it" in the singular; "" when English leaves it open (teacher)
};

// Which nouns an adjective or a verb's object suits, as a set of kinds.
enum Fits : unsigned {
  kAlive = 1u << 0 | 1u << 1,
  kThing = 1u << 2,
  kPlace = 1u << 3,
  kObject = kThing | kPlace,
  kAny = 15u
};
inline bool fits(unsigned set, Kind k) { return (set >> static_cast<unsigned>(k)) & 1u; }

struct Adjective {
  const char* en;
  const char* de;  // the predicate form, which is also the stem the endings attach to
  unsigned suits;  // Fits: people and animals, things and places, or both
};

// A verb's forms: English base and third person singular; German infinitive (= 1st/3rd plural),
// 1st, 2nd and 3rd person singular. Valency says which complements it takes.
enum class Valency { Intransitive, Transitive, Ditransitive, Clause, Copula };
struct Verb {
  const char* en_base;
  const char* en_3sg;
  const char* de_pl;
  const char* de_1sg;
  const char* de_2sg;
  const char* de_3sg;
  Valency valency;
  unsigned object = kAny;  // Fits: what the (accusative) object can be
};

// The English subject pronouns i, you, he, she, it, we, they with their German forms and the
// person/number they take the verb in.
enum class Person { First, Second, Third };
struct Pronoun {
  const char* en;
  const char* de;
  Person person;
  Number number;
};

struct Word {  // a pair of words with no inflection
  const char* en;
  const char* de;
};
struct Preposition {
  const char* en;
  const char* de;
  Case governs;  // the case of the German noun phrase after it
};

const std::vector<Noun>& nouns();
const std::vector<Adjective>& adjectives();
const std::vector<Verb>& verbs();
const std::vector<Pronoun>& pronouns();
const std::vector<Preposition>& prepositions();  // adjuncts of the translation task
const std::vector<Word>& adverbs();              // fronted: "today the dog sleeps" → "heute schläft der Hund"
const std::vector<Word>& conjunctions();         // subordinating: because → weil (German: verb last)

// Look-ups by English word (the singular, the adjective, the verb's base form, the pronoun, the
// adverb or conjunction); null when the lexicon has no such word.
const Noun* noun(const std::string& en);
const Adjective* adjective(const std::string& en);
const Verb* verb(const std::string& en);
const Pronoun* pronoun(const std::string& en);
const Preposition* preposition(const std::string& en);
const Word* adverb(const std::string& en);
const Word* conjunction(const std::string& en);

// German inflection.
// The article ("the", "a", "my") for gender, number and case: der/die/das/den/dem, ein/eine/einen/
// einem/einer, mein/meine/…; "a" has no plural (an empty string).
std::string de_article(const std::string& en_det, Gender g, Number n, Case c);
// The attributive adjective ending after that article: weak after "the" (der kleine Hund, den
// kleinen Hund), mixed after "a"/"my" (ein kleiner Hund, ein kleines Pferd).
std::string de_adjective(const Adjective& a, const std::string& en_det, Gender g, Number n, Case c);
// The noun's form: the plural, with the dative plural's -n (den Hunden; not after -n or -s).
std::string de_noun(const Noun& w, Number n, Case c);
// The German 3rd person pronoun for a noun: er/sie/es by grammatical gender, sie in the plural.
const char* de_pronoun(const Noun& w, Number n);
// English "a" or "an" before a word.
const char* en_indefinite(const std::string& next);

}  // namespace sf::lexicon
