// Learns a GPT-2 byte-level BPE vocabulary from text: GPT-2's pre-tokenization, 256 byte tokens, merges
// of the most frequent adjacent pair (ties: the smallest pair of ids) until the vocabulary is full, and
// "<|endoftext|>" as the last id. The result saves as vocab.json + merges.txt.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "text/bpe_tokenizer.h"
#include "util/progress.h"

namespace nf {

struct BpeTrainingOptions {
  int32_t vocabSize = 8192;  // including the 256 byte tokens and <|endoftext|>
  int64_t minFrequency = 2;  // stop early when the best pair occurs less often than this
};

class BpeTrainer {
 public:
  explicit BpeTrainer(BpeTrainingOptions options);

  // Counts the pre-tokenized pieces of text ("<|endoftext|>" is a separator, not trained on).
  void addText(std::string_view text);
  // The same for every document of a .txt or .jsonl file, streamed.
  void addFile(const std::string& path, const ProgressFn& progress = {});

  BpeTokenizer train(const ProgressFn& progress = {}) const;

  std::size_t distinctPieces() const { return m_pieceCounts.size(); }

 private:
  BpeTrainingOptions m_options;
  std::unordered_map<std::string, int64_t> m_pieceCounts;
};

}  // namespace nf
