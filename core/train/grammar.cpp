#include "train/grammar.h"

#include <set>

#include "train/lexicon.h"

namespace sf::grammar {

using namespace lexicon;

namespace {

using Words = std::vector<std::string>;

template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(rng.below(v.size()))];
}
bool chance(Rng& rng, double p) { return rng.uniform_double() < p; }

void append(Words& out, const Words& w) { out.insert(out.end(), w.begin(), w.end()); }

std::vector<const Noun*> nouns_of(std::initializer_list<Kind> kinds) {
  std::vector<const Noun*> v;
  for (const Noun& n : nouns())
    for (Kind k : kinds)
      if (n.kind == k) v.push_back(&n);
  return v;
}
std::vector<const Verb*> verbs_of(Valency val) {
  std::vector<const Verb*> v;
  for (const Verb& x : verbs())
    if (x.valency == val) v.push_back(&x);
  return v;
}
const Verb& copula() { return verbs().front(); }

// ---- noun phrases -------------------------------------------------------------------------------

std::vector<const Noun*> nouns_fitting(unsigned set) {
  std::vector<const Noun*> v;
  for (const Noun& n : nouns())
    if (fits(set, n.kind)) v.push_back(&n);
  return v;
}
std::vector<const Adjective*> adjectives_for(Kind k) {
  std::vector<const Adjective*> v;
  for (const Adjective& a : adjectives())
    if (fits(a.suits, k)) v.push_back(&a);
  return v;
}
// What a pronoun subject can be: "it" and "they" anything, the others people.
Kind kind_of(const Subject& s) {
  if (!s.pronoun) return s.np.noun->kind;
  const std::string en = s.pronoun->en;
  return en == "it" || en == "they" ? Kind::Thing : Kind::Person;
}

NounPhrase noun_phrase(Rng& rng, const std::vector<const Noun*>& from, double p_adj = 0.35) {
  NounPhrase np;
  np.noun = pick(rng, from);
  const double d = rng.uniform_double();
  np.det = d < 0.55 ? "the" : d < 0.8 ? "a" : "my";
  np.number = np.det != "a" && chance(rng, 0.35) ? Number::Pl : Number::Sg;
  if (chance(rng, p_adj)) np.adj = pick(rng, adjectives_for(np.noun->kind));
  return np;
}

Words english(const NounPhrase& np) {
  const std::string noun = np.number == Number::Sg ? np.noun->en_sg : np.noun->en_pl;
  const std::string first = np.adj ? np.adj->en : noun;
  Words w{np.det == "a" ? en_indefinite(first) : np.det};
  if (np.adj) w.push_back(np.adj->en);
  w.push_back(noun);
  return w;
}

Words german(const NounPhrase& np, Case c) {
  Words w{de_article(np.det, np.noun->gender, np.number, c)};
  if (np.adj) w.push_back(de_adjective(*np.adj, np.det, np.noun->gender, np.number, c));
  w.push_back(de_noun(*np.noun, np.number, c));
  return w;
}

// ---- clauses ------------------------------------------------------------------------------------

std::string english_verb(const Verb& v, Person p, Number n) {
  if (&v == &copula()) {
    if (n == Number::Pl || p == Person::Second) return "are";
    return p == Person::First ? "am" : "is";
  }
  return n == Number::Sg && p == Person::Third ? v.en_3sg : v.en_base;
}

std::string german_verb(const Verb& v, Person p, Number n) {
  if (n == Number::Pl) return v.de_pl;
  return p == Person::First ? v.de_1sg : p == Person::Second ? v.de_2sg : v.de_3sg;
}

Subject subject(Rng& rng, double p_pronoun) {
  Subject s;
  if (chance(rng, p_pronoun))
    s.pronoun = &pick(rng, pronouns());
  else
    s.np = noun_phrase(rng, nouns_of({Kind::Person, Kind::Animal}));
  return s;
}

