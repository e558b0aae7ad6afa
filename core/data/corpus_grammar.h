// The synthetic corpus's grammar engine: rules compiled from text tables, their expansion into a
// document with random choices, and the helpers the document writers use on top of it (a deck of
// alternatives drawn without replacement, random integers in a range, the final polish). No word lists
// or templates here: those are in corpus_rules.cpp; the documents are written in corpus_main_style.cpp
// and corpus_alt_style.cpp. Internal to core/data; the public API is synthetic_corpus.h.
//
// How it works. Text comes from a small grammar: named rules, each a list of alternatives; an alternative
// is text with slots in braces that name another rule ("{animal}"), a variable set by the document code
// ("{P}", "{P.he}"), or a random integer ("{int:2-9}"). Word rules know their forms: a noun entry is
// "mouse|mice", a verb entry "eat|ate|eaten" (base|past|participle|-ing, missing ones derived), and a
// slot picks a form with a suffix: "{animal.pl}", "{vp.past}", "{vp.pp}", "{vp.ing}", "{vp.s}". After a
// document is expanded, one pass capitalises sentence starts and turns "a" into "an" before vowels, so
// templates need not care. Document code (corpus_main_style.cpp, corpus_alt_style.cpp) picks the cast and
// the genre and asks for sentences by rule name.
//
// Portability: every random draw goes through nf::Random in a fixed order. Never put two draws in one
// expression (the order in which C++ evaluates operands is unspecified): one draw per statement.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/random.h"

namespace nf::corpus {

// Word rules split their entries on commas and newlines; text rules have one alternative per line.
enum class Kind { Text, Words, Noun, Verb };

struct RuleDef {
  const char* name;
  Kind kind;
  std::string body;
};

// Slot suffix -> form index. Nouns have forms {singular, plural}; verbs {base, past, participle, -ing, -s}.
constexpr int kPlural = 1, kPast = 1, kParticiple = 2, kGerund = 3, kThird = 4;

// Variables the document code sets; templates read them as "{P}", "{P.he}", ...
// A, B, S, IO, PLACE, OBJECT fill the IOI frames; P, Q, R are the cast of a document and N a fourth
// name that verb phrases mention; T..Z are scratch variables a template can bind with "{T=rule}" and
// repeat with "{T}".
inline constexpr std::array<std::string_view, 33> kVarNames = {
    "A",      "B",     "S",    "IO",    "PLACE", "OBJECT", "P",     "P.he", "P.him", "P.his",   "P.self",
    "P.rel",  "Q",     "Q.he", "Q.him", "Q.his", "Q.self", "Q.rel", "R",    "R.he",  "R.him",   "R.his",
    "R.self", "R.rel", "CITY", "LINE",  "T",     "W",      "X",     "Y",    "Z",     "SURNAME", "N"};
enum Var {
  kA,
  kB,
  kS,
  kIO,
  kPLACE,
  kOBJECT,
  kP,
  kQ = kP + 6,
  kR = kQ + 6,
  kCITY = kR + 6,
  kLINE,
  kT,
  kW,
  kX,
  kY,
  kZ,
  kSURNAME,
  kN
};
inline constexpr int kVarCount = static_cast<int>(kVarNames.size());
static_assert(kN + 1 == kVarCount, "kVarNames and Var must list the same variables");

struct Piece {
  enum Type : uint8_t { Literal, Rule, Variable, Integer, Bind } type = Literal;
  int form = -1;  // explicit form; -1: inherit the caller's
  int rule = 0;
  int var = 0;
  int lo = 0, hi = 0, width = 0;  // Integer: the range and the zero-padded width
  std::string text;
};

struct Alternative {
  std::vector<Piece> before;       // text before the inflected word
  std::vector<std::string> forms;  // the inflected word's forms (empty: nothing inflects)
  std::vector<Piece> after;
};

struct Rule {
  std::string name;
  Kind kind = Kind::Text;
  std::vector<Alternative> alternatives;
};

// Compiled rules, looked up by name or by id.
class Grammar {
 public:
  // Compiles the tables' rules; a rule may refer to rules defined later or in another table.
  explicit Grammar(const std::vector<std::vector<RuleDef>>& tables);

  int id(std::string_view name) const;
  const Rule& rule(int id) const { return m_rules[id]; }

 private:
  void compileRule(Rule& rule, const std::string& body);
  Alternative compileAlternative(const Rule& rule, const std::string& text);
  // Literal text and slots; unsuffixed slots get defaultForm (-1: inherit the caller's form).
  std::vector<Piece> compilePieces(const std::string& text, int defaultForm);
  Piece compileSlot(const std::string& slot, int defaultForm);
  static int variableIndex(std::string_view name);

