// Streams the documents of a text file in blocks, in constant memory, for the tokenizer trainer and
// for tokenizing datasets. Formats: .txt (documents separated by the literal "<|endoftext|>"; a file
// without one is one document) and .jsonl (one JSON object per line; its "text" field is a document).
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "util/progress.h"

namespace nf {

struct DocumentSink {
  // Consecutive parts of the current document, each cut where pre-tokenization is unaffected by the cut.
  std::function<void(std::string_view text)> text;
  // After the last part of each non-empty document.
  std::function<void()> documentEnd;
};

// Returns the number of documents. Errors (unreadable file, bad JSON line, missing "text") name the file
// and, for .jsonl, the line.
int64_t streamDocuments(const std::string& path, const DocumentSink& sink, const ProgressFn& progress = {});

}  // namespace nf