Clause clause(Rng& rng, Subject subj, bool allow_clause_verb) {
  Clause c;
  c.subject = std::move(subj);
  const double r = rng.uniform_double();
  const Valency val = r < 0.22                         ? Valency::Copula
                      : r < 0.45                       ? Valency::Intransitive
                      : r < 0.8                        ? Valency::Transitive
                      : r < 0.92 || !allow_clause_verb ? Valency::Ditransitive
                                                       : Valency::Clause;
  c.verb = pick(rng, verbs_of(val));
  const auto any_noun = nouns_of({Kind::Person, Kind::Animal, Kind::Thing, Kind::Place});
  if (val == Valency::Copula) c.predicate = pick(rng, adjectives_for(kind_of(c.subject)));
  if (val == Valency::Transitive) c.object1 = noun_phrase(rng, nouns_fitting(c.verb->object));
  if (val == Valency::Ditransitive) {
    c.object1 = noun_phrase(rng, nouns_of({Kind::Person, Kind::Animal}), 0.2);
    c.object2 = noun_phrase(rng, nouns_of({Kind::Thing}), 0.2);
  }
  if ((val == Valency::Intransitive || val == Valency::Transitive) && chance(rng, 0.3)) {
    c.prep = &pick(rng, prepositions());
    c.prep_object = noun_phrase(rng, any_noun, 0.2);
  }
  return c;
}

Words english(const Clause& c) {
  Words w;
  if (c.subject.pronoun)
    w.push_back(c.subject.pronoun->en);
  else
    append(w, english(c.subject.np));
  w.push_back(english_verb(*c.verb, c.subject.person(), c.subject.number()));
  if (c.predicate) w.push_back(c.predicate->en);
  if (c.object1.noun) append(w, english(c.object1));
  if (c.object2.noun) append(w, english(c.object2));
  if (c.prep) {
    w.push_back(c.prep->en);
    append(w, english(c.prep_object));
  }
  return w;
}

// A subordinate clause's pronoun that matches the main subject's English pronoun refers to it:
// German then takes the main subject's grammatical gender (the dog … it → er; the girl … she → es).
const char* german_pronoun(const Subject& main, const Subject& sub) {
  if (main.pronoun || sub.pronoun->person != Person::Third) return sub.pronoun->de;
  const std::string main_en = main.np.number == Number::Pl ? "they" : main.np.noun->en_pronoun;
  return main_en == sub.pronoun->en ? de_pronoun(*main.np.noun, main.np.number) : sub.pronoun->de;
}

// The German clause in three parts: subject, finite verb, the rest (predicate, objects, adjunct);
// main clauses put the verb second, subordinate clauses last.
struct GermanClause {
  Words subject, verb, rest;
};

// `main`: the main clause's subject when c is a subordinate clause (its pronouns may refer to it).
GermanClause german(const Clause& c, const Subject* main) {
  GermanClause g;
  if (c.subject.pronoun)
    g.subject.push_back(main ? german_pronoun(*main, c.subject) : c.subject.pronoun->de);
  else
    g.subject = german(c.subject.np, Case::Nom);
  g.verb.push_back(german_verb(*c.verb, c.subject.person(), c.subject.number()));
  if (c.predicate) g.rest.push_back(c.predicate->de);
  if (c.object1.noun)
    append(g.rest, german(c.object1, c.verb->valency == Valency::Ditransitive ? Case::Dat : Case::Acc));
  if (c.object2.noun) append(g.rest, german(c.object2, Case::Acc));
  if (c.prep) {
    g.rest.push_back(c.prep->de);
    append(g.rest, german(c.prep_object, c.prep->governs));
  }
  return g;
}

