#include "train/lexicon.h"

namespace sf::lexicon {

namespace {
constexpr Gender M = Gender::Masc, F = Gender::Fem, N = Gender::Neut;
constexpr Kind P = Kind::Person, A = Kind::Animal, T = Kind::Thing, L = Kind::Place;
}  // namespace

const std::vector<Noun>& nouns() {
  static const std::vector<Noun> v{
      // people
      {"man", "men", "Mann", "Männer", M, P, "he"},
      {"woman", "women", "Frau", "Frauen", F, P, "she"},
      {"child", "children", "Kind", "Kinder", N, P, ""},
      {"girl", "girls", "Mädchen", "Mädchen", N, P, "she"},
      {"teacher", "teachers", "Lehrer", "Lehrer", M, P, ""},
      {"doctor", "doctors", "Arzt", "Ärzte", M, P, ""},
      {"friend", "friends", "Freund", "Freunde", M, P, ""},
      {"king", "kings", "König", "Könige", M, P, "he"},
      {"queen", "queens", "Königin", "Königinnen", F, P, "she"},
      {"father", "fathers", "Vater", "Väter", M, P, "he"},
      {"mother", "mothers", "Mutter", "Mütter", F, P, "she"},
      {"brother", "brothers", "Bruder", "Brüder", M, P, "he"},
      {"sister", "sisters", "Schwester", "Schwestern", F, P, "she"},
      {"cook", "cooks", "Koch", "Köche", M, P, ""},
      // animals
      {"dog", "dogs", "Hund", "Hunde", M, A, "it"},
      {"cat", "cats", "Katze", "Katzen", F, A, "it"},
      {"horse", "horses", "Pferd", "Pferde", N, A, "it"},
      {"bird", "birds", "Vogel", "Vögel", M, A, "it"},
      {"mouse", "mice", "Maus", "Mäuse", F, A, "it"},
      {"cow", "cows", "Kuh", "Kühe", F, A, "it"},
      {"pig", "pigs", "Schwein", "Schweine", N, A, "it"},
      {"animal", "animals", "Tier", "Tiere", N, A, "it"},
      {"duck", "ducks", "Ente", "Enten", F, A, "it"},
      {"wolf", "wolves", "Wolf", "Wölfe", M, A, "it"},
      // things
      {"book", "books", "Buch", "Bücher", N, T, "it"},
      {"car", "cars", "Auto", "Autos", N, T, "it"},
      {"ball", "balls", "Ball", "Bälle", M, T, "it"},
      {"apple", "apples", "Apfel", "Äpfel", M, T, "it"},
      {"letter", "letters", "Brief", "Briefe", M, T, "it"},
      {"key", "keys", "Schlüssel", "Schlüssel", M, T, "it"},
      {"bag", "bags", "Tasche", "Taschen", F, T, "it"},
      {"cup", "cups", "Tasse", "Tassen", F, T, "it"},
      {"bottle", "bottles", "Flasche", "Flaschen", F, T, "it"},
      {"box", "boxes", "Kiste", "Kisten", F, T, "it"},
      {"table", "tables", "Tisch", "Tische", M, T, "it"},
      {"chair", "chairs", "Stuhl", "Stühle", M, T, "it"},
      {"door", "doors", "Tür", "Türen", F, T, "it"},
      {"window", "windows", "Fenster", "Fenster", N, T, "it"},
      {"bed", "beds", "Bett", "Betten", N, T, "it"},
      {"lamp", "lamps", "Lampe", "Lampen", F, T, "it"},
      {"picture", "pictures", "Bild", "Bilder", N, T, "it"},
      {"cake", "cakes", "Kuchen", "Kuchen", M, T, "it"},
      {"glass", "glasses", "Glas", "Gläser", N, T, "it"},
      {"hat", "hats", "Hut", "Hüte", M, T, "it"},
      {"flower", "flowers", "Blume", "Blumen", F, T, "it"},
      {"cabinet", "cabinets", "Schrank", "Schränke", M, T, "it"},
      // places
      {"street", "streets", "Straße", "Straßen", F, L, "it"},
      {"river", "rivers", "Fluss", "Flüsse", M, L, "it"},
      {"road", "roads", "Weg", "Wege", M, L, "it"},
      {"bridge", "bridges", "Brücke", "Brücken", F, L, "it"},
      {"garden", "gardens", "Garten", "Gärten", M, L, "it"},
      {"city", "cities", "Stadt", "Städte", F, L, "it"},
      {"park", "parks", "Park", "Parks", M, L, "it"},
      {"forest", "forests", "Wald", "Wälder", M, L, "it"},
      {"house", "houses", "Haus", "Häuser", N, L, "it"},
      {"field", "fields", "Feld", "Felder", N, L, "it"},
      {"square", "squares", "Platz", "Plätze", M, L, "it"},
  };
  return v;
}

const std::vector<Adjective>& adjectives() {
  static const std::vector<Adjective> v{
      {"small", "klein", kAny},    {"big", "groß", kAny},       {"old", "alt", kAny},
      {"young", "jung", kAlive},   {"new", "neu", kObject},     {"happy", "glücklich", kAlive},
      {"sad", "traurig", kAlive},  {"tired", "müde", kAlive},   {"hungry", "hungrig", kAlive},
      {"red", "rot", kObject},     {"green", "grün", kObject},  {"blue", "blau", kObject},
      {"black", "schwarz", kAny},  {"white", "weiß", kAny},     {"beautiful", "schön", kAny},
      {"fast", "schnell", kAny},   {"slow", "langsam", kAny},   {"loud", "laut", kAny},
      {"quiet", "leise", kAny},    {"good", "gut", kAny},       {"bad", "schlecht", kAny},
      {"cold", "kalt", kAny},      {"warm", "warm", kAny},      {"heavy", "schwer", kObject},
      {"long", "lang", kObject},   {"wide", "breit", kObject},  {"busy", "belebt", kObject},
      {"weak", "schwach", kAlive}, {"lazy", "faul", kAlive},    {"scared", "ängstlich", kAlive},
      {"full", "voll", kObject},   {"empty", "leer", kObject},  {"dirty", "schmutzig", kAny},
      {"clean", "sauber", kAny},   {"strong", "stark", kAlive}, {"hot", "heiß", kObject},
  };
  return v;
}

const std::vector<Verb>& verbs() {
  using V = Valency;
  static const std::vector<Verb> v{
      {"be", "is", "sind", "bin", "bist", "ist", V::Copula},
      // intransitive
      {"sleep", "sleeps", "schlafen", "schlafe", "schläfst", "schläft", V::Intransitive},
      {"run", "runs", "laufen", "laufe", "läufst", "läuft", V::Intransitive},
      {"sing", "sings", "singen", "singe", "singst", "singt", V::Intransitive},
      {"laugh", "laughs", "lachen", "lache", "lachst", "lacht", V::Intransitive},
      {"wait", "waits", "warten", "warte", "wartest", "wartet", V::Intransitive},
      {"work", "works", "arbeiten", "arbeite", "arbeitest", "arbeitet", V::Intransitive},
      {"swim", "swims", "schwimmen", "schwimme", "schwimmst", "schwimmt", V::Intransitive},
      {"dance", "dances", "tanzen", "tanze", "tanzt", "tanzt", V::Intransitive},
      {"play", "plays", "spielen", "spiele", "spielst", "spielt", V::Intransitive},
      {"cry", "cries", "weinen", "weine", "weinst", "weint", V::Intransitive},
      {"walk", "walks", "gehen", "gehe", "gehst", "geht", V::Intransitive},
      // transitive
      {"see", "sees", "sehen", "sehe", "siehst", "sieht", V::Transitive, kAny},
      {"find", "finds", "finden", "finde", "findest", "findet", V::Transitive, kAny},
      {"buy", "buys", "kaufen", "kaufe", "kaufst", "kauft", V::Transitive, kObject},
      {"read", "reads", "lesen", "lese", "liest", "liest", V::Transitive, kThing},
      {"carry", "carries", "tragen", "trage", "trägst", "trägt", V::Transitive, kAlive | kObject},
      {"hold", "holds", "halten", "halte", "hältst", "hält", V::Transitive, kAlive | kObject},
      {"open", "opens", "öffnen", "öffne", "öffnest", "öffnet", V::Transitive, kThing},
      {"need", "needs", "brauchen", "brauche", "brauchst", "braucht", V::Transitive, kAny},
      {"know", "knows", "kennen", "kenne", "kennst", "kennt", V::Transitive, kAlive | kPlace},
      {"love", "loves", "lieben", "liebe", "liebst", "liebt", V::Transitive, kAny},
      {"visit", "visits", "besuchen", "besuche", "besuchst", "besucht", V::Transitive, kAlive | kPlace},
      {"paint", "paints", "malen", "male", "malst", "malt", V::Transitive, kAny},
      {"wash", "washes", "waschen", "wasche", "wäschst", "wäscht", V::Transitive, kAny},
      {"eat", "eats", "essen", "esse", "isst", "isst", V::Transitive, kThing},
      {"take", "takes", "nehmen", "nehme", "nimmst", "nimmt", V::Transitive, kAlive | kObject},
      {"like", "likes", "mögen", "mag", "magst", "mag", V::Transitive, kAny},
      {"hear", "hears", "hören", "höre", "hörst", "hört", V::Transitive, kAlive},
      {"cross", "crosses", "überqueren", "überquere", "überquerst", "überquert", V::Transitive, kPlace},
      // ditransitive: English "gives the dog a ball", German dative then accusative
      {"give", "gives", "geben", "gebe", "gibst", "gibt", V::Ditransitive},
      {"show", "shows", "zeigen", "zeige", "zeigst", "zeigt", V::Ditransitive},
      {"bring", "brings", "bringen", "bringe", "bringst", "bringt", V::Ditransitive},
      {"send", "sends", "schicken", "schicke", "schickst", "schickt", V::Ditransitive},
      // with a "that" clause
      {"say", "says", "sagen", "sage", "sagst", "sagt", V::Clause},
      {"think", "thinks", "denken", "denke", "denkst", "denkt", V::Clause},
      {"believe", "believes", "glauben", "glaube", "glaubst", "glaubt", V::Clause},
  };
  return v;
}

const std::vector<Pronoun>& pronouns() {
  static const std::vector<Pronoun> v{
      {"i", "ich", Person::First, Number::Sg},    {"you", "du", Person::Second, Number::Sg},
      {"he", "er", Person::Third, Number::Sg},    {"she", "sie", Person::Third, Number::Sg},
      {"it", "es", Person::Third, Number::Sg},    {"we", "wir", Person::First, Number::Pl},
      {"they", "sie", Person::Third, Number::Pl},
  };
  return v;
}

const std::vector<Preposition>& prepositions() {
  static const std::vector<Preposition> v{
      {"with", "mit", Case::Dat},      {"without", "ohne", Case::Acc}, {"for", "für", Case::Acc},
      {"behind", "hinter", Case::Dat}, {"under", "unter", Case::Dat},
  };
  return v;
}

const std::vector<Word>& adverbs() {
  static const std::vector<Word> v{
      {"today", "heute"}, {"tomorrow", "morgen"}, {"now", "jetzt"}, {"sometimes", "manchmal"}};
  return v;
}

const std::vector<Word>& conjunctions() {
  static const std::vector<Word> v{{"because", "weil"}, {"although", "obwohl"}, {"when", "wenn"}};
  return v;
}

namespace {
template <class T>
const T* find_en(const std::vector<T>& v, const std::string& en) {
  for (const T& x : v)
    if (en == x.en) return &x;
  return nullptr;
}
}  // namespace

const Noun* noun(const std::string& en) {
  for (const Noun& n : nouns())
    if (en == n.en_sg) return &n;
  return nullptr;
}
const Verb* verb(const std::string& en) {
  for (const Verb& v : verbs())
    if (en == v.en_base) return &v;
  return nullptr;
}
const Adjective* adjective(const std::string& en) { return find_en(adjectives(), en); }
const Pronoun* pronoun(const std::string& en) { return find_en(pronouns(), en); }
const Preposition* preposition(const std::string& en) { return find_en(prepositions(), en); }
const Word* adverb(const std::string& en) { return find_en(adverbs(), en); }
const Word* conjunction(const std::string& en) { return find_en(conjunctions(), en); }

std::string de_article(const std::string& det, Gender g, Number n, Case c) {
  const int ci = static_cast<int>(c);
  if (det == "the") {
    //                               nom    acc    dat
    static const char* const m[] = {"der", "den", "dem"};
    static const char* const f[] = {"die", "die", "der"};
    static const char* const nt[] = {"das", "das", "dem"};
    static const char* const pl[] = {"die", "die", "den"};
    if (n == Number::Pl) return pl[ci];
    return g == Gender::Masc ? m[ci] : g == Gender::Fem ? f[ci] : nt[ci];
  }
  // ein/mein: the same endings on their stems.
  const std::string stem = det == "my" ? "mein" : "ein";
  if (n == Number::Pl) return det == "my" ? (c == Case::Dat ? "meinen" : "meine") : "";
  static const char* const m[] = {"", "en", "em"};
  static const char* const f[] = {"e", "e", "er"};
  static const char* const nt[] = {"", "", "em"};
  return stem + (g == Gender::Masc ? m[ci] : g == Gender::Fem ? f[ci] : nt[ci]);
}

std::string de_adjective(const Adjective& a, const std::string& det, Gender g, Number n, Case c) {
  std::string ending;
  if (n == Number::Pl || c == Case::Dat) {
    ending = "en";
  } else if (det == "the") {  // weak: -e, but masculine accusative -en
    ending = g == Gender::Masc && c == Case::Acc ? "en" : "e";
  } else {  // mixed (ein, mein): the article shows no gender in nom masc / nom-acc neuter, the adjective does
    if (g == Gender::Fem)
      ending = "e";
    else if (g == Gender::Neut)
      ending = "es";
    else
      ending = c == Case::Nom ? "er" : "en";
  }
  std::string stem = a.de;
  // müde + e → müde, müde + en → müden
  if (!stem.empty() && stem.back() == 'e') ending.erase(0, 1);
  return stem + ending;
}

std::string de_noun(const Noun& w, Number n, Case c) {
  if (n == Number::Sg) return w.de_sg;
  std::string pl = w.de_pl;
  if (c == Case::Dat && pl.back() != 'n' && pl.back() != 's') pl += "n";
  return pl;
}

const char* de_pronoun(const Noun& w, Number n) {
  if (n == Number::Pl) return "sie";
  return w.gender == Gender::Masc ? "er" : w.gender == Gender::Fem ? "sie" : "es";
}

const char* en_indefinite(const std::string& next) {
  const char c = next.empty() ? 'x' : next[0];
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ? "an" : "a";
}

}  // namespace sf::lexicon
