// Text files → a token file, streamed in constant memory: every document is encoded and followed by
// end-of-text, as nanoGPT's prepare.py does for OpenWebText; with a tokenizer whose Hugging Face encoding
// starts with a begin-of-sequence token other than its end-of-text (LLaMA's <s> … </s>, unless
// tokenizer_config.json says add_bos_token: false) each document also starts with it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {

struct TokenizeStats {
  int64_t documents = 0, tokens = 0, bytes = 0;
  int64_t repeatDocuments = 0;  // of documents: the random repeated spans mixed in
};

// Documents of uniformly random tokens, each span followed by an exact copy, mixed in after text documents:
// only an induction circuit (find the earlier occurrence, copy what followed) predicts the copy, on any
// tokens — the induction analysis's test. Text alone teaches copying only the words that text repeats.
struct RandomRepeats {
  double chance = 0;  // after each text document, one repeat document with this probability (0: none)
  int64_t minSpan = 8, maxSpan = 96;
  uint64_t seed = 0;
  std::string describe() const;  // for the sidecar's sources, e.g. "random repeated spans: …"
};

// Inputs are .txt (documents separated by "<|endoftext|>") or .jsonl ("text" fields). A literal
// special token inside a document is ordinary text. Writes outPath and its sidecar atomically. Memory
// stays constant for tokenizers that say where a stream may be cut (GPT-2's pre-tokenization); others
// hold one document at a time.
TokenizeStats tokenizeFiles(const std::vector<std::string>& inputs, const Tokenizer& tokenizer,
                            const std::string& tokenizerFolder, const std::string& outPath,
                            const ProgressFn& progress = {}, const RandomRepeats& repeats = {});

}  // namespace nf