Sentence random_sentence(Rng& rng) {
  Sentence s;
  const bool with_sub = rng.uniform_double() < 0.45;
  s.main = clause(rng, subject(rng, 0.25), !with_sub);
  const bool says = s.main.verb->valency == Valency::Clause;
  if (!says && chance(rng, with_sub ? 0.15 : 0.35)) s.adverb = &pick(rng, adverbs());
  if (!with_sub && !says) return s;
  Subject sub;
  const Subject& main = s.main.subject;
  if (!main.pronoun && chance(rng, 0.3)) {
    // A pronoun for the main subject (the dog … because it …).
    const std::string en = main.np.number == Number::Pl ? "they" : main.np.noun->en_pronoun;
    for (const Pronoun& p : pronouns())
      if (en == p.en) sub.pronoun = &p;
    if (!sub.pronoun) sub = subject(rng, 0.3);
  } else {
    sub = subject(rng, 0.3);
  }
  s.sub = clause(rng, sub, false);
  s.conjunction = says ? nullptr : &pick(rng, conjunctions());
  s.has_sub = true;
  return s;
}

// ---- the language model's sentences ---------------------------------------------------------------

// The adjectives that suit what a pronoun refers to.
std::vector<std::string> referent_adjectives(Kind k) {
  if (k == Kind::Person || k == Kind::Animal) return {"tired", "weak", "lazy", "scared"};
  if (k == Kind::Place) return {"wide", "long", "busy"};
  return {"heavy", "big", "full"};
}

// Every finite verb form of the agreement sentences with the number n (is/was, sleeps, … or
// are/were, sleep, …).
std::vector<std::string> finite_forms(Number n) {
  std::vector<std::string> v = n == Number::Sg ? Words{"is", "was"} : Words{"are", "were"};
  for (const Verb& x : verbs())
    if (x.valency == Valency::Intransitive || x.valency == Valency::Transitive)
      v.push_back(n == Number::Sg ? x.en_3sg : x.en_base);
  return v;
}

const std::vector<std::string>& distractor_prepositions() {
  static const Words v{"to", "near", "on", "behind", "with", "from", "under"};
  return v;
}

NounPhrase lm_noun_phrase(Rng& rng, const std::vector<const Noun*>& from, Number n, double p_adj) {
  NounPhrase np;
  np.noun = pick(rng, from);
  np.number = n;
  np.det = n == Number::Pl ? (chance(rng, 0.8) ? "the" : "my") : (chance(rng, 0.7) ? "the" : "my");
  if (chance(rng, p_adj)) np.adj = pick(rng, adjectives_for(np.noun->kind));
  return np;
}

Number random_number(Rng& rng) { return chance(rng, 0.5) ? Number::Pl : Number::Sg; }
Number other(Number n) { return n == Number::Sg ? Number::Pl : Number::Sg; }

