// Token files and their sidecars (data/token_file.h): "<file>.json" (dtype, vocabulary size, counts) and the
// flat little-endian token array it describes. One input holds both, split at the first NUL byte: the
// sidecar, then the tokens; an input without a NUL is a bare token file, as nanoGPT's prepare.py leaves it. A
// few tokens of an opened file are read as a training batch would read them.
#include <algorithm>

#include "data/token_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view sidecar, tokens;
  const bool hasSidecar = nf::fuzz::splitAt(nf::fuzz::asText(data, size), '\0', sidecar, tokens);
  if (!hasSidecar) std::swap(sidecar, tokens);
  const std::string path = nf::fuzz::writeInput("train.bin", tokens);
  if (hasSidecar)
    nf::fuzz::writeInput("train.bin.json", sidecar);
  else
    nf::fuzz::removeInput("train.bin.json");
  nf::fuzz::expectOnlyParseErrors([&] {
    const nf::TokenFile file = nf::TokenFile::open(path);
    nf::fuzz::keep(file.meta().vocabSize);
    const int64_t count = std::min<int64_t>(file.size(), 16);
    int64_t ids64[16];
    int32_t ids32[16];
    file.read(file.size() - count, count, ids64, 0);  // no limit: every id as stored
    nf::fuzz::touch(ids64, sizeof(int64_t) * count);
    // With the model's vocabulary as the limit (GPT-2's), what comes back is a valid embedding row.
    file.read(0, count, ids32, 50257);
    for (int64_t i = 0; i < count; ++i)
      nf::fuzz::require(ids32[i] >= 0 && ids32[i] < 50257,
                        "a token read with a vocabulary limit is outside it");
    nf::fuzz::keep(file.at(file.size() - 1));
  });
  return 0;
}
