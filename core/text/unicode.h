// UTF-8 decoding and the character classes of GPT-2's pre-tokenization regex, for all of Unicode.
#pragma once
#include <cstdint>

namespace nf {

// \p{L}, \p{N}, \s and everything else, as Python's `regex` module (what GPT-2 used) classifies them.
enum class CharClass : uint8_t { Other, Letter, Number, Whitespace };

CharClass charClass(char32_t codePoint);

// Stands for one byte that is not part of a valid UTF-8 sequence (class Other, like the lone surrogate
// Python's 'surrogateescape' turns it into).
inline constexpr char32_t kInvalidByte = 0xFFFFFFFF;

// Decodes the character starting at p (p < end) and returns its length in bytes. Overlong forms,
// surrogates, code points above U+10FFFF and truncated sequences give length 1 and kInvalidByte, so every
// byte string decodes and every byte belongs to exactly one character.
int decodeUtf8(const unsigned char* p, const unsigned char* end, char32_t& codePoint);

}  // namespace nf