// "the keys to the cabinet are old": the main verb is a probe.
Example agreement_sentence(Rng& rng) {
  Example e;
  const auto animate = nouns_of({Kind::Person, Kind::Animal});
  const auto any_noun = nouns_of({Kind::Person, Kind::Animal, Kind::Thing, Kind::Place});
  const double d = rng.uniform_double();
  const bool subject_relative = d >= 0.75, object_relative = d >= 0.5 && d < 0.75;
  const Number n = random_number(rng);
  // A subject relative clause ("that sees …") needs someone who sees.
  const NounPhrase head = lm_noun_phrase(rng, subject_relative ? animate : any_noun, n, 0.3);
  append(e.tgt, english(head));
  // The distractor's noun has the other number most of the time: that is the hard case.
  const Number dn = chance(rng, 0.75) ? other(n) : n;
  if (subject_relative) {  // the dog that sees the cats is …
    e.tgt.push_back("that");
    const Verb& v = *pick(rng, verbs_of(Valency::Transitive));
    e.tgt.push_back(english_verb(v, Person::Third, n));
    append(e.tgt, english(lm_noun_phrase(rng, nouns_fitting(v.object), dn, 0.0)));
  } else if (object_relative) {  // the books that the woman reads are …
    e.tgt.push_back("that");
    append(e.tgt, english(lm_noun_phrase(rng, animate, dn, 0.0)));
    std::vector<const Verb*> suiting;  // verbs that take the head as their object
    for (const Verb* v : verbs_of(Valency::Transitive))
      if (fits(v->object, head.noun->kind)) suiting.push_back(v);
    e.tgt.push_back(english_verb(*pick(rng, suiting), Person::Third, dn));
  } else {  // the keys to the cabinet are …
    e.tgt.push_back(pick(rng, distractor_prepositions()));
    append(e.tgt, english(lm_noun_phrase(rng, any_noun, dn, 0.0)));
  }
  e.probes.push_back({static_cast<int>(e.tgt.size()), kAgreement, finite_forms(n)});
  const bool alive = head.noun->kind == Kind::Person || head.noun->kind == Kind::Animal;
  const double r = rng.uniform_double();
  if (!alive || r < 0.4) {  // things only are: "the keys … are old"
    const bool past = chance(rng, 0.4);
    e.tgt.push_back(n == Number::Sg ? (past ? "was" : "is") : (past ? "were" : "are"));
    e.tgt.push_back(pick(rng, adjectives_for(head.noun->kind))->en);
  } else if (r < 0.7) {
    e.tgt.push_back(english_verb(*pick(rng, verbs_of(Valency::Intransitive)), Person::Third, n));
  } else {
    const Verb& v = *pick(rng, verbs_of(Valency::Transitive));
    e.tgt.push_back(english_verb(v, Person::Third, n));
    append(e.tgt, english(lm_noun_phrase(rng, nouns_fitting(v.object), random_number(rng), 0.0)));
  }
  return e;
}

std::string en_pronoun(const NounPhrase& np) { return np.number == Number::Pl ? "they" : np.noun->en_pronoun; }

// "the animal didn't cross the street because it was too tired": the adjective is a probe.
Example pronoun_sentence(Rng& rng) {
  Example e;
  std::vector<const Noun*> who;  // people and animals English has a pronoun for
  for (const Noun* n : nouns_of({Kind::Person, Kind::Animal}))
    if (*n->en_pronoun) who.push_back(n);
  const bool cross = chance(rng, 0.5);
  const NounPhrase a = lm_noun_phrase(rng, who, random_number(rng), 0.0);
  NounPhrase b;
  // The object's pronoun differs from the subject's, so the pronoun names exactly one of them.
  do {
    b = lm_noun_phrase(rng, nouns_of({cross ? Kind::Place : Kind::Thing}), random_number(rng), 0.0);
  } while (en_pronoun(b) == en_pronoun(a));
  const bool past = chance(rng, 0.5);
  append(e.tgt, english(a));
  e.tgt.push_back(past ? "didn't" : a.number == Number::Sg ? "doesn't" : "don't");
  e.tgt.push_back(cross ? "cross" : "carry");
  append(e.tgt, english(b));
  const NounPhrase& ref = chance(rng, 0.5) ? a : b;
  e.tgt.push_back("because");
  e.tgt.push_back(en_pronoun(ref));
  const bool sg = ref.number == Number::Sg;
  e.tgt.push_back(past ? (sg ? "was" : "were") : (sg ? "is" : "are"));
  e.tgt.push_back("too");
  const auto fitting = referent_adjectives(ref.noun->kind);
  e.probes.push_back({static_cast<int>(e.tgt.size()), kPronoun, fitting});
  e.tgt.push_back(pick(rng, fitting));
  return e;
}

void insert_all(std::set<std::string>& s, std::initializer_list<std::string> words) { s.insert(words); }
void insert_all(std::set<std::string>& s, const std::vector<std::string>& words) {
  s.insert(words.begin(), words.end());
}

