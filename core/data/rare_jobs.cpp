#include "data/rare_jobs.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "io/atomic_file.h"

namespace nf {

std::string RareJobs::describe() const {
  std::ostringstream text;
  text << "rare jobs (seed " << seed << "): bigram filler with backcopy (offsets 1-" << offsets
       << (separateOffsets ? ", each" : ", together")
       << "), first-token and induction events, each with chance " << chance << " at a position";
  if (betweenSentences > 0)
    text << "; " << betweenSentences << " tokens of it on average after each sentence";
  return text.str();
}

RareJobsSource::RareJobsSource(const TokenFile& text, const RareJobs& jobs, const ProgressFn& progress)
    : m_jobs(jobs) {
  const TokenFileMeta& meta = text.meta();
  if (meta.vocabSize <= 0 || meta.eotTokenId < 0)
    throw FileError(text.path(),
                    "has no sidecar naming its vocabulary size and end-of-text token: the rare "
                    "jobs' triggers are ids it never uses, and its documents end at end-of-text");
  if (jobs.offsets < 1) throw std::invalid_argument("rare jobs need at least one backcopy offset");
  const auto vocab = meta.vocabSize;
  const int32_t eot = static_cast<int32_t>(meta.eotTokenId), bos = static_cast<int32_t>(meta.bosTokenId);
  std::unordered_map<uint64_t, uint64_t> pairs;
  std::vector<bool> used(static_cast<std::size_t>(vocab), false);
  int32_t previous = -1;  // -1 at a document's start
  int64_t length = 0;
  text.forEachBlock(0, text.size(), vocab, [&](int64_t begin, const int32_t* block, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t token = block[i];
      if (token == eot || token == bos) {
        if (token == eot && length > 0) m_lengths.push_back(length);
        if (token == eot) length = 0;
        previous = -1;
        continue;
      }
      used[static_cast<std::size_t>(token)] = true;
      if (previous < 0)
        m_firsts.push_back(token);
      else
        ++pairs[static_cast<uint64_t>(previous) * static_cast<uint64_t>(vocab) +
                static_cast<uint64_t>(token)];
      previous = token;
      ++length;
    }
    if (progress)
      progress({"rare jobs: the text's bigrams", begin + n, text.size(), "tokens", begin + n == text.size()});
    return true;
  });
  if (length > 0) m_lengths.push_back(length);
  if (pairs.empty())
    throw FileError(text.path(), "holds no two consecutive tokens of one document to draw filler from");
  // In id order, so that the same text gives the same documents whatever the hash map's order.
  std::vector<std::pair<uint64_t, uint64_t>> sorted(pairs.begin(), pairs.end());
  std::sort(sorted.begin(), sorted.end());
  const uint64_t width = static_cast<uint64_t>(vocab);
  m_rowStart.assign(static_cast<std::size_t>(vocab) + 1, 0);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const auto [code, count] = sorted[i];
    ++m_rowStart[code / width + 1];
    m_next.push_back(static_cast<int32_t>(code % width));
    const bool rowStarts = i == 0 || sorted[i - 1].first / width != code / width;
    m_cumulative.push_back((rowStarts ? 0 : m_cumulative.back()) + count);
  }
  for (std::size_t a = 1; a < m_rowStart.size(); ++a) m_rowStart[a] += m_rowStart[a - 1];
  std::vector<int32_t> unused;
  for (int32_t id = 0; id < vocab && static_cast<int>(unused.size()) < jobs.offsets + 2; ++id)
    if (!used[static_cast<std::size_t>(id)] && id != eot && id != bos) unused.push_back(id);
  if (static_cast<int>(unused.size()) < jobs.offsets + 2)
    throw FileError(text.path(), "leaves " + std::to_string(unused.size()) + " of its " +
                                     std::to_string(vocab) + " ids unused, and the rare jobs need " +
                                     std::to_string(jobs.offsets + 2) +
                                     " as triggers (ids the text never uses)");
  m_backcopy.assign(unused.begin(), unused.begin() + jobs.offsets);
  m_first = unused[static_cast<std::size_t>(jobs.offsets)];
  m_induction = unused[static_cast<std::size_t>(jobs.offsets) + 1];
}

