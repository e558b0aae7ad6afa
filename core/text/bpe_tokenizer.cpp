#include "text/bpe_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "text/pretokenizer.h"

namespace nf {
namespace {

// A UTF-8 string of byteToUnicode() characters → the bytes it stands for; false if a character is not
// in GPT-2's byte alphabet.
bool unicodeToBytes(const std::string& text, std::string& bytes) {
  static const std::unordered_map<std::string, unsigned char> inverse = [] {
    std::unordered_map<std::string, unsigned char> m;
    for (int b = 0; b < 256; ++b) m[BpeTokenizer::byteToUnicode()[b]] = static_cast<unsigned char>(b);
    return m;
  }();
  bytes.clear();
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    auto it = inverse.find(text.substr(i, length));
    if (it == inverse.end()) return false;
    bytes.push_back(static_cast<char>(it->second));
    i += length;
  }
  return true;
}

std::string bytesToUnicode(const std::string& bytes) {
  std::string text;
  for (unsigned char b : bytes) text += BpeTokenizer::byteToUnicode()[b];
  return text;
}

constexpr std::size_t kMaxCachedPieces = 1 << 20;

// vocab.json's token string → id object as a list (id → string); ids must be 0…n-1.
std::vector<std::string> denseVocabulary(const nlohmann::json& vocab, const std::string& source) {
  if (!vocab.is_object() || vocab.empty())
    throw FileError(source, "must be a non-empty JSON object mapping token strings to ids");
  std::vector<std::string> strings(vocab.size());
  std::vector<bool> seen(vocab.size(), false);
  for (auto& [token, value] : vocab.items()) {
    if (!value.is_number_integer())
      throw FileError(source, "the id of token \"" + token + "\" is not an integer");
    const int64_t id = value.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(vocab.size()))
      throw FileError(source, "token \"" + token + "\" has id " + std::to_string(id) + ", outside 0…" +
                                  std::to_string(vocab.size() - 1) + " (ids must be dense)");
    if (seen[id]) throw FileError(source, "id " + std::to_string(id) + " is used twice");
    seen[id] = true;
    strings[id] = token;
  }
  return strings;
}

}  // namespace

const std::vector<std::string>& BpeTokenizer::byteToUnicode() {
  // GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves, the others are shifted to
  // U+0100 and up, so every token is a printable string (a space becomes 'Ġ').
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    auto utf8 = [](char32_t cp) {
      std::string s;
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      }
      return s;
    };
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = utf8(printable ? b : 256 + shifted++);
    }
    return t;
  }();
  return table;
}

BpeTokenizer::BpeTokenizer(std::vector<std::string> tokenBytes, const std::vector<Merge>& merges,
                           const std::vector<bool>& rawTokens)
    : m_tokenBytes(std::move(tokenBytes)), m_merges(merges) {
  auto raw = [&](int32_t id) { return id < static_cast<int32_t>(rawTokens.size()) && rawTokens[id]; };
  // Raw tokens last: where one has the bytes of a byte-level token, the byte-level one is what BPE makes.
  for (const bool rawPass : {false, true})
    for (int32_t id = 0; id < vocabSize(); ++id)
      if (raw(id) == rawPass && !m_idOfBytes.emplace(m_tokenBytes[id], id).second && !rawPass)
        throw std::invalid_argument("token " + std::to_string(id) + " repeats the bytes of token " +
                                    std::to_string(m_idOfBytes[m_tokenBytes[id]]));
  for (int b = 0; b < 256; ++b) {
    const int32_t id = idOf(std::string(1, static_cast<char>(b)));
    if (id < 0) throw std::invalid_argument("the vocabulary has no token for byte " + std::to_string(b));
    m_byteIds[b] = id;
  }
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const Merge& m = merges[rank];
    // A pair listed twice keeps its last rank, as GPT-2's dict(zip(merges, range(…))) does.
    m_mergeRanks[tokenPairKey(m.left, m.right)] = static_cast<uint32_t>(rank);
  }
  m_eotId = idOf(kEndOfText);
  if (m_eotId >= 0) addLiteral({kEndOfText, m_eotId, true});
  m_vocabFileSize = vocabSize();
}