// English noun phrases, pronouns and verb forms: what both English vocabularies share.
std::set<std::string> english_core() {
  std::set<std::string> s{"the", "a", "an", "my"};
  for (const Noun& n : nouns()) insert_all(s, {n.en_sg, n.en_pl});
  for (const Adjective& a : adjectives()) s.insert(a.en);
  for (const Verb& v : verbs())
    if (v.valency != Valency::Copula) insert_all(s, {v.en_base, v.en_3sg});
  return s;
}

}  // namespace

Example realise(const Sentence& s) {
  Example e;
  const GermanClause gm = german(s.main, nullptr);
  if (s.adverb) {
    e.src.push_back(s.adverb->en);
    e.tgt.push_back(s.adverb->de);
    append(e.tgt, gm.verb);  // verb second: the adverb takes the first place
    append(e.tgt, gm.subject);
  } else {
    append(e.tgt, gm.subject);
    append(e.tgt, gm.verb);
  }
  append(e.src, english(s.main));
  append(e.tgt, gm.rest);
  if (s.has_sub) {
    const Word conj = s.conjunction ? *s.conjunction : Word{"that", "dass"};
    e.src.push_back(conj.en);
    append(e.src, english(s.sub));
    const GermanClause gs = german(s.sub, &s.main.subject);
    e.tgt.push_back(",");
    e.tgt.push_back(conj.de);
    append(e.tgt, gs.subject);
    append(e.tgt, gs.rest);
    append(e.tgt, gs.verb);  // verb last
  }
  return e;
}

Example translation(Rng& rng) {
  for (;;) {
    Example e = realise(random_sentence(rng));
    if (static_cast<int>(e.src.size()) <= kMaxEnglish) return e;
  }
}

Example lm_sentence(Rng& rng) {
  for (;;) {
    Example e = chance(rng, 0.6) ? agreement_sentence(rng) : pronoun_sentence(rng);
    if (static_cast<int>(e.tgt.size()) <= kMaxLmWords) return e;
  }
}

std::vector<std::string> english_words() {
  std::set<std::string> s = english_core();
  insert_all(s, {"am", "are", "is", "that"});
  for (const Pronoun& p : pronouns()) s.insert(p.en);
  for (const Preposition& p : prepositions()) s.insert(p.en);
  for (const Word& w : adverbs()) s.insert(w.en);
  for (const Word& w : conjunctions()) s.insert(w.en);
  return {s.begin(), s.end()};
}

std::vector<std::string> german_words() {
  std::set<std::string> s{",", "dass"};
  const Gender genders[] = {Gender::Masc, Gender::Fem, Gender::Neut};
  const Case cases[] = {Case::Nom, Case::Acc, Case::Dat};
  for (const char* det : {"the", "a", "my"})
    for (Gender g : genders)
      for (Number n : {Number::Sg, Number::Pl})
        for (Case c : cases) {
          if (std::string(det) == "a" && n == Number::Pl) continue;
          s.insert(de_article(det, g, n, c));
          for (const Adjective& a : adjectives()) s.insert(de_adjective(a, det, g, n, c));
        }
  for (const Adjective& a : adjectives()) s.insert(a.de);
  for (const Noun& w : nouns())
    for (Number n : {Number::Sg, Number::Pl})
      for (Case c : cases) s.insert(de_noun(w, n, c));
  for (const Verb& v : verbs()) insert_all(s, {v.de_pl, v.de_1sg, v.de_2sg, v.de_3sg});
  for (const Pronoun& p : pronouns()) s.insert(p.de);
  for (const Preposition& p : prepositions()) s.insert(p.de);
  for (const Word& w : adverbs()) s.insert(w.de);
  for (const Word& w : conjunctions()) s.insert(w.de);
  return {s.begin(), s.end()};
}

std::vector<std::string> lm_words() {
  std::set<std::string> s = english_core();
  insert_all(s, {"is", "are", "was", "were", "that", "didn't", "doesn't", "don't", "because", "too"});
  insert_all(s, {"he", "she", "it", "they"});
  insert_all(s, distractor_prepositions());
  return {s.begin(), s.end()};
}

}  // namespace sf::grammar