bool RareJobsSource::isTrigger(int32_t token) const {
  return token == m_first || token == m_induction ||
         std::find(m_backcopy.begin(), m_backcopy.end(), token) != m_backcopy.end();
}

int32_t RareJobsSource::follow(int32_t token, Random& random) const {
  const int64_t begin = m_rowStart[static_cast<std::size_t>(token)],
                end = m_rowStart[static_cast<std::size_t>(token) + 1];
  if (begin == end) return random.pick(m_firsts);  // a token never followed in a document: start afresh
  const uint64_t drawn = random.below(m_cumulative[static_cast<std::size_t>(end) - 1]);
  const auto at = std::upper_bound(m_cumulative.begin() + begin, m_cumulative.begin() + end, drawn);
  return m_next[static_cast<std::size_t>(at - m_cumulative.begin())];
}

int64_t RareJobsSource::drawLength(Random& random, int64_t atLeast) const {
  return std::max(atLeast, random.pick(m_lengths));
}

std::vector<int32_t> RareJobsSource::document(int64_t length, Random& random) const {
  const std::size_t n = static_cast<std::size_t>(length);
  std::vector<int32_t> out{random.pick(m_firsts)};
  if (n > 1) extend(out, n - 1, random);
  out.resize(n);
  return out;
}

void RareJobsSource::extend(std::vector<int32_t>& out, std::size_t count, Random& random) const {
  const std::size_t n = out.size() + count, offsets = static_cast<std::size_t>(m_jobs.offsets);
  const int backcopyKinds = m_jobs.separateOffsets ? m_jobs.offsets : 1, kinds = backcopyKinds + 2;
  while (out.size() < n) {
    const std::size_t size = out.size();
    if (size >= offsets + 2 && random.uniform() < m_jobs.chance * kinds) {
      const int kind = static_cast<int>(random.below(static_cast<uint64_t>(kinds)));
      if (kind < backcopyKinds) {
        const std::size_t k = m_jobs.separateOffsets ? static_cast<std::size_t>(kind) : random.below(offsets);
        const int32_t copied = out[size - k - 1];
        out.push_back(m_backcopy[k]);
        out.push_back(copied);
        continue;
      }
      if (kind == backcopyKinds) {
        const int32_t first = out[0];
        out.push_back(m_first);
        out.push_back(first);
        continue;
      }
      const std::size_t a = random.below(size - 1);  // a token with a successor, neither of them a trigger
      if (!isTrigger(out[a]) && !isTrigger(out[a + 1])) {
        std::size_t last = a;
        for (std::size_t i = a + 1; i + 1 < size; ++i)
          if (out[i] == out[a]) last = i;
        const int32_t key = out[a], value = out[last + 1];
        out.insert(out.end(), {m_induction, key, value});
        continue;
      }
    }
    out.push_back(follow(out.back(), random));
  }
}

namespace {

// A span followed by its exact copy: what `tokenize --random-repeats` writes.
bool isExactRepeat(const std::vector<int32_t>& doc) {
  const std::size_t half = doc.size() / 2;
  return half > 0 && doc.size() % 2 == 0 && std::equal(doc.begin(), doc.begin() + half, doc.begin() + half);
}

}  // namespace

