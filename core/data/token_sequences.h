// Token sequences of equal length read from a token file: the inputs of the analyses. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nf {

// Token sequences of equal length, with a description of where they came from.
struct TokenSequences {
  std::string source;  // "val.bin: 16 chunks × 128 tokens from token 0"
  int64_t count = 0, length = 0;
  std::vector<int32_t> tokens;  // count × length, row-major
  const int32_t* row(int64_t i) const { return tokens.data() + i * length; }
};
// The first `count` consecutive, non-overlapping chunks of `length` tokens of a token file (fewer when the
// file is shorter; an error when it holds not even one). Ids must lie below vocabSize (0: checked later,
// by the model — an error that cannot name the file).
// With a document marker (≥ 0: documentMarker(), the BOS documents start with or else the end-of-text
// before them) each sequence starts at a document instead, the marker its first token, as a model trained
// on document windows saw its data; the sequences do not overlap.
TokenSequences readSequences(const std::string& tokenFile, int64_t count, int64_t length,
                             int64_t documentMarker = -1, int64_t vocabSize = 0);

}  // namespace nf