void BpeTokenizer::addLiteral(Literal literal) {
  m_literalSplittable |= lastSafeCutMaySplit(literal.text);
  auto at = std::find_if(m_literals.begin(), m_literals.end(),
                         [&](const Literal& l) { return l.text.size() < literal.text.size(); });
  m_literals.insert(at, std::move(literal));
}

void BpeTokenizer::readAddedTokens(const std::string& folder) {
  const std::string path = folder + "/added_tokens.json";
  if (!std::filesystem::exists(path)) return;
  const nlohmann::json added = readJsonFile(path);
  if (!added.is_object()) throw FileError(path, "must be a JSON object mapping token texts to ids");
  // Hugging Face's slow tokenizer makes an added token special when the configuration names it so.
  const std::vector<std::string> special = readTokenizerConfig(folder).specialTokens;
  std::vector<std::pair<int64_t, std::string>> past;  // the tokens after the vocabulary
  std::string bytes;
  for (const auto& [text, value] : added.items()) {
    if (text.empty()) throw FileError(path, "holds an empty token");
    if (!value.is_number_integer())
      throw FileError(path, "the id of token \"" + text + "\" is not an integer");
    const int64_t id = value.get<int64_t>();
    const int32_t own = unicodeToBytes(text, bytes) ? idOf(bytes) : -1;  // its id in vocab.json
    if (own >= 0 && id != own)
      throw FileError(path, "token \"" + text + "\" has id " + std::to_string(id) +
                                ", but vocab.json gives it " + std::to_string(own));
    if (own < 0 && id < m_vocabFileSize)
      throw FileError(path,
                      "token \"" + text + "\" has id " + std::to_string(id) +
                          ", inside vocab.json's ids: a token vocab.json lacks takes an id after them (" +
                          std::to_string(m_vocabFileSize) + " and up)");
    if (own < 0) past.emplace_back(id, text);
    m_addedTokens.emplace_back(text, static_cast<int32_t>(id));
  }
  std::sort(past.begin(), past.end());
  for (std::size_t i = 0; i < past.size(); ++i)
    if (past[i].first != m_vocabFileSize + static_cast<int64_t>(i))
      throw FileError(path, "token \"" + past[i].second + "\" has id " + std::to_string(past[i].first) +
                                ": the added tokens after the vocabulary take ids " +
                                std::to_string(m_vocabFileSize) + ", " + std::to_string(m_vocabFileSize + 1) +
                                ", … without a gap or a repeat");
  for (const auto& [id, text] : past) {
    m_tokenBytes.push_back(text);
    m_idOfBytes.emplace(text, static_cast<int32_t>(id));  // a byte-level token of the same bytes stays first
  }
  if (m_eotId < 0) m_eotId = idOf(kEndOfText);
  for (const auto& [text, id] : m_addedTokens)
    if (text != kEndOfText)  // already a literal, or just made one below
      addLiteral({text, id, std::find(special.begin(), special.end(), text) != special.end()});
  if (m_eotId >= m_vocabFileSize) addLiteral({kEndOfText, m_eotId, true});
}

int32_t BpeTokenizer::idOf(std::string_view bytes) const {
  auto it = m_idOfBytes.find(std::string(bytes));
  return it == m_idOfBytes.end() ? -1 : it->second;
}

BpeTokenizer BpeTokenizer::load(const std::string& folder) {
  const std::string vocabPath = folder + "/vocab.json", mergesPath = folder + "/merges.txt";
  if (!std::filesystem::exists(vocabPath))
    throw FileError(vocabPath, "not found (a tokenizer folder needs vocab.json and merges.txt)");
  if (!std::filesystem::exists(mergesPath))
    throw FileError(mergesPath, "not found (a tokenizer folder needs vocab.json and merges.txt)");
  BpeTokenizer tokenizer =
      fromFiles(readTextFile(vocabPath), readTextFile(mergesPath), vocabPath, mergesPath);
  tokenizer.m_source = vocabPath;
  tokenizer.readAddedTokens(folder);
  return tokenizer;
}