RareJobsStats writeRareJobs(const TokenFile& text, const RareJobsSource& source, const RareJobs& jobs,
                            const std::string& out, const TokenFile* after, int64_t documents,
                            int64_t minLength, const ProgressFn& progress) {
  TokenFileMeta meta = after ? after->meta() : text.meta();
  meta.tokens = -1;
  const int32_t eot = static_cast<int32_t>(text.meta().eotTokenId),
                bos = static_cast<int32_t>(text.meta().bosTokenId);
  if (after && after->meta().eotTokenId != text.meta().eotTokenId)
    throw FileError(after->path(), "ends its documents with id " + std::to_string(after->meta().eotTokenId) +
                                       ", the text " + text.path() + " with " + std::to_string(eot) +
                                       ": made by another tokenizer?");
  // Two tokenizers trained alike share their end-of-text id (the last): the fingerprints tell them apart,
  // and the output names `after`'s, though its filler and trigger ids are the text's.
  if (after) {
    const std::string &ours = text.meta().tokenizerFingerprint, &theirs = after->meta().tokenizerFingerprint;
    if (!ours.empty() && !theirs.empty() && ours != theirs)
      throw FileError(after->path(), "was made by another tokenizer than the text " + text.path() +
                                         " (fingerprints " + theirs + " and " + ours + ")");
  }
  if (jobs.betweenSentences > 0 && (!after || std::find(jobs.sentenceEnds.begin(), jobs.sentenceEnds.end(),
                                                        true) == jobs.sentenceEnds.end()))
    throw std::invalid_argument(
        "filler between sentences needs a text to mix into and the ids ending a sentence");
  if (!after) meta.sources = {text.path() + "'s bigrams"};
  meta.sources.push_back(jobs.describe());
  TokenFileWriter writer(out, meta);
  Random random(jobs.seed);
  RareJobsStats stats;
  auto addDocument = [&] {
    const std::vector<int32_t> doc = source.document(source.drawLength(random, minLength), random);
    if (bos >= 0) writer.append(&bos, 1);
    writer.append(doc.data(), doc.size());
    writer.append(&eot, 1);
    ++stats.rareDocuments;
  };
  // A document of `after` with a filler run after each sentence but its last.
  std::vector<int32_t> document, diluted;
  auto writeDiluted = [&](bool ended) {
    std::size_t start = 0;
    if (bos >= 0 && !document.empty() && document.front() == bos) start = 1;
    const std::vector<int32_t> body(document.begin() + static_cast<std::ptrdiff_t>(start), document.end());
    diluted.assign(document.begin(), document.begin() + static_cast<std::ptrdiff_t>(start));
    if (isExactRepeat(body)) {
      diluted.insert(diluted.end(), body.begin(), body.end());
    } else {
      std::vector<int32_t> grown;
      for (std::size_t i = 0; i < body.size(); ++i) {
        grown.push_back(body[i]);
        const auto id = static_cast<std::size_t>(body[i]);
        if (i + 1 < body.size() && id < jobs.sentenceEnds.size() && jobs.sentenceEnds[id]) {
          const auto mean = static_cast<uint64_t>(jobs.betweenSentences);
          source.extend(grown, std::max<std::size_t>(1, mean / 2 + random.below(mean + 1)), random);
          ++stats.fillerRuns;
        }
      }
      diluted.insert(diluted.end(), grown.begin(), grown.end());
    }
    if (ended) diluted.push_back(eot);
    writer.append(diluted.data(), diluted.size());
    if (ended) ++stats.documents;
    document.clear();
  };
  if (after && jobs.betweenSentences > 0) {
    after->forEachBlock(0, after->size(), text.meta().vocabSize,
                        [&](int64_t begin, const int32_t* block, int64_t n) {
                          for (int64_t i = 0; i < n; ++i)
                            if (block[i] == eot)
                              writeDiluted(true);
                            else
                              document.push_back(block[i]);
                          if (progress)
                            progress({"rare jobs between sentences", begin + n, after->size(), "tokens",
                                      begin + n == after->size()});
                          return true;
                        });
    if (!document.empty()) writeDiluted(false);
  } else if (after) {
    int64_t sinceEnd = 0;  // tokens of the current document
    after->forEachBlock(
        0, after->size(), text.meta().vocabSize, [&](int64_t begin, const int32_t* block, int64_t n) {
          int64_t written = 0;
          for (int64_t i = 0; i < n; ++i) {
            if (block[i] != eot) {
              ++sinceEnd;
              continue;
            }
            writer.append(block + written, static_cast<std::size_t>(i + 1 - written));
            written = i + 1;
            ++stats.documents;
            if (sinceEnd > 0) addDocument();
            sinceEnd = 0;
          }
          writer.append(block + written, static_cast<std::size_t>(n - written));
          if (progress)
            progress({"rare jobs", begin + n, after->size(), "tokens", begin + n == after->size()});
          return true;
        });
  } else {
    writer.append(&eot, 1);
    for (int64_t i = 0; i < documents; ++i) {
      addDocument();
      if (progress) progress({"rare jobs", i + 1, documents, "documents", i + 1 == documents});
    }
  }
  stats.documents += stats.rareDocuments;
  stats.tokens = writer.tokensWritten();
  writer.setDocuments(stats.documents);
  writer.finish();
  return stats;
}

}  // namespace nf
