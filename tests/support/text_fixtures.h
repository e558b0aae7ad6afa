// Text for the tokenizer tests: strings that exercise every branch of GPT-2's pre-tokenization, and
// the hex form in which the Python references take byte strings (so that invalid UTF-8 passes too).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check.h"
#include "io/atomic_file.h"
#include "temp_dir.h"
#include "util/random.h"

namespace nf::test {

inline const std::vector<std::string>& trickyText() {
  static const std::vector<std::string> strings = {
      "",
      "Hello world",
      "don't I'll we've they're she'd I'm it's 'tis ''s '",
      "DON'T SHE'S",  // contractions are lower case only
      "  multiple   spaces    between  words  ",
      "\n\n\nnewlines\n \n\t\ttabs\t and\r\nwindows\r\n",
      "trailing spaces   ",
      "   ",
      " ",
      "abc123def 4567 3.14159 1,000,000 x2y",
      "ünïcödé café naïve Zürich São Paulo",
      "日本語のテキスト 中文 한국어 русский текст Ελληνικά العربية",
      "emoji 😀👍🏽 flags 🇩🇪 zwj 👨‍👩‍👧",
      "combining e\xcc\x81 and precomposed \xc3\xa9",
      "numbers: \xd9\xa3\xd9\xa4 \xe2\x85\xa6 \xc2\xbd",  // Arabic-Indic digits, Roman numeral seven, one
                                                          // half
      "nbsp\xc2\xa0here em\xe2\x80\x83space ideographic\xe3\x80\x80space",
      "invalid \xff\xfe bytes \xc3 truncated \xe2\x82 and \xed\xa0\x80 surrogate \xf4\x90\x80\x80 too big",
      "<|endoftext|>",
      "before<|endoftext|>after <|endoftext|><|endoftext|> twice",
      "almost <|endoftext| and <|endoftex",
      "punctuation!!! ?!... (parens) [brackets] {braces} --dashes-- \"quotes\" 'single'",
      "\x01\x02\x1c\x1f control \x7f chars",
      "x = f(a, b) + g[c] * 2; // code\n\tif (y) { return z; }",
  };
  return strings;
}

// Training text: 20000 of `words` at random (seed 11), a space after most, then every tricky string, so
// that a trained vocabulary has merges everywhere.
inline std::string trainingText(const std::vector<std::string>& words,
                                const std::vector<std::string>& tricky) {
  std::string text;
  Random random(11);
  for (int i = 0; i < 20000; ++i) {
    text += random.pick(words);
    text += random.chance(0.7) ? " " : "";
  }
  for (const auto& s : tricky) text += s + " ";
  return text;
}

// `count` random byte strings of up to 39 bytes (half of them any byte, half printable ASCII), and one
// of all 256 bytes.
inline std::vector<std::string> randomByteStrings(int count) {
  Random random(5);
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    std::string s(random.below(40), '\0');
    for (auto& c : s) c = static_cast<char>(random.chance(0.5) ? random.below(256) : ' ' + random.below(95));
    texts.push_back(s);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  texts.push_back(all);
  return texts;
}

inline std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {digits[b >> 4], digits[b & 15]};
  return out;
}

inline void requireReferencePython(const std::string& modules) {
  if (runCommand(std::string(NF_REFERENCE_PYTHON) + " -c 'import " + modules + "' 2>/dev/null") != 0)
    throw Failure(std::string(NF_REFERENCE_PYTHON) + " with " + modules + " is needed (run bootstrap.sh)");
}

// Runs a reference script of tests/reference on texts and returns what it wrote: `arguments` come before
// the input (a JSON list of hex strings) and output file names, `options` after them.
inline nlohmann::json runReference(const std::string& arguments, const std::vector<std::string>& texts,
                                   const std::string& options = "") {
  requireReferencePython("regex");
  TempDir io;
  nlohmann::json input = nlohmann::json::array();
  for (const auto& t : texts) input.push_back(hex(t));
  writeFileAtomic(io.path("in.json"), input.dump());
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR + "/" + arguments + " " +
                          io.path("in.json") + " " + io.path("out.json") + options;
  if (runCommand(cmd) != 0) throw Failure("reference failed: " + cmd);
  return nlohmann::json::parse(readTextFile(io.path("out.json")));
}

}  // namespace nf::test
