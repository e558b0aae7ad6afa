#include "text/pretokenizer.h"

#include "text/unicode.h"

namespace nf {
namespace {

struct Char {
  CharClass cls;
  int length;  // bytes
};

Char charAt(std::string_view text, std::size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  if (*p < 0x80) return {charClass(*p), 1};
  char32_t cp;
  const int length = decodeUtf8(p, reinterpret_cast<const unsigned char*>(text.data()) + text.size(), cp);
  return {charClass(cp), length};
}

// Length of the contraction ('s 't 're 've 'm 'll 'd, lower case only) starting at pos, or 0.
std::size_t contractionLength(std::string_view text, std::size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const char a = text[pos + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const char b = text[pos + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

bool Pretokenizer::next(std::string_view& piece) {
  const std::size_t n = m_text.size(), start = m_pos;
  if (start >= n) return false;

  std::size_t end;
  if (const std::size_t c = contractionLength(m_text, start)) {
    end = start + c;
  } else {
    Char first = charAt(m_text, start);
    std::size_t runStart = start;
    // " ?X+" for X in letters, numbers, other: a single ASCII space joins the run that follows it.
    if (m_text[start] == ' ' && start + 1 < n) {
      const Char second = charAt(m_text, start + 1);
      if (second.cls != CharClass::Whitespace) first = second, runStart = start + 1;
    }
    if (first.cls != CharClass::Whitespace) {
      end = runStart + first.length;
      while (end < n) {
        const Char c = charAt(m_text, end);
        if (c.cls != first.cls) break;
        end += c.length;
      }
    } else {
      // Whitespace: "\s+(?!\S)" keeps the run's last character for the word after it (when the run is
      // longer than one and a non-space follows); "\s+" takes a lone one.
      std::size_t lastStart = start;
      end = start;
      int count = 0;
      while (end < n) {
        const Char c = charAt(m_text, end);
        if (c.cls != CharClass::Whitespace) break;
        lastStart = end;
        end += c.length;
        ++count;
      }
      if (end < n && count >= 2) end = lastStart;
    }
  }
  piece = m_text.substr(start, end - start);
  m_pos = end;
  return true;
}

std::size_t lastSafeCut(std::string_view text) {
  for (std::size_t p = text.size(); p-- > 1;) {
    const auto at = static_cast<unsigned char>(text[p]);
    if (at >= 0x80 || charClass(at) != CharClass::Whitespace) continue;
    std::size_t before = p - 1;  // the start of the character before: back over UTF-8 continuation bytes
    while (before > 0 && p - before < 4 && (static_cast<unsigned char>(text[before]) & 0xC0) == 0x80)
      --before;
    const Char c = charAt(text, before);
    if (before + static_cast<std::size_t>(c.length) == p && c.cls != CharClass::Whitespace) return p;
  }
  return 0;
}

bool lastSafeCutMaySplit(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\n\v\f\r");
  return first != std::string_view::npos &&
         text.find_first_of(" \t\n\v\f\r", first) != std::string_view::npos;
}

}  // namespace nf
