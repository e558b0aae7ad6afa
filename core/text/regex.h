// Regular expressions for pre-tokenization, run by PCRE2 (Debian's libpcre2-8): the patterns of Hugging
// Face tokenizer.json files need Unicode properties (\p{L}, \p{N}), Unicode white space, (?i:…) and
// lookahead, which std::regex lacks. JIT-compiled where PCRE2 has a JIT for this machine.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nf {

class Regex {
 public:
  enum class Mode {
    Unicode,  // pattern and subjects are UTF-8; \p{…}, \s, \w and (?i) follow Unicode (PCRE2_UTF | PCRE2_UCP)
    Bytes,    // pattern and subjects are byte strings, matched byte by byte
  };
  // Throws std::invalid_argument with the pattern, the offset and PCRE2's message when it does not compile.
  explicit Regex(const std::string& pattern, Mode mode = Mode::Unicode);

  struct Match {
    std::size_t begin, end;  // byte offsets into the subject
  };
  // The non-overlapping matches in a subject one at a time, leftmost first (at one start, the first
  // alternative that matches wins); empty matches are left out. A Unicode subject must be valid UTF-8.
  class Cursor {
   public:
    Cursor(const Regex& regex, std::string_view subject) : m_regex(regex), m_subject(subject) {}
    bool next(Match& match);

   private:
    const Regex& m_regex;
    std::string_view m_subject;
    std::size_t m_start = 0;
    bool m_checked = false;  // the subject's UTF-8 was checked by the first match
  };
  // All of them at once.
  void findAll(std::string_view subject, std::vector<Match>& out) const;

  const std::string& pattern() const { return m_pattern; }
  // Whether some subject could give an empty match (PCRE2's lower bound on a match's length is 0; it may
  // also be 0 for a pattern that cannot, e.g. one with a back reference).
  bool mayMatchEmpty() const;

  // A pattern that matches `text` literally.
  static std::string escape(std::string_view text);

 private:
  struct Code;
  std::string m_pattern;
  std::shared_ptr<const Code> m_code;
};

}  // namespace nf
