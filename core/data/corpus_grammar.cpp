// The grammar engine of the synthetic corpus (see corpus_grammar.h): compiling rule tables, inflecting
// words, and polishing an expanded document.
#include "data/corpus_grammar.h"

#include <stdexcept>

namespace nf::corpus {
namespace {

bool endsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool isVowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

std::string pluralOf(const std::string& w) {
  if (endsWith(w, "s") || endsWith(w, "x") || endsWith(w, "z") || endsWith(w, "ch") || endsWith(w, "sh"))
    return w + "es";
  if (w.size() > 1 && w.back() == 'y' && !isVowel(w[w.size() - 2])) return w.substr(0, w.size() - 1) + "ies";
  return w + "s";
}

std::string pastOf(const std::string& w) {
  if (w.back() == 'e') return w + "d";
  if (w.size() > 1 && w.back() == 'y' && !isVowel(w[w.size() - 2])) return w.substr(0, w.size() - 1) + "ied";
  return w + "ed";
}

std::string thirdPersonOf(const std::string& w) {
  if (w == "have") return "has";
  if (endsWith(w, "o")) return w + "es";
  return pluralOf(w);
}

std::string gerundOf(const std::string& base, const std::string& past) {
  // "stop|stopped" doubles its consonant, so "stopping" does too.
  if (past == base + base.back() + "ed") return base + base.back() + "ing";
  if (endsWith(base, "ie")) return base.substr(0, base.size() - 2) + "ying";
  if (base.size() > 2 && base.back() == 'e' && !endsWith(base, "ee") && !endsWith(base, "ye") &&
      !endsWith(base, "oe"))
    return base.substr(0, base.size() - 1) + "ing";
  return base + "ing";
}

std::vector<std::string> split(std::string_view s, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == separator) {
      parts.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\n' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\n' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

bool isAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordChar(char c) { return isAsciiLetter(c) || isDigit(c) || (static_cast<unsigned char>(c) >= 0x80); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether the word starting at text[i] is said with a vowel sound first ("an hour", "a uniform").
bool startsWithVowelSound(const std::string& text, size_t i) {
  while (i < text.size() && text[i] == '^') ++i;
  std::string word;
  while (i < text.size() && isWordChar(text[i]) && word.size() < 8) word += lower(text[i++]);
  if (word.empty()) return false;
  for (std::string_view prefix : {"hour", "honest", "honor", "honour", "heir"})
    if (word.rfind(prefix, 0) == 0) return true;
  for (std::string_view prefix : {"uni", "use", "usu", "uti", "ura", "eu", "one", "once", "ewe"})
    if (word.rfind(prefix, 0) == 0) return false;
  if (word[0] == '8') return true;
  if (word == "11" || word == "18" || word.rfind("11,", 0) == 0 || word.rfind("18,", 0) == 0) return true;
  return isVowel(word[0]);
}

}  // namespace

Grammar::Grammar(const std::vector<std::vector<RuleDef>>& tables) {
  // Two passes, so rules can refer to rules defined later.
  for (const auto& table : tables)
    for (const RuleDef& def : table) {
      if (!m_index.emplace(def.name, static_cast<int>(m_rules.size())).second)
        throw std::logic_error(std::string("synthetic corpus: rule defined twice: ") + def.name);
      m_rules.push_back(Rule{def.name, def.kind, {}});
    }
  for (const auto& table : tables)
    for (const RuleDef& def : table) compileRule(m_rules[m_index.at(def.name)], def.body);
}

int Grammar::id(std::string_view name) const {
  auto it = m_index.find(std::string(name));
  if (it == m_index.end()) throw std::logic_error("synthetic corpus: no rule " + std::string(name));
  return it->second;
}

void Grammar::compileRule(Rule& rule, const std::string& body) {
  std::vector<std::string> entries;
  for (const std::string& line : split(body, '\n')) {
    if (rule.kind == Kind::Text) {
      entries.push_back(trim(line));
    } else {
      for (const std::string& word : split(line, ',')) entries.push_back(trim(word));
    }
  }
  for (const std::string& entry : entries)
    if (!entry.empty()) rule.alternatives.push_back(compileAlternative(rule, entry));
  if (rule.alternatives.empty()) throw std::logic_error("synthetic corpus: empty rule " + rule.name);
}

Alternative Grammar::compileAlternative(const Rule& rule, const std::string& text) {
  Alternative alt;
  if (rule.kind != Kind::Noun && rule.kind != Kind::Verb) {
    alt.before = compilePieces(text, -1);
    return alt;
  }
  // The inflected word: the token with '|', else the last plain word (nouns) or the first (verbs).
  std::vector<std::string> tokens = split(text, ' ');
  int head = -1;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].find('|') != std::string::npos) head = static_cast<int>(i);
  if (head < 0) head = rule.kind == Kind::Verb ? 0 : static_cast<int>(tokens.size()) - 1;
  if (tokens[head].find('{') != std::string::npos) {  // an alias such as "{fruit}": forms pass through
    alt.before = compilePieces(text, -1);
    return alt;
  }
  std::string beforeText, afterText;
  for (int i = 0; i < head; ++i) beforeText += tokens[i] + " ";
  for (size_t i = head + 1; i < tokens.size(); ++i) afterText += " " + tokens[i];
  alt.before = compilePieces(beforeText, 0);
  alt.after = compilePieces(afterText, 0);
  std::vector<std::string> given = split(tokens[head], '|');
  if (rule.kind == Kind::Noun) {
    alt.forms = {given[0], given.size() > 1 ? given[1] : pluralOf(given[0])};
  } else {
    const std::string& base = given[0];
    const std::string past = given.size() > 1 ? given[1] : pastOf(base);
    const std::string participle = given.size() > 2 ? given[2] : past;
    const std::string gerund = given.size() > 3 ? given[3] : gerundOf(base, past);
    alt.forms = {base, past, participle, gerund, thirdPersonOf(base)};
  }
  return alt;
}

std::vector<Piece> Grammar::compilePieces(const std::string& text, int defaultForm) {
  std::vector<Piece> pieces;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    const size_t literalEnd = open == std::string::npos ? text.size() : open;
    if (literalEnd > i) {
      std::string literal = text.substr(i, literalEnd - i);
      for (size_t n = literal.find("\\n"); n != std::string::npos; n = literal.find("\\n", n))
        literal.replace(n, 2, "\n");  // a line break inside a one-line template
      if (!pieces.empty() && pieces.back().type == Piece::Literal)
        pieces.back().text += literal;
      else
        pieces.push_back(Piece{Piece::Literal, -1, 0, 0, 0, 0, 0, literal});
    }
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) throw std::logic_error("synthetic corpus: unclosed slot in: " + text);
    pieces.push_back(compileSlot(text.substr(open + 1, close - open - 1), defaultForm));
    i = close + 1;
  }
  return pieces;
}

