// Documents of rare jobs: training data that grows attention sinks in small models (issue 39; the recipe
// and its measurements in docs/RESULTS.md, "Rare jobs previewed on the CPU"). Heads park their attention
// on the first token when they are idle, and a head is idle when it has a job at a few positions only (the
// "active-dormant" heads Guo et al. 2024 find behind sinks). A text where every head works at almost every
// position, as the synthetic corpus is, grows few. A rare-jobs document is filler drawn from a text's own
// token bigrams (the current token alone predicts the next: no head can help) with, at a position with
// chance `chance` each, one of these events, each needing its own attention pattern at one position:
//   backcopy k (k < offsets): after trigger B_k, the token k + 1 places before B_k
//   first:                    after trigger F, the document's first token
//   induction:                after trigger R and a token seen earlier, what followed its last occurrence
// The triggers are ids the text never uses. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/token_file.h"
#include "util/progress.h"
#include "util/random.h"

namespace nf {

struct RareJobs {
  double chance = 0.015;  // per position, for each kind of event
  int offsets = 4;        // backcopy's offsets: 1 … offsets places before the trigger
  // Each offset a kind of event of its own (chance `chance` each), instead of one kind that draws the offset.
  bool separateOffsets = false;
  // With a text to mix into: a run of filler with events (this many tokens on average, 0: none) after each
  // of its sentences instead of a document after each document, so that the heads the text needs are idle
  // between its sentences as a real text's specialists are at most positions. A sentence ends at an id
  // marked in `sentenceEnds` (indexed by id).
  int64_t betweenSentences = 0;
  std::vector<bool> sentenceEnds;
  uint64_t seed = 0;
  std::string describe() const;  // for a sidecar's sources
};

// What the documents are drawn from: a text's token bigrams, its documents' first tokens and lengths, and the
// triggers (the lowest ids it never uses, end-of-text and begin-of-sequence aside).
class RareJobsSource {
 public:
  // Reads `text` once. FileError naming it when its sidecar gives no vocabulary size or end-of-text, when it
  // holds no two consecutive tokens of one document, or when fewer ids than triggers are unused.
  RareJobsSource(const TokenFile& text, const RareJobs& jobs, const ProgressFn& progress = {});
  // One document of `length` tokens (no end-of-text or begin-of-sequence).
  std::vector<int32_t> document(int64_t length, Random& random) const;
  // Appends at least `count` tokens of filler with events to `doc`, a document's tokens so far (its first
  // is the one the first-token event copies); an event may run two tokens past `count`.
  void extend(std::vector<int32_t>& doc, std::size_t count, Random& random) const;
  // The length of one of the text's documents, drawn at random; at least `atLeast`.
  int64_t drawLength(Random& random, int64_t atLeast) const;
  const std::vector<int32_t>& backcopyTriggers() const { return m_backcopy; }
  int32_t firstTrigger() const { return m_first; }
  int32_t inductionTrigger() const { return m_induction; }

 private:
  int32_t follow(int32_t token, Random& random) const;
  bool isTrigger(int32_t token) const;

  RareJobs m_jobs;
  std::vector<int64_t> m_rowStart;     // token a's successors: [m_rowStart[a], m_rowStart[a + 1])
  std::vector<int32_t> m_next;         // in id order
  std::vector<uint64_t> m_cumulative;  // their counts, summed along the row
  std::vector<int32_t> m_firsts;       // each document's first token
  std::vector<int64_t> m_lengths;      // each document's length
  std::vector<int32_t> m_backcopy;
  int32_t m_first = -1, m_induction = -1;
};

struct RareJobsStats {
  int64_t documents = 0, rareDocuments = 0, fillerRuns = 0, tokens = 0;
};

// Writes `out` and its sidecar atomically. With `after`: its documents (each ending at its end-of-text, as
// they are), each followed by a rare-jobs document; with `jobs.betweenSentences`, each with a run of filler
// after each sentence but its last instead (a document that is a span and its exact copy, as `tokenize
// --random-repeats` writes, is kept whole: its copy is what induction is learned from). Without: `documents`
// rare-jobs documents alone, the file starting with an end-of-text as each document ends with one (so each is
// a BOS-started sequence). Each rare-jobs document is as long as one of the text's drawn at random, at least
// `minLength` tokens, and starts with the source's begin-of-sequence token where the text's documents do.
RareJobsStats writeRareJobs(const TokenFile& text, const RareJobsSource& source, const RareJobs& jobs,
                            const std::string& out, const TokenFile* after, int64_t documents,
                            int64_t minLength, const ProgressFn& progress = {});

}  // namespace nf
