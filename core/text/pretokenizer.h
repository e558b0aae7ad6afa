// GPT-2's pre-tokenization: the text is cut into pieces before BPE, exactly as the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// cuts it (Python `regex` semantics, all of Unicode), written as a hand-made scanner because
// std::regex knows no Unicode classes and is two orders of magnitude too slow.
#pragma once
#include <cstddef>
#include <string_view>

namespace nf {

// Yields the pieces of a byte string in order; they concatenate back to the input. Bytes that are not
// valid UTF-8 count as "other" characters (as the lone surrogates Python's surrogateescape makes).
class Pretokenizer {
 public:
  explicit Pretokenizer(std::string_view text) : m_text(text) {}
  bool next(std::string_view& piece);

 private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

// The last position p > 0 where the text can be cut so that pre-tokenizing text[0, p) and text[p, …)
// separately gives the same pieces as the whole, whatever follows; 0 if there is none. Used to stream
// large files in blocks. (No piece holds whitespace after anything else, and none looks behind: an ASCII
// whitespace character after any other character always starts a new piece.)
std::size_t lastSafeCut(std::string_view text);
// Whether lastSafeCut may cut inside this text (it holds ASCII whitespace after another character): a
// tokenizer whose added tokens do so cannot stream at those cuts.
bool lastSafeCutMaySplit(std::string_view text);

}  // namespace nf