BpeTokenizer BpeTokenizer::fromStrings(const std::vector<std::string>& tokenStrings,
                                       const std::vector<MergeStrings>& merges,
                                       const std::string& vocabSource, const std::string& mergesSource,
                                       bool rawFallback, const std::vector<bool>& literal) {
  std::vector<std::string> tokenBytes(tokenStrings.size());
  std::vector<bool> raw(tokenStrings.size(), false);
  std::unordered_map<std::string, int32_t> idOfString;
  for (std::size_t id = 0; id < tokenStrings.size(); ++id) {
    const std::string& token = tokenStrings[id];
    if (id < literal.size() && literal[id]) {
      tokenBytes[id] = token;
      raw[id] = true;
    } else if (!unicodeToBytes(token, tokenBytes[id])) {
      if (!rawFallback)
        throw FileError(vocabSource, "token \"" + token + "\" (id " + std::to_string(id) +
                                         ") has characters outside GPT-2's byte alphabet");
      tokenBytes[id] = token;
      raw[id] = true;
    }
    idOfString[token] = static_cast<int32_t>(id);
  }
  std::vector<Merge> resolved;
  resolved.reserve(merges.size());
  for (const MergeStrings& m : merges) {
    auto find = [&](const std::string& token) {
      auto it = idOfString.find(token);
      if (it == idOfString.end())
        throw FileError(mergesSource, m.where + " (\"" + m.left + " " + m.right + "\"): token \"" + token +
                                          "\" is not in " + vocabSource);
      return it->second;
    };
    resolved.push_back({find(m.left), find(m.right), find(m.left + m.right)});
  }
  try {
    return BpeTokenizer(std::move(tokenBytes), resolved, raw);
  } catch (const std::invalid_argument& e) {
    throw FileError(vocabSource, e.what());
  }
}

BpeTokenizer BpeTokenizer::fromFiles(const std::string& vocabJson, const std::string& mergesTxt,
                                     const std::string& vocabSource, const std::string& mergesSource) {
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(vocabJson);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(vocabSource, std::string("is not valid JSON: ") + e.what());
  }
  const std::vector<std::string> strings = denseVocabulary(vocab, vocabSource);

  std::vector<MergeStrings> merges;
  std::size_t lineStart = 0;
  for (int lineNumber = 1; lineStart < mergesTxt.size(); ++lineNumber) {
    std::size_t lineEnd = mergesTxt.find('\n', lineStart);
    if (lineEnd == std::string::npos) lineEnd = mergesTxt.size();
    std::string line = mergesTxt.substr(lineStart, lineEnd - lineStart);
    lineStart = lineEnd + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = "line " + std::to_string(lineNumber);
    // Old Mac line endings would make the whole file one "#version" line: zero merges, silently.
    if (line.find('\r') != std::string::npos)
      throw FileError(mergesSource, where +
                                        " holds a carriage return: merges.txt must have one merge per line, "
                                        "ended by \\n (or \\r\\n)");
    if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0)) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      throw FileError(mergesSource,
                      where + " (\"" + line + "\"): expected two tokens separated by one space");
    merges.push_back({line.substr(0, space), line.substr(space + 1), where});
  }
  return fromStrings(strings, merges, vocabSource, mergesSource, /*rawFallback=*/false);
}

