// What the synthetic corpus's document writers share: a Writer (the expander, the cast of a document and
// its pronouns, IOI sentences), and the entry points of the two styles, one document each:
// corpus_main_style.cpp (the training distribution) and corpus_alt_style.cpp (the differently
// distributed eval set). Internal to core/data; the public API is synthetic_corpus.h.
//
// Portability: every random draw goes through nf::Random in a fixed order. Never put two draws in one
// expression (the order in which C++ evaluates operands is unspecified): one draw per statement.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/corpus_grammar.h"
#include "data/corpus_rules.h"

namespace nf::corpus {

struct Person {
  std::string name;
  bool female = false;
};

// One document being written: its expander, its cast (the people bound to P, Q, R and N, drawn from the
// style's names) and the IOI sentences of the main style.
class Writer {
 public:
  Writer(const Grammar& grammar, Random& random, bool main)
      : ex(grammar, random),
        r(random),
        m_female(main ? mainFemaleNames() : altFemaleNames()),
        m_male(main ? mainMaleNames() : altMaleNames()) {
    if (main) m_frames.emplace(ex, "ioi");
  }

  Expander ex;
  Random& r;

  Person person() {
    Person p;
    p.female = r.chance(0.5);
    p.name = r.pick(p.female ? m_female : m_male);
    return p;
  }
  // n people with distinct names.
  std::vector<Person> people(int n) {
    std::vector<Person> cast;
    while (static_cast<int>(cast.size()) < n) {
      Person p = person();
      bool taken = false;
      for (const Person& q : cast) taken = taken || q.name == p.name;
      if (!taken) cast.push_back(p);
    }
    return cast;
  }
  // Binds a person to the variables of slot P, Q or R ("{P}", "{P.he}", "{P.his}", ...).
  void bind(int slot, const Person& p) {
    ex.vars[slot] = p.name;
    ex.vars[slot + 1] = p.female ? "she" : "he";
    ex.vars[slot + 2] = p.female ? "her" : "him";
    ex.vars[slot + 3] = p.female ? "her" : "his";
    ex.vars[slot + 4] = p.female ? "herself" : "himself";
    ex.vars[slot + 5] = ex.make(p.female ? "rel_f" : "rel_m");
  }
  // P, Q, R and N, four different people.
  void newCast() {
    const std::vector<Person> cast = people(4);
    bind(kP, cast[0]);
    bind(kQ, cast[1]);
    bind(kR, cast[2]);
    ex.vars[kN] = cast[3].name;
  }
  void swapPQ() {
    for (int i = 0; i < 6; ++i) std::swap(ex.vars[kP + i], ex.vars[kQ + i]);
  }

  // An IOI sentence: one of the frames, completed with the indirect object.
  void ioi(bool fromCast) {
    std::string a = ex.vars[kP], b = ex.vars[kQ];
    if (!fromCast || a.empty()) {
      const std::vector<Person> two = people(2);
      a = two[0].name;
      b = two[1].name;
    }
    if (r.chance(0.5)) std::swap(a, b);
    const bool abba = r.chance(0.5);  // ABBA: the subject is the second name mentioned; BABA: the first
    ex.vars[kA] = a;
    ex.vars[kB] = b;
    ex.vars[kS] = abba ? b : a;
    ex.vars[kIO] = abba ? a : b;
    ex.vars[kPLACE] = ex.make("place");
    ex.vars[kOBJECT] = ex.make("object");
    m_frames->sentence();  // a deck, so that a document rarely uses a frame twice
    if (r.chance(0.3)) ex.sentence("ioi_follow");
  }
  // A narrative sentence from the deck, or (with probability p) an IOI sentence.
  void narrate(Deck& deck, double pIoi) {
    if (r.chance(pIoi))
      ioi(r.chance(0.6));
    else
      deck.sentence();
  }

 private:
  const std::vector<std::string>& m_female;
  const std::vector<std::string>& m_male;
  std::optional<Deck> m_frames;  // the IOI frames (main style only)
};

// Days for week plans (main) and forecasts (alternative).
inline constexpr const char* kWeekdays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                            "Friday", "Saturday", "Sunday"};

// One document of each style, polished (capitals, "a"/"an"), without an end-of-text marker.
std::string mainDocument(Random& random);
std::string altDocument(Random& random);

}  // namespace nf::corpus
