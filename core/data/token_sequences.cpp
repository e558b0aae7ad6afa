#include "data/token_sequences.h"

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <vector>

#include "data/token_file.h"

namespace nf {

namespace {

// Up to `count` sequences that start at the marker and do not overlap, from the start of the file.
TokenSequences documentSequences(const TokenFile& file, int64_t count, int64_t length, int32_t marker,
                                 int64_t vocabLimit) {
  TokenSequences s;
  s.length = length;
  std::vector<int32_t> window(static_cast<size_t>(length));
  int64_t free = 0;  // where the next sequence may start without overlapping the last
  file.forEachOccurrence(marker, length, vocabLimit, [&](int64_t at) {
    if (at < free) return true;
    file.read(at, length, window.data(), vocabLimit);
    s.tokens.insert(s.tokens.end(), window.begin(), window.end());
    free = at + length;
    return ++s.count < count;
  });
  const bool bos = marker == file.meta().bosTokenId;
  if (s.count == 0)
    throw FileError(file.path(), std::string("has no ") + (bos ? "begin-of-sequence" : "end-of-text") +
                                     " token (id " + std::to_string(marker) + ") with " +
                                     std::to_string(length) +
                                     " tokens from it, so no sequence can start at a "
                                     "document");
  return s;
}

// What a result's source says when the file held fewer sequences than were asked for.
std::string fewerThanAsked(int64_t count, int64_t asked) {
  return count < asked
             ? " (" + std::to_string(asked) + " were asked for: the file holds no more that do not overlap)"
             : "";
}

}  // namespace

TokenSequences readSequences(const std::string& tokenFile, int64_t count, int64_t length,
                             int64_t documentMarker, int64_t vocabSize) {
  const int64_t vocabLimit = vocabSize > 0 ? vocabSize : std::numeric_limits<int64_t>::max();
  if (count < 1 || length < 2) throw std::invalid_argument("need at least one sequence of at least 2 tokens");
  const TokenFile file = TokenFile::open(tokenFile);
  const std::string name = std::filesystem::path(tokenFile).filename().string();
  if (documentMarker >= 0) {
    TokenSequences s =
        documentSequences(file, count, length, static_cast<int32_t>(documentMarker), vocabLimit);
    s.source = name + ": " + std::to_string(s.count) + (s.count == 1 ? " document × " : " documents × ") +
               std::to_string(length) + " tokens, each from " +
               (documentMarker == file.meta().bosTokenId ? "the begin-of-sequence token that starts it"
                                                         : "the end-of-text token before it") +
               fewerThanAsked(s.count, count);
    return s;
  }
  const int64_t available = static_cast<int64_t>(file.size()) / length;
  if (available < 1)
    throw FileError(tokenFile, "holds " + std::to_string(file.size()) +
                                   " tokens, fewer than one sequence of " + std::to_string(length));
  TokenSequences s;
  s.count = std::min(count, available);
  s.length = length;
  s.tokens.resize(static_cast<size_t>(s.count * length));
  file.read(0, s.count * length, s.tokens.data(), vocabLimit);
  s.source = name + ": " + std::to_string(s.count) + (s.count == 1 ? " chunk × " : " chunks × ") +
             std::to_string(length) + " tokens from the start" + fewerThanAsked(s.count, count);
  return s;
}

}  // namespace nf
