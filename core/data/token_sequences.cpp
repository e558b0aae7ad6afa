#include "data/token_sequences.h"

#include <filesystem>
#include <limits>
#include <stdexcept>

#include "data/token_file.h"

namespace nf {

TokenSequences readSequences(const std::string& tokenFile, int64_t count, int64_t length) {
  if (count < 1 || length < 2) throw std::invalid_argument("need at least one sequence of at least 2 tokens");
  const TokenFile file = TokenFile::open(tokenFile);
  const int64_t available = static_cast<int64_t>(file.size()) / length;
  if (available < 1)
    throw FileError(tokenFile, "holds " + std::to_string(file.size()) +
                                   " tokens, fewer than one sequence of " + std::to_string(length));
  TokenSequences s;
  s.count = std::min(count, available);
  s.length = length;
  s.tokens.resize(static_cast<size_t>(s.count * length));
  // No vocabulary check here: the model checks every id against its own vocabulary.
  file.read(0, s.count * length, s.tokens.data(), std::numeric_limits<int64_t>::max());
  s.source = std::filesystem::path(tokenFile).filename().string() + ": " + std::to_string(s.count) +
             " chunks × " + std::to_string(length) + " tokens from the start";
  return s;
}

}  // namespace nf
