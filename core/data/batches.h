// Training batches (random windows) and evaluation chunks (sequential, non-overlapping) from a token file.
#pragma once
#include <torch/types.h>

#include <future>

#include "data/token_file.h"
#include "distributed/worker_environment.h"
#include "util/random.h"

namespace nf {

struct Batch {
  torch::Tensor inputs;   // [batch, context] int64
  torch::Tensor targets;  // [batch, context] int64: inputs shifted left by one token
};

// Random windows of context + 1 tokens, start positions drawn uniformly from a seeded generator whose
// state can be saved in a checkpoint and restored to continue the exact same sequence of batches. A share
// of the windows (DocumentWindows) may start at a document instead: at an occurrence of the end-of-text
// marker, which then opens the window as a BOS.
// With a share (one worker's of several, batchShare()), every batch still draws all batchSize starts, so
// the generator's state stays the run's, but only the share's rows are read and returned.
struct DocumentWindows {
  int64_t marker = -1;  // the BOS documents start with, else the end-of-text before them (documentMarker)
  double share = 0;     // of the windows, in [0, 1]; 0: every window starts anywhere
};

class BatchSampler {
 public:
  BatchSampler(TokenFile file, int64_t batchSize, int64_t context, uint64_t seed, int64_t vocabLimit,
               BatchShare share = {},  // count 0: the whole batch
               DocumentWindows documents = {});
  Batch next();  // on the CPU: [share.count or batchSize, context]

  const Random::State& state() const { return m_random.state(); }
  void setState(const Random::State& state) { m_random.setState(state); }
  const TokenFile& file() const { return m_file; }

 private:
  TokenFile m_file;
  int64_t m_batchSize, m_context, m_vocabLimit;
  BatchShare m_share;
  Random m_random;
  double m_documentShare;
  std::vector<int64_t> m_documentStarts;  // where the marker occurs with a whole window after it
};

// Draws the sampler's next batch on a background thread while the current one trains, pinned in page-locked
// memory when it will be copied to a GPU (the copy then runs without the host waiting). The same batches in
// the same order as the sampler alone. While it lives it owns the sampler; its destructor hands the sampler
// back in the state after the last batch next() returned, so a checkpoint resumes exactly there.
class BatchPrefetcher {
 public:
  BatchPrefetcher(BatchSampler& sampler, bool pin);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  Batch next();
  // The sampler's state after the last batch next() returned (before any batch drawn ahead).
  const Random::State& state() const { return m_stateAfterReturned; }

 private:
  struct Drawn {
    Batch batch;
    Random::State stateAfter;
  };
  void drawAhead();

  BatchSampler& m_sampler;
  bool m_pin;
  Random::State m_stateAfterReturned;
  std::future<Drawn> m_ahead;
};

// The file cut into consecutive chunks: chunk i has inputs [i·context, (i+1)·context) and targets one
// token later, so every token after the first is predicted exactly once.
class EvalChunks {
 public:
  // maxTokens > 0 keeps only the first chunks that fit in that many predicted tokens.
  EvalChunks(TokenFile file, int64_t context, int64_t vocabLimit, int64_t maxTokens = 0);
  int64_t count() const { return m_count; }
  int64_t context() const { return m_context; }
  Batch chunks(int64_t first, int64_t n) const;  // chunks [first, first + n)
  const TokenFile& file() const { return m_file; }

 private:
  TokenFile m_file;
  int64_t m_context, m_vocabLimit, m_count;
};

}  // namespace nf
