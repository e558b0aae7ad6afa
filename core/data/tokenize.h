// Text files → a token file, streamed in constant memory: every document is encoded and followed by
// end-of-text, as nanoGPT's prepare.py does for OpenWebText.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/bpe_tokenizer.h"
#include "util/progress.h"

namespace nf {

struct TokenizeStats {
  int64_t documents = 0, tokens = 0, bytes = 0;
};

// Inputs are .txt (documents separated by "<|endoftext|>") or .jsonl ("text" fields). A literal
// "<|endoftext|>" inside a .jsonl document is ordinary text. Writes outPath and its sidecar atomically.
TokenizeStats tokenizeFiles(const std::vector<std::string>& inputs, const BpeTokenizer& tokenizer,
                            const std::string& tokenizerFolder, const std::string& outPath,
                            const ProgressFn& progress = {});

}  // namespace nf
