// One parser for the whole numbers read from text we do not control (a query string, an environment
// variable, a dataset's label, a file name): std::stol skipped leading blanks and took "+7", so each caller
// had added its own checks around it.
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nf {

// `text` as a whole decimal number, when it is one and nothing else ("12", "-3"), within T (int64, or
// uint64_t for a 64-bit word, where "-3" is refused too); nullopt for "", " 12", "+12", "1e3", "12abc" and
// numbers out of range.
template <class T = int64_t>
std::optional<T> wholeNumber(std::string_view text) {
  T value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace nf