void BpeTokenizer::save(const std::string& folder) const {
  std::filesystem::create_directories(folder);
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (int32_t id = 0; id < m_vocabFileSize; ++id) vocab[bytesToUnicode(m_tokenBytes[id])] = id;
  std::string merges = "#version: 0.2\n";
  for (const Merge& m : m_merges)
    merges += bytesToUnicode(m_tokenBytes[m.left]) + " " + bytesToUnicode(m_tokenBytes[m.right]) + "\n";
  writeFileAtomic(folder + "/vocab.json", vocab.dump(0) + "\n");
  writeFileAtomic(folder + "/merges.txt", merges);
  // One tokenizer in the folder: an added_tokens.json of another would be read with this vocabulary.
  if (m_addedTokens.empty()) {
    std::filesystem::remove(folder + "/added_tokens.json");
    return;
  }
  nlohmann::ordered_json added = nlohmann::ordered_json::object();
  for (const auto& [text, id] : m_addedTokens) added[text] = id;
  writeFileAtomic(folder + "/added_tokens.json", added.dump() + "\n");
}

std::size_t BpeTokenizer::streamCut(std::string_view text) const {
  return m_literalSplittable ? 0 : lastSafeCut(text);
}

void BpeTokenizer::encodeWord(std::string_view piece, std::vector<int32_t>& out) const {
  std::lock_guard<std::mutex> lock(*m_cacheMutex);
  if (m_cache.size() > kMaxCachedPieces) m_cache.clear();
  encodePiece(piece, out);
}

void BpeTokenizer::encodeAppend(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const {
  std::lock_guard<std::mutex> lock(*m_cacheMutex);
  if (m_cache.size() > kMaxCachedPieces) m_cache.clear();
  // Each literal's next place in the text (npos: none), searched again only once the encoding has passed
  // it: one pass over the text per literal. The leftmost wins, and the first (longest) of those there.
  constexpr std::size_t kNone = std::string_view::npos;
  std::vector<std::size_t> next(m_literals.size());
  for (std::size_t i = 0; i < m_literals.size(); ++i)
    next[i] = allowSpecial || !m_literals[i].special ? text.find(m_literals[i].text) : kNone;
  for (std::size_t pos = 0;;) {
    std::size_t at = kNone, found = 0;
    for (std::size_t i = 0; i < m_literals.size(); ++i) {
      if (next[i] != kNone && next[i] < pos) next[i] = text.find(m_literals[i].text, pos);
      if (next[i] < at) {
        at = next[i];
        found = i;
      }
    }
    Pretokenizer pieces(text.substr(pos, at == kNone ? kNone : at - pos));
    std::string_view piece;
    while (pieces.next(piece)) encodePiece(piece, out);
    if (at == kNone) return;
    out.push_back(m_literals[found].id);
    pos = at + m_literals[found].text.size();
  }
}

void BpeTokenizer::encodePiece(std::string_view piece, std::vector<int32_t>& out) const {
  auto cached = m_cache.find(std::string(piece));
  if (cached != m_cache.end()) {
    out.insert(out.end(), cached->second.begin(), cached->second.end());
    return;
  }
  std::vector<int32_t> ids(piece.size());
  for (std::size_t i = 0; i < piece.size(); ++i) ids[i] = m_byteIds[static_cast<unsigned char>(piece[i])];
  // GPT-2's rule: merge every occurrence (left to right) of the adjacent pair with the lowest rank,
  // then look again, until no adjacent pair has a rank.
  std::vector<int32_t> merged;
  while (ids.size() > 1) {
    uint32_t bestRank = UINT32_MAX;
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = m_mergeRanks.find(tokenPairKey(ids[i], ids[i + 1]));
      if (it != m_mergeRanks.end() && it->second < bestRank) bestRank = it->second;
    }
    if (bestRank == UINT32_MAX) break;
    const Merge& m = m_merges[bestRank];
    merged.clear();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (i + 1 < ids.size() && ids[i] == m.left && ids[i + 1] == m.right) {
        merged.push_back(m.result);
        ++i;
      } else {
        merged.push_back(ids[i]);
      }
    }
    ids.swap(merged);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  m_cache.emplace(std::string(piece), std::move(ids));
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocabSize())
      throw std::out_of_range("token id " + std::to_string(id) + " is out of range for a vocabulary of " +
                              std::to_string(vocabSize()));
    text += m_tokenBytes[id];
  }
  return text;
}

}  // namespace nf
