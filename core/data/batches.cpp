#include "data/batches.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace nf {
namespace {

void fillWindow(const TokenFile& file, int64_t begin, int64_t context, int64_t vocabLimit, int64_t* inputs,
                int64_t* targets) {
  std::vector<int64_t> window(context + 1);
  file.read(begin, context + 1, window.data(), vocabLimit);
  std::copy(window.begin(), window.end() - 1, inputs);
  std::copy(window.begin() + 1, window.end(), targets);
}

}  // namespace

BatchSampler::BatchSampler(TokenFile file, int64_t batchSize, int64_t context, uint64_t seed,
                           int64_t vocabLimit, BatchShare share, DocumentWindows documents)
    : m_file(std::move(file)),
      m_batchSize(batchSize),
      m_context(context),
      m_vocabLimit(vocabLimit),
      m_share(share.count == 0 ? BatchShare{0, batchSize} : share),
      m_random(seed),
      m_documentShare(documents.share) {
  if (batchSize < 1 || context < 1) throw std::invalid_argument("batch size and context must be positive");
  if (m_share.first < 0 || m_share.count < 1 || m_share.first + m_share.count > batchSize)
    throw std::invalid_argument("rows [" + std::to_string(m_share.first) + ", " +
                                std::to_string(m_share.first + m_share.count) +
                                ") are not within a batch of " + std::to_string(batchSize));
  if (m_file.size() < context + 1)
    throw FileError(m_file.path(), "has " + std::to_string(m_file.size()) +
                                       " tokens, fewer than one window of " + std::to_string(context + 1));
  if (!(documents.share >= 0 && documents.share <= 1))
    throw std::invalid_argument("the share of windows that start at a document must be within [0, 1]");
  int64_t idsChecked = 0;  // the tokens before it were read with the vocabulary limit
  if (documents.share > 0) {
    idsChecked =
        m_file.size() - context;  // the scan reads each window start: all but the last context tokens
    m_file.forEachOccurrence(static_cast<int32_t>(documents.marker), context + 1, vocabLimit,
                             [&](int64_t at) {
                               m_documentStarts.push_back(at);
                               return true;
                             });
    if (m_documentStarts.empty())
      throw FileError(m_file.path(), "has no end-of-text token (id " + std::to_string(documents.marker) +
                                         ") with a window of " + std::to_string(context + 1) +
                                         " tokens after it, so no window can start at a document");
  }
  // Every id is checked before the first step (once per file: the calibration pass's sampler shares the
  // training sampler's; the document scan's reading counts): a random window would meet a bad one hours in,
  // at the same step on every resume.
  m_file.requireIdsBelow(vocabLimit, idsChecked);
}

BatchPrefetcher::BatchPrefetcher(BatchSampler& sampler, bool pin)
    : m_sampler(sampler), m_pin(pin), m_stateAfterReturned(sampler.state()) {
  drawAhead();
}

BatchPrefetcher::~BatchPrefetcher() {
  if (m_ahead.valid()) m_ahead.wait();
  m_sampler.setState(m_stateAfterReturned);
}

void BatchPrefetcher::drawAhead() {
  m_ahead = std::async(std::launch::async, [this] {
    Batch batch = m_sampler.next();
    if (m_pin) batch.inputs = batch.inputs.pin_memory(), batch.targets = batch.targets.pin_memory();
    return Drawn{std::move(batch), m_sampler.state()};
  });
}

Batch BatchPrefetcher::next() {
  Drawn drawn = m_ahead.get();  // rethrows what the sampler threw
  m_stateAfterReturned = drawn.stateAfter;
  drawAhead();
  return std::move(drawn.batch);
}

Batch BatchSampler::next() {
  Batch batch{torch::empty({m_share.count, m_context}, torch::kLong),
              torch::empty({m_share.count, m_context}, torch::kLong)};
  const auto anywhere = static_cast<uint64_t>(m_file.size() - m_context);
  constexpr uint64_t kUnit = uint64_t{1} << 53;
  for (int64_t b = 0; b < m_batchSize; ++b) {
    // Drawn for every row, read for ours. A share of 0 draws one number per row, as before shares existed.
    const bool document =
        m_documentShare >= 1 ||
        (m_documentShare > 0 && static_cast<double>(m_random.below(kUnit)) / kUnit < m_documentShare);
    const int64_t begin = document ? m_documentStarts[m_random.below(m_documentStarts.size())]
                                   : static_cast<int64_t>(m_random.below(anywhere));
    const int64_t row = b - m_share.first;
    if (row < 0 || row >= m_share.count) continue;
    fillWindow(m_file, begin, m_context, m_vocabLimit, batch.inputs[row].data_ptr<int64_t>(),
               batch.targets[row].data_ptr<int64_t>());
  }
  return batch;
}

EvalChunks::EvalChunks(TokenFile file, int64_t context, int64_t vocabLimit, int64_t maxTokens)
    : m_file(std::move(file)), m_context(context), m_vocabLimit(vocabLimit) {
  if (context < 1) throw std::invalid_argument("context must be positive");
  m_count = (m_file.size() - 1) / context;
  if (maxTokens > 0) m_count = std::min(m_count, std::max<int64_t>(1, maxTokens / context));
  if (m_count == 0)
    throw FileError(m_file.path(), "has " + std::to_string(m_file.size()) +
                                       " tokens, fewer than one chunk of " + std::to_string(context + 1));
}

Batch EvalChunks::chunks(int64_t first, int64_t n) const {
  if (first < 0 || n < 1 || first + n > m_count)
    throw std::out_of_range("chunks [" + std::to_string(first) + ", " + std::to_string(first + n) +
                            ") outside 0…" + std::to_string(m_count));
  Batch batch{torch::empty({n, m_context}, torch::kLong), torch::empty({n, m_context}, torch::kLong)};
  for (int64_t i = 0; i < n; ++i)
    fillWindow(m_file, (first + i) * m_context, m_context, m_vocabLimit, batch.inputs[i].data_ptr<int64_t>(),
               batch.targets[i].data_ptr<int64_t>());
  return batch;
}

}  // namespace nf
