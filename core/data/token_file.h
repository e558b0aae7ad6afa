// Token datasets as nanoGPT writes them: a flat array of little-endian uint16 (uint32 when the
// vocabulary needs it), memory-mapped. A sidecar "<file>.json" records the dtype, vocabulary size and
// counts; a file without one (as nanoGPT's own prepare.py leaves it) is read as uint16. Torch-free.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {

enum class TokenDType { U16, U32 };

struct TokenFileMeta {
  TokenDType dtype = TokenDType::U16;
  int64_t vocabSize = -1;   // -1: unknown (no sidecar)
  int64_t eotTokenId = -1;  // -1: unknown
  int64_t bosTokenId = -1;  // each document starts with it (LLaMA's <s>); -1: documents follow end-of-text
  int64_t tokens = -1;      // as written; checked against the file size
  int64_t documents = -1;
  std::string tokenizer;             // folder the tokens were made with, for the record
  std::string tokenizerFingerprint;  // its tokenizerFingerprint (text/tokenizer.h); "" when unknown
  std::vector<std::string> sources;
};

std::string tokenFileSidecarPath(const std::string& binPath);  // "<binPath>.json"
TokenDType tokenDTypeFor(int64_t vocabSize);                   // U16 when every id fits, else U32

class TokenFile {
 public:
  // Maps the file and reads its sidecar if there is one. Errors: missing file, a byte length that is not
  // a whole number of tokens, an unknown dtype, a sidecar that disagrees with the file.
  static TokenFile open(const std::string& path);

  const std::string& path() const { return m_path; }
  const TokenFileMeta& meta() const { return m_meta; }
  int64_t size() const { return m_size; }  // tokens
  uint32_t at(int64_t index) const;
  bool dtypeStated() const { return m_dtypeStated; }

  // Copies tokens [begin, begin + count) into out. Throws FileError naming the file and position if a
  // token is >= vocabLimit (pass the model's vocabulary size), or when a vocabulary past 16 bits meets a
  // file without a sidecar (read as uint16, its ids could not reach it: they are likely 32-bit).
  void read(int64_t begin, int64_t count, int64_t* out, int64_t vocabLimit) const;
  void read(int64_t begin, int64_t count, int32_t* out, int64_t vocabLimit) const;

  // Reads tokens [first, end) a block of a million at a time: visit(begin, ids, count) for each block, in
  // order, until visit returns false (ids >= vocabLimit are an error, as in read()).
  void forEachBlock(int64_t first, int64_t end, int64_t vocabLimit,
                    const std::function<bool(int64_t, const int32_t*, int64_t)>& visit) const;
  // One pass over the whole file: which token ids occur (ids >= vocabLimit are an error).
  std::vector<bool> occurringTokens(int64_t vocabLimit, const ProgressFn& progress = {}) const;
  // The error read() gives for the first id >= vocabLimit in the file: one pass over tokens [checkedBefore,
  // size()), those before having been read with that limit by the caller. Once passed, a later call with a
  // limit no lower, on this TokenFile or a copy, returns at once.
  void requireIdsBelow(int64_t vocabLimit, int64_t checkedBefore = 0) const;
  // One pass from the start: visit(position) for each occurrence of `token` with `window` tokens from it
  // (itself included), in order, until visit returns false (ids >= vocabLimit are an error).
  void forEachOccurrence(int32_t token, int64_t window, int64_t vocabLimit,
                         const std::function<bool(int64_t)>& visit) const;

 private:
  std::string m_path;
  TokenFileMeta m_meta;
  std::shared_ptr<const MappedFile> m_file;  // shared: copies of a TokenFile read the same map
  int64_t m_size = 0;
  bool m_dtypeStated = false;  // by a sidecar; without one the ids are read as uint16
  // Every id is below it (0: not checked yet); shared by copies, like the map.
  std::shared_ptr<std::atomic<int64_t>> m_idsCheckedBelow = std::make_shared<std::atomic<int64_t>>(0);
};

// The token a document's sequence starts at: the begin-of-sequence token each document starts with where
// the sidecar names one (LLaMA's <s>: sequences start as its models saw them, not at the </s> before), else
// the end-of-text that separates them (GPT-2's, which its models saw as a BOS): the sidecar's, else the
// model's.
inline int64_t documentMarker(const TokenFile& file, int64_t modelEndOfText) {
  if (file.meta().bosTokenId >= 0) return file.meta().bosTokenId;
  return file.meta().eotTokenId >= 0 ? file.meta().eotTokenId : modelEndOfText;
}

// Why `file`'s tokens are likely another tokenizer's than the model's, or "" when nothing says so: its
// sidecar's tokenizer fingerprint against the model's tokenizer's (when both are known; the same, its
// end-of-text id against that tokenizer's), else its end-of-text id against the model's config's; a file
// without a sidecar (nanoGPT's: GPT-2's ids) for a model whose end-of-text is not GPT-2's. Read by
// another tokenizer's model, every number is wrong: the CLI notes it, a training run warns.
std::string otherTokenizerProblem(const TokenFile& file, int64_t modelEndOfText,
                                  const Tokenizer* modelTokenizer);

// Streams tokens into "<path>" and its sidecar; nothing appears under either name until finish().
class TokenFileWriter {
 public:
  TokenFileWriter(const std::string& path, TokenFileMeta meta);
  void append(const int32_t* ids, std::size_t count);
  void setDocuments(int64_t documents) { m_meta.documents = documents; }
  void finish();  // writes the sidecar (tokens = count appended), then commits both files
  int64_t tokensWritten() const { return m_count; }

 private:
  void flush();
  std::string m_path;
  TokenFileMeta m_meta;
  AtomicFile m_bin;
  std::vector<unsigned char> m_buffer;
  int64_t m_count = 0;
};

}  // namespace nf
