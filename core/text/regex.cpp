#include "text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <new>
#include <stdexcept>

namespace nf {

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool unicode = true;
  ~Code() { pcre2_code_free(code); }
};

namespace {

std::string pcre2Message(int error) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(error, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

// Match data and the JIT stack belong to one thread at a time, so each thread keeps its own.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  // A long run of white space against \s+(?!\S) needs more than PCRE2's default 32 KiB of JIT stack.
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr);

  MatchState() {
    if (!data || !context || !stack) {
      release();
      throw std::bad_alloc();
    }
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() { release(); }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;

  void release() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
};

MatchState& matchState() {
  thread_local MatchState state;
  return state;
}

}  // namespace

Regex::Regex(const std::string& pattern, Mode mode) : m_pattern(pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = mode == Mode::Unicode ? PCRE2_UTF | PCRE2_UCP : 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                   &error, &offset, nullptr);
  if (!code)
    throw std::invalid_argument("the regular expression \"" + pattern + "\" does not compile (at byte " +
                                std::to_string(offset) + "): " + pcre2Message(error));
  auto compiled = std::make_shared<Code>();
  compiled->code = code;
  compiled->unicode = mode == Mode::Unicode;
  // Without a JIT for this machine PCRE2's interpreter gives the same matches, only slower.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  m_code = std::move(compiled);
}

bool Regex::Cursor::next(Match& match) {
  MatchState& state = matchState();
  const Code& code = *m_regex.m_code;
  const auto* bytes = reinterpret_cast<PCRE2_SPTR>(m_subject.data());
  while (m_start <= m_subject.size()) {
    const int rc = pcre2_match(code.code, bytes, m_subject.size(), m_start,
                               m_checked ? PCRE2_NO_UTF_CHECK : 0, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      throw std::runtime_error("the regular expression \"" + m_regex.m_pattern +
                               "\" failed: " + pcre2Message(rc));
    m_checked = true;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    if (ovector[1] > ovector[0]) {
      match = {ovector[0], ovector[1]};
      m_start = ovector[1];
      return true;
    }
    // An empty match: look again one character further on.
    m_start = ovector[0] + 1;
    if (code.unicode)
      while (m_start < m_subject.size() && (static_cast<unsigned char>(m_subject[m_start]) & 0xC0) == 0x80)
        ++m_start;
  }
  m_start = m_subject.size() + 1;
  return false;
}

bool Regex::mayMatchEmpty() const {
  uint32_t shortest = 0;
  pcre2_pattern_info(m_code->code, PCRE2_INFO_MINLENGTH, &shortest);
  return shortest == 0;
}

void Regex::findAll(std::string_view subject, std::vector<Match>& out) const {
  Cursor cursor(*this, subject);
  for (Match m; cursor.next(m);) out.push_back(m);
}

std::string Regex::escape(std::string_view text) {
  std::string pattern;
  pattern.reserve(text.size() * 2);
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    // A backslash before any ASCII character that is not a letter or digit makes it literal.
    const bool alphanumeric = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
    if (b < 0x80 && !alphanumeric) pattern += '\\';
    pattern += c;
  }
  return pattern;
}

}  // namespace nf