Piece Grammar::compileSlot(const std::string& slot, int defaultForm) {
  Piece piece;
  piece.form = defaultForm;
  if (slot.rfind("int", 0) == 0 && slot.find(':') != std::string::npos) {  // {int:2-9}, {int2:0-59}
    const size_t colon = slot.find(':'), dash = slot.find('-', colon);
    piece.type = Piece::Integer;
    piece.width = colon > 3 ? std::stoi(slot.substr(3, colon - 3)) : 0;
    piece.lo = std::stoi(slot.substr(colon + 1, dash - colon - 1));
    piece.hi = std::stoi(slot.substr(dash + 1));
    return piece;
  }
  std::string name = slot;
  const size_t equals = slot.find('=');
  if (equals != std::string::npos) {  // {T=fruit}: expand fruit, print it and remember it in T
    piece.type = Piece::Bind;
    piece.var = variableIndex(slot.substr(0, equals));
    name = slot.substr(equals + 1);
    if (piece.var < 0) throw std::logic_error("synthetic corpus: no variable in slot {" + slot + "}");
  } else if (const int var = variableIndex(slot); var >= 0) {
    piece.type = Piece::Variable;
    piece.var = var;
    return piece;
  } else {
    piece.type = Piece::Rule;
  }
  const size_t dot = name.find('.');
  if (dot != std::string::npos) {
    static const std::unordered_map<std::string, int> suffixes = {
        {"pl", kPlural}, {"past", kPast}, {"pp", kParticiple}, {"ing", kGerund}, {"s", kThird}};
    auto it = suffixes.find(name.substr(dot + 1));
    if (it == suffixes.end()) throw std::logic_error("synthetic corpus: bad suffix in {" + slot + "}");
    piece.form = it->second;
    name = name.substr(0, dot);
  }
  auto it = m_index.find(name);
  if (it == m_index.end()) throw std::logic_error("synthetic corpus: unknown slot {" + slot + "}");
  piece.rule = it->second;
  return piece;
}

int Grammar::variableIndex(std::string_view name) {
  for (int i = 0; i < kVarCount; ++i)
    if (kVarNames[i] == name) return i;
  return -1;
}

std::string listText(const std::vector<std::string>& items, const char* lastJoin) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? lastJoin : ", ";
    text += items[i];
  }
  return text;
}

// Capitalises sentence starts (and the letter after a '^' marker) and makes "a"/"an" agree with the
// next word, so that templates and word lists need not care.
std::string polish(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  bool capital = true;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '^') {
      capital = true;
      continue;
    }
    const bool wordStart = out.empty() || !isWordChar(out.back());
    if (wordStart && (c == 'a' || c == 'A')) {
      size_t length = 0;  // of "a" or "an" when it is a whole word followed by a space
      if (i + 1 < raw.size() && raw[i + 1] == ' ')
        length = 1;
      else if (i + 2 < raw.size() && raw[i + 1] == 'n' && raw[i + 2] == ' ')
        length = 2;
      if (length > 0) {
        out += capital ? 'A' : c;
        if (startsWithVowelSound(raw, i + length + 1)) out += 'n';
        out += ' ';
        i += length;
        capital = false;
        continue;
      }
    }
    if (capital && c >= 'a' && c <= 'z') {
      out += static_cast<char>(c - 'a' + 'A');
      capital = false;
      continue;
    }
    out += c;
    if (isWordChar(c)) {
      capital = false;
    } else if (c == '\n') {
      capital = true;
    } else if ((c == '.' || c == '!' || c == '?') && i + 1 < raw.size() && raw[i + 1] == ' ') {
      capital = true;
    } else if (c == '"' && (out.size() == 1 || out[out.size() - 2] == ' ' || out[out.size() - 2] == '\n')) {
      capital = true;  // an opening quote starts a sentence
    }
  }
  return out;
}

}  // namespace nf::corpus