  std::vector<Rule> m_rules;
  std::unordered_map<std::string, int> m_index;
};

// Expands rules into a document; holds the variables the templates read.
class Expander {
 public:
  Expander(const Grammar& grammar, Random& random) : m_grammar(grammar), m_random(random) {}

  std::array<std::string, kVarCount> vars;
  std::string text;  // the document so far

  void expand(int rule, int form = 0) {
    const Rule& r = m_grammar.rule(rule);
    const Alternative& alt = r.alternatives[m_random.below(r.alternatives.size())];
    expandPieces(alt.before, form);
    if (!alt.forms.empty()) text += alt.forms[static_cast<size_t>(form) < alt.forms.size() ? form : 0];
    expandPieces(alt.after, form);
  }
  void expand(std::string_view rule) { expand(m_grammar.id(rule)); }
  void expandAlternative(int rule, int alternative) {
    const Alternative& alt = m_grammar.rule(rule).alternatives[alternative];
    expandPieces(alt.before, 0);
    if (!alt.forms.empty()) text += alt.forms[0];
    expandPieces(alt.after, 0);
  }

  // The expansion of a rule as a string of its own (the document is left as it was).
  std::string make(std::string_view rule, int form = 0) {
    const size_t start = text.size();
    expand(m_grammar.id(rule), form);
    std::string made = text.substr(start);
    text.resize(start);
    return made;
  }

  // A sentence (or any text) continuing the current paragraph.
  void sentence(std::string_view rule) {
    space();
    expand(rule);
  }
  void say(std::string_view literal) {
    space();
    text += literal;
  }
  void space() {
    if (!text.empty() && text.back() != '\n' && text.back() != ' ') text += ' ';
  }
  void paragraph() {
    if (!text.empty()) text += "\n\n";
  }

  Random& random() { return m_random; }
  const Grammar& grammar() const { return m_grammar; }

 private:
  void expandPieces(const std::vector<Piece>& pieces, int form) {
    for (const Piece& p : pieces) {
      switch (p.type) {
        case Piece::Literal:
          text += p.text;
          break;
        case Piece::Rule:
          expand(p.rule, p.form >= 0 ? p.form : form);
          break;
        case Piece::Variable:
          text += vars[p.var];
          break;
        case Piece::Integer: {
          const std::string digits =
              std::to_string(p.lo + static_cast<int>(m_random.below(static_cast<uint64_t>(p.hi - p.lo + 1))));
          if (static_cast<int>(digits.size()) < p.width) text.append(p.width - digits.size(), '0');
          text += digits;
          break;
        }
        case Piece::Bind: {
          const size_t start = text.size();
          expand(p.rule, p.form >= 0 ? p.form : form);
          vars[p.var] = text.substr(start);
          break;
        }
      }
    }
  }

  const Grammar& m_grammar;
  Random& m_random;
};

// Draws a rule's alternatives without replacement, so that a document does not say the same thing twice.
class Deck {
 public:
  Deck(Expander& ex, std::string_view rule) : m_ex(ex), m_rule(ex.grammar().id(rule)) {}

  void next() {
    if (m_next == m_order.size()) shuffle();
    m_ex.expandAlternative(m_rule, m_order[m_next++]);
  }
  void sentence() {
    m_ex.space();
    next();
  }
  std::string make() {
    const size_t start = m_ex.text.size();
    next();
    std::string made = m_ex.text.substr(start);
    m_ex.text.resize(start);
    return made;
  }

 private:
  void shuffle() {
    const size_t n = m_ex.grammar().rule(m_rule).alternatives.size();
    m_order.resize(n);
    for (size_t i = 0; i < n; ++i) m_order[i] = static_cast<int>(i);
    for (size_t i = n - 1; i > 0; --i) std::swap(m_order[i], m_order[m_ex.random().below(i + 1)]);
    m_next = 0;
  }

  Expander& m_ex;
  int m_rule;
  std::vector<int> m_order;
  size_t m_next = 0;
};

// A random integer in [lo, hi] (one draw).
inline int between(Random& random, int lo, int hi) {
  return lo + static_cast<int>(random.below(hi - lo + 1));
}

// "a, b, c and d"
std::string listText(const std::vector<std::string>& items, const char* lastJoin = " and ");

// Capitalises sentence starts (and the letter after a '^' marker) and makes "a"/"an" agree with the
// next word, so that templates and word lists need not care.
std::string polish(const std::string& raw);

}  // namespace nf::corpus
