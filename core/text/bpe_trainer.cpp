#include "text/bpe_trainer.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <unordered_set>

#include "text/pretokenizer.h"
#include "text/text_source.h"

namespace nf {
namespace {

struct Candidate {
  int64_t count;
  int32_t left, right;
  // Highest count first; among equal counts the smallest (left, right).
  bool operator<(const Candidate& other) const {
    if (count != other.count) return count < other.count;
    return std::tie(left, right) > std::tie(other.left, other.right);
  }
};

// The 256 byte tokens in GPT-2's order (bytes_to_unicode's key order: printable bytes, then the rest).
std::vector<std::string> byteTokensInGpt2Order() {
  std::vector<int> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = b;
  auto codePoint = [](int b) {
    const auto& s = BpeTokenizer::byteToUnicode()[b];
    const auto c0 = static_cast<unsigned char>(s[0]);
    return s.size() == 1 ? c0 : ((c0 & 0x1F) << 6) | (static_cast<unsigned char>(s[1]) & 0x3F);
  };
  std::sort(bytes.begin(), bytes.end(), [&](int a, int b) { return codePoint(a) < codePoint(b); });
  std::vector<std::string> tokens;
  for (int b : bytes) tokens.emplace_back(1, static_cast<char>(b));
  return tokens;
}

}  // namespace

BpeTrainer::BpeTrainer(BpeTrainingOptions options) : m_options(options) {
  if (options.vocabSize < 257)
    throw std::invalid_argument("the vocabulary size must be at least 257 (256 bytes + <|endoftext|>), got " +
                                std::to_string(options.vocabSize));
}

void BpeTrainer::addText(std::string_view text) {
  const std::string_view marker = kEndOfText;
  while (true) {
    const std::size_t cut = text.find(marker);
    Pretokenizer pieces(text.substr(0, cut));
    std::string_view piece;
    while (pieces.next(piece)) ++m_pieceCounts[std::string(piece)];
    if (cut == std::string_view::npos) break;
    text.remove_prefix(cut + marker.size());
  }
}

void BpeTrainer::addFile(const std::string& path, const ProgressFn& progress) {
  streamDocuments(path, {[this](std::string_view text) { addText(text); }, [] {}}, progress);
}

BpeTokenizer BpeTrainer::train(const ProgressFn& progress) const {
  std::vector<std::string> tokens = byteTokensInGpt2Order();
  std::unordered_map<std::string, int32_t> idOf;
  int32_t byteId[256];
  for (int32_t id = 0; id < 256; ++id) {
    idOf[tokens[id]] = id;
    byteId[static_cast<unsigned char>(tokens[id][0])] = id;
  }

  // Distinct pieces as id sequences, in a fixed order so training does not depend on hash order.
  std::vector<std::pair<std::string, int64_t>> pieces(m_pieceCounts.begin(), m_pieceCounts.end());
  std::sort(pieces.begin(), pieces.end());
  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;
  std::unordered_map<uint64_t, int64_t> pairCount;
  std::unordered_map<uint64_t, std::vector<int32_t>> wordsWithPair;
  for (const auto& [piece, count] : pieces) {
    if (piece.size() < 2) continue;
    std::vector<int32_t> ids;
    for (unsigned char b : piece) ids.push_back(byteId[b]);
    const auto w = static_cast<int32_t>(words.size());
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
      const uint64_t key = tokenPairKey(ids[i], ids[i + 1]);
      pairCount[key] += count;
      wordsWithPair[key].push_back(w);
    }
    words.push_back(std::move(ids));
    counts.push_back(count);
  }
  std::priority_queue<Candidate> queue;
  for (const auto& [key, count] : pairCount)
    queue.push({count, static_cast<int32_t>(key >> 32), static_cast<int32_t>(key & 0xFFFFFFFF)});

  std::vector<BpeTokenizer::Merge> merges;
  const int64_t wanted = m_options.vocabSize - 257;
  while (static_cast<int32_t>(tokens.size()) + 1 < m_options.vocabSize) {
    // Entries go stale when a count changes (a fresh one is pushed then); skip them.
    while (!queue.empty()) {
      const Candidate& top = queue.top();
      auto it = pairCount.find(tokenPairKey(top.left, top.right));
      if (it != pairCount.end() && it->second == top.count && top.count > 0) break;
      queue.pop();
    }
    if (queue.empty() || queue.top().count < m_options.minFrequency) break;
    const Candidate best = queue.top();
    queue.pop();

    const std::string merged = tokens[best.left] + tokens[best.right];
    auto [known, isNew] = idOf.emplace(merged, static_cast<int32_t>(tokens.size()));
    if (isNew) tokens.push_back(merged);
    const int32_t result = known->second;
    merges.push_back({best.left, best.right, result});

    const uint64_t bestKey = tokenPairKey(best.left, best.right);
    std::vector<int32_t> affected = std::move(wordsWithPair[bestKey]);
    wordsWithPair.erase(bestKey);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    std::unordered_set<uint64_t> changed;
    std::vector<int32_t> next;
    for (const int32_t w : affected) {
      std::vector<int32_t>& ids = words[w];
      next.clear();
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i + 1 < ids.size() && ids[i] == best.left && ids[i + 1] == best.right) {
          next.push_back(result);
          ++i;
        } else {
          next.push_back(ids[i]);
        }
      }
      if (next.size() == ids.size()) continue;  // stale entry: the pair left this word earlier
      for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
        const uint64_t key = tokenPairKey(ids[i], ids[i + 1]);
        pairCount[key] -= counts[w];
        changed.insert(key);
      }
      for (std::size_t i = 0; i + 1 < next.size(); ++i) {
        const uint64_t key = tokenPairKey(next[i], next[i + 1]);
        pairCount[key] += counts[w];
        wordsWithPair[key].push_back(w);
        changed.insert(key);
      }
      ids.swap(next);
    }
    for (const uint64_t key : changed) {
      auto it = pairCount.find(key);
      if (it->second > 0)
        queue.push({it->second, static_cast<int32_t>(key >> 32), static_cast<int32_t>(key & 0xFFFFFFFF)});
      else
        pairCount.erase(it);
    }
    if (progress && merges.size() % 64 == 0)
      progress({"learn merges", static_cast<int64_t>(merges.size()), wanted, "merges", false});
  }
  tokens.push_back(kEndOfText);
  if (progress) progress({"learn merges", static_cast<int64_t>(merges.size()), wanted, "merges", true});
  return BpeTokenizer(std::move(tokens), merges);
}

}  // namespace nf
