// Hugging Face tokenizer.json (text/hf_tokenizer.h): the model's vocabulary and merges, added tokens, the
// normalizer (ICU), the pre-tokenizer's regexes (PCRE2) and the decoder. A loaded tokenizer encodes a fixed
// text, with and without special tokens, and decodes the ids again.
#include "fuzz_support.h"
#include "text/hf_tokenizer.h"

namespace {
const std::string_view kText =
    "Hello world, it's 2024!  <|endoftext|><|im_start|>na\xc3\xafve caf\xc3\xa9 \xff\r\n\tend   x";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(nf::fuzz::asText(data, size));
  nf::fuzz::expectOnlyParseErrors([&] {
    const std::unique_ptr<nf::HfTokenizer> tokenizer = nf::HfTokenizer::fromJson(text, "tokenizer.json");
    for (bool allowSpecial : {true, false}) {
      std::vector<int32_t> ids;
      tokenizer->encodeAppend(kText, ids, allowSpecial);
      const std::string decoded = tokenizer->decode(ids);
      nf::fuzz::touch(decoded.data(), decoded.size());
    }
    nf::fuzz::keep(tokenizer->streamCut(kText));
  });
  return 0;
}
