// GPT-2's tokenizer files (text/bpe_tokenizer.h): vocab.json and merges.txt, in one input split at the first
// NUL byte (neither file holds one). A loaded tokenizer encodes a fixed text, which must decode back to the
// same bytes (the reader promises decode(encode(s)) == s for every byte string).
#include "fuzz_support.h"
#include "text/bpe_tokenizer.h"

namespace {
// Words, digits, spaces, the end-of-text marker, UTF-8 and an invalid byte: every branch of the
// pre-tokenizer and of the special-token split.
const std::string_view kText = "Hello world, it's 2024!  <|endoftext|>na\xc3\xafve caf\xc3\xa9 \xff\n\tend";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view vocab, merges;
  nf::fuzz::splitAt(nf::fuzz::asText(data, size), '\0', vocab, merges);
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::BpeTokenizer tokenizer =
        nf::BpeTokenizer::fromFiles(std::string(vocab), std::string(merges), "vocab.json", "merges.txt");
    for (bool allowSpecial : {true, false}) {
      std::vector<int32_t> ids;
      tokenizer.encodeAppend(kText, ids, allowSpecial);
      nf::fuzz::require(tokenizer.decode(ids) == kText, "decode(encode(text)) differs from the text");
    }
    if (tokenizer.eotId() >= 0) nf::fuzz::keep(tokenizer.tokenBytes(tokenizer.eotId()).size());
  });
  return 0;
}
