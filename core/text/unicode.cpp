#include "text/unicode.h"

#include <algorithm>
#include <array>

namespace nf {
namespace {

struct ClassRange {
  char32_t first, last;
  CharClass cls;
};

constexpr ClassRange kRanges[] = {
#include "text/unicode_tables.inc"
};

CharClass lookup(char32_t cp) {
  auto it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                             [](char32_t value, const ClassRange& r) { return value < r.first; });
  if (it == std::begin(kRanges)) return CharClass::Other;
  --it;
  return cp <= it->last ? it->cls : CharClass::Other;
}

// Most text is ASCII: answer it from a table built once from the same ranges.
const std::array<CharClass, 128> kAscii = [] {
  std::array<CharClass, 128> table{};
  for (char32_t c = 0; c < 128; ++c) table[c] = lookup(c);
  return table;
}();

}  // namespace

CharClass charClass(char32_t codePoint) {
  if (codePoint < 128) return kAscii[codePoint];
  if (codePoint == kInvalidByte) return CharClass::Other;
  return lookup(codePoint);
}

int decodeUtf8(const unsigned char* p, const unsigned char* end, char32_t& codePoint) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) {
    codePoint = b0;
    return 1;
  }
  int length;
  char32_t cp, minimum;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, cp = b0 & 0x1F, minimum = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, cp = b0 & 0x0F, minimum = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, cp = b0 & 0x07, minimum = 0x10000;
  } else {
    codePoint = kInvalidByte;
    return 1;
  }
  if (end - p < length) {
    codePoint = kInvalidByte;
    return 1;
  }
  for (int i = 1; i < length; ++i) {
    if ((p[i] & 0xC0) != 0x80) {
      codePoint = kInvalidByte;
      return 1;
    }
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    codePoint = kInvalidByte;
    return 1;
  }
  codePoint = cp;
  return length;
}

}  // namespace nf
