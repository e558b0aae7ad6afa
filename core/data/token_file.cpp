#include "data/token_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "io/file_format.h"
#include "io/json_read.h"
#include "io/mapped_file.h"

namespace nf {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "token files are little-endian");

int bytesPerToken(TokenDType dtype) { return dtype == TokenDType::U16 ? 2 : 4; }
constexpr int64_t kUint16Ids = 65536;  // the ids a uint16 file holds: 0 … 65535
const char* dtypeName(TokenDType dtype) { return dtype == TokenDType::U16 ? "uint16" : "uint32"; }

TokenFileMeta readSidecar(const std::string& path) {
  const nlohmann::json j = readFormatFile(path);
  // Sidecars written before formats carried a version are version 1.
  checkFileFormat(j, kTokenSidecarFormat, path, WhenUnmarked::IsVersion1);
  TokenFileMeta meta;
  try {
    const std::string dtype = j.at("dtype").get<std::string>();
    if (dtype == "uint16")
      meta.dtype = TokenDType::U16;
    else if (dtype == "uint32")
      meta.dtype = TokenDType::U32;
    else
      throw FileError(path, "dtype '" + dtype + "' is not supported (uint16 or uint32)");
    // Every number checked (JsonIn): a count of 1e40 is refused, never converted.
    meta.vocabSize = meta.eotTokenId = meta.bosTokenId = meta.tokens = meta.documents = -1;
    readJson(j, "token file sidecar", [&](const JsonIn& in) {
      // Every key this format has had: a misspelt "tokenizer_fingerprint" or "eot_token_id" would switch off
      // the checks of another tokenizer's data unsaid, a null "tokens" the check of a truncated file.
      in.requireKnown({"format", "version", "dtype", "vocab_size", "eot_token_id", "bos_token_id", "tokens",
                       "documents", "tokenizer", "tokenizer_fingerprint", "sources"});
      in["vocab_size"].readIfGiven(meta.vocabSize);
      in["eot_token_id"].readIfGiven(meta.eotTokenId);
      in["bos_token_id"].readIfGiven(meta.bosTokenId);
      in["tokens"].readIfGiven(meta.tokens);
      in["documents"].readIfGiven(meta.documents);
      in["tokenizer"].readIfGiven(meta.tokenizer);
      in["tokenizer_fingerprint"].readIfGiven(meta.tokenizerFingerprint);
      if (in["sources"].present())
        meta.sources = in["sources"].list([](const JsonIn& x) { return x.text(); });
      return 0;
    });
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("malformed: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw FileError(path, std::string("malformed: ") + e.what());
  }
  // A uint16 file cannot hold a larger vocabulary's ids: they were cut to 16 bits when it was written
  // (nanoGPT's prepare.py, made for GPT-2, writes uint16 whatever the tokenizer).
  if (meta.dtype == TokenDType::U16)
    for (const auto& [name, value, most] : {std::tuple{"vocab_size", meta.vocabSize, kUint16Ids},
                                            std::tuple{"eot_token_id", meta.eotTokenId, kUint16Ids - 1},
                                            std::tuple{"bos_token_id", meta.bosTokenId, kUint16Ids - 1}})
      if (value > most)
        throw FileError(path, std::string("says dtype uint16, which holds ids below 65536, and ") + name +
                                  " " + std::to_string(value) +
                                  ": its ids were cut to 16 bits; write them as uint32 (normfree-cli "
                                  "tokenize does)");
  return meta;
}

template <typename Out>
void readTokens(const TokenFile& file, const std::byte* data, int64_t begin, int64_t count, Out* out,
                int64_t vocabLimit) {
  if (begin < 0 || count < 0 || begin + count > file.size())
    throw FileError(file.path(), "read of tokens [" + std::to_string(begin) + ", " +
                                     std::to_string(begin + count) + ") is outside the file's " +
                                     std::to_string(file.size()) + " tokens");
  // uint16 ids for a vocabulary beyond 65536 were cut to 16 bits unless the file was made for a smaller one
  // (its sidecar's vocab_size says so).
  if (file.meta().dtype == TokenDType::U16 && file.meta().vocabSize < 0 && vocabLimit > kUint16Ids &&
      vocabLimit < std::numeric_limits<int64_t>::max())
    throw FileError(
        file.path(),
        std::string(file.dtypeStated() ? "is uint16 token ids (its sidecar says)"
                                       : "has no sidecar, so it is read as uint16 token ids") +
            ", which cannot reach most of the model's vocabulary of " + std::to_string(vocabLimit) +
            " ids: write " + tokenFileSidecarPath(file.path()) +
            " with \"dtype\": \"uint32\" if its ids are 32-bit (normfree-cli tokenize writes one), "
            "or give it the \"vocab_size\" it was made for if every id is below 65536");
  // Ids are checked as stored (unsigned), before the narrowing to Out: a uint32 id of 2^31 or more would
  // turn negative in an int32 and slip under the limit.
  const auto copyChecked = [&](const auto* stored) {
    uint32_t maxId = 0;
    for (int64_t i = 0; i < count; ++i) maxId = std::max<uint32_t>(maxId, stored[i]);
    if (vocabLimit > 0 && maxId >= static_cast<uint64_t>(vocabLimit)) {
      for (int64_t i = 0; i < count; ++i)
        if (stored[i] >= static_cast<uint64_t>(vocabLimit))
          throw FileError(file.path(), "token " + std::to_string(begin + i) + " has id " +
                                           std::to_string(stored[i]) +
                                           ", outside the model's vocabulary of " +
                                           std::to_string(vocabLimit) + " (wrong tokenizer or dtype?)");
    }
    std::copy(stored, stored + count, out);
  };
  if (file.meta().dtype == TokenDType::U16)
    copyChecked(reinterpret_cast<const uint16_t*>(data) + begin);
  else
    copyChecked(reinterpret_cast<const uint32_t*>(data) + begin);
}

// A file without a sidecar is read as uint16 (nanoGPT's convention). Ids saved as 32- or 64-bit integers
// (numpy's default) would read as valid ids with zeros between them — a plausible, wrong loss — so a start
// whose every second 16-bit word is 0 while the others are not is refused.
void requireSixteenBitIds(const MappedFile& file, const std::string& path) {
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(file.size()) / 2, 4096) / 2 * 2;
  if (n < 16) return;
  const auto* words = reinterpret_cast<const uint16_t*>(file.data());
  bool oddZero = true, evenNonzero = false;
  for (int64_t i = 0; i < n && oddZero; i += 2) {
    oddZero = words[i + 1] == 0;
    evenNonzero = evenNonzero || words[i] != 0;
  }
  if (oddZero && evenNonzero)
    throw FileError(path,
                    "has no sidecar, so it is read as uint16 token ids, but every second 16-bit word of its "
                    "start is 0: it looks like 32- or 64-bit integers. Save the ids as uint16 (numpy: "
                    "ids.astype(np.uint16).tofile(…)), or write " +
                        tokenFileSidecarPath(path) + " with \"dtype\": \"uint32\" for 32-bit ids");
}

}  // namespace

std::string tokenFileSidecarPath(const std::string& binPath) { return binPath + ".json"; }

TokenDType tokenDTypeFor(int64_t vocabSize) {
  return vocabSize <= kUint16Ids ? TokenDType::U16 : TokenDType::U32;
}

TokenFile TokenFile::open(const std::string& path) {
  TokenFile file;
  file.m_path = path;
  const std::string sidecar = tokenFileSidecarPath(path);
  const bool hasSidecar = std::filesystem::exists(sidecar);
  if (hasSidecar) file.m_meta = readSidecar(sidecar);
  file.m_dtypeStated = hasSidecar;
  file.m_file = std::make_shared<const MappedFile>(MappedFile::open(path));
  const int width = bytesPerToken(file.m_meta.dtype);
  const auto bytes = static_cast<int64_t>(file.m_file->size());
  if (bytes % width != 0)
    throw FileError(path, std::to_string(bytes) + " bytes is not a whole number of " +
                              dtypeName(file.m_meta.dtype) + " tokens (truncated, or the wrong dtype?)");
  file.m_size = bytes / width;
  if (!hasSidecar) requireSixteenBitIds(*file.m_file, path);
  if (file.m_meta.tokens >= 0 && file.m_meta.tokens != file.m_size)
    throw FileError(path, "holds " + std::to_string(file.m_size) + " tokens but " + sidecar + " says " +
                              std::to_string(file.m_meta.tokens) + " (truncated or overwritten?)");
  if (file.m_size == 0) throw FileError(path, "holds no tokens");
  return file;
}

uint32_t TokenFile::at(int64_t index) const {
  int64_t id;
  read(index, 1, &id, 0);
  return static_cast<uint32_t>(id);
}

void TokenFile::read(int64_t begin, int64_t count, int64_t* out, int64_t vocabLimit) const {
  readTokens(*this, m_file->data(), begin, count, out, vocabLimit);
}

void TokenFile::read(int64_t begin, int64_t count, int32_t* out, int64_t vocabLimit) const {
  readTokens(*this, m_file->data(), begin, count, out, vocabLimit);
}

void TokenFile::forEachBlock(int64_t first, int64_t end, int64_t vocabLimit,
                             const std::function<bool(int64_t, const int32_t*, int64_t)>& visit) const {
  constexpr int64_t kBlock = 1 << 20;
  first = std::clamp<int64_t>(first, 0, m_size);
  end = std::clamp<int64_t>(end, first, m_size);
  std::vector<int32_t> block(static_cast<std::size_t>(std::min(kBlock, end - first)));
  for (int64_t begin = first; begin < end; begin += kBlock) {
    const int64_t count = std::min(kBlock, end - begin);
    read(begin, count, block.data(), vocabLimit);
    if (!visit(begin, block.data(), count)) return;
  }
}

std::vector<bool> TokenFile::occurringTokens(int64_t vocabLimit, const ProgressFn& progress) const {
  std::vector<bool> seen(static_cast<std::size_t>(vocabLimit), false);
  forEachBlock(0, m_size, vocabLimit, [&](int64_t begin, const int32_t* ids, int64_t count) {
    for (int64_t i = 0; i < count; ++i) seen[ids[i]] = true;
    if (progress) progress({"scan " + m_path, begin + count, m_size, "tokens", begin + count == m_size});
    return true;
  });
  return seen;
}

void TokenFile::requireIdsBelow(int64_t vocabLimit, int64_t checkedBefore) const {
  const int64_t checked = m_idsCheckedBelow->load();
  if (vocabLimit <= 0 || (checked > 0 && checked <= vocabLimit)) return;
  forEachBlock(checkedBefore, m_size, vocabLimit, [](int64_t, const int32_t*, int64_t) { return true; });
  m_idsCheckedBelow->store(vocabLimit);
}

void TokenFile::forEachOccurrence(int32_t token, int64_t window, int64_t vocabLimit,
                                  const std::function<bool(int64_t)>& visit) const {
  const int64_t starts = m_size - window + 1;  // the starts with a whole window after them
  forEachBlock(0, starts, vocabLimit, [&](int64_t begin, const int32_t* ids, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
      if (ids[i] == token && !visit(begin + i)) return false;
    return true;
  });
}

namespace {
// The folder a file goes into, created first so "--out new/dir/train.bin" just works.
const std::string& withParentFolder(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  return path;
}
}  // namespace

TokenFileWriter::TokenFileWriter(const std::string& path, TokenFileMeta meta)
    : m_path(path), m_meta(std::move(meta)), m_bin(withParentFolder(path)) {}

void TokenFileWriter::append(const int32_t* ids, std::size_t count) {
  const int width = bytesPerToken(m_meta.dtype);
  const int64_t capacity = width == 2 ? kUint16Ids : int64_t{1} << 32;
  const int64_t limit = m_meta.vocabSize > 0 ? std::min(m_meta.vocabSize, capacity) : capacity;
  const std::size_t start = m_buffer.size();
  m_buffer.resize(start + count * width);
  for (std::size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= limit)
      throw FileError(m_path,
                      "token id " + std::to_string(ids[i]) + " does not fit a " + dtypeName(m_meta.dtype) +
                          " file " +
                          (limit < m_meta.vocabSize ? "(its ids are below " + std::to_string(limit) + ")"
                                                    : "for a vocabulary of " + std::to_string(limit)));
    if (width == 2) {
      const auto v = static_cast<uint16_t>(ids[i]);
      std::memcpy(&m_buffer[start + i * 2], &v, 2);
    } else {
      const auto v = static_cast<uint32_t>(ids[i]);
      std::memcpy(&m_buffer[start + i * 4], &v, 4);
    }
  }
  m_count += static_cast<int64_t>(count);
  if (m_buffer.size() >= (1u << 20)) flush();
}

void TokenFileWriter::flush() {
  m_bin.write(m_buffer.data(), m_buffer.size());
  m_buffer.clear();
}

void TokenFileWriter::finish() {
  flush();
  m_meta.tokens = m_count;
  nlohmann::json j{{"format", kTokenSidecarFormat.name}, {"version", kTokenSidecarFormat.version},
                   {"dtype", dtypeName(m_meta.dtype)},   {"vocab_size", m_meta.vocabSize},
                   {"eot_token_id", m_meta.eotTokenId},  {"tokens", m_meta.tokens},
                   {"documents", m_meta.documents},      {"tokenizer", m_meta.tokenizer},
                   {"sources", m_meta.sources}};
  if (m_meta.bosTokenId >= 0) j["bos_token_id"] = m_meta.bosTokenId;  // nanoGPT's sidecars have none
  if (!m_meta.tokenizerFingerprint.empty()) j["tokenizer_fingerprint"] = m_meta.tokenizerFingerprint;
  // The tokens on disk before anything is renamed: a flush that fails or is interrupted (minutes for a large
  // file) leaves the old .bin and its sidecar as they were. Then the sidecar first: a crash between the two
  // renames leaves a new sidecar that disagrees with the old .bin's length (refused on open) rather than a
  // new .bin read with a stale dtype.
  m_bin.sync();
  writeFileAtomic(tokenFileSidecarPath(m_path), j.dump(2) + "\n");
  m_bin.commit();
}

std::string otherTokenizerProblem(const TokenFile& file, int64_t modelEndOfText,
                                  const Tokenizer* modelTokenizer) {
  const TokenFileMeta& meta = file.meta();
  // nanoGPT's prepare.py writes GPT-2's ids and no sidecar: Pythia reads them as valid ids of its own, and
  // nothing else could say so.
  constexpr int64_t kGpt2EndOfText = 50256;
  if (!file.dtypeStated() && modelEndOfText >= 0 && modelEndOfText != kGpt2EndOfText)
    return file.path() + " has no sidecar (" + tokenFileSidecarPath(file.path()) +
           "): it is read as nanoGPT's, which hold GPT-2's ids (end-of-text " +
           std::to_string(kGpt2EndOfText) + "), and the model's end-of-text is " +
           std::to_string(modelEndOfText) +
           " (if the model's tokenizer made it, write its sidecar: docs/DATA.md)";
  const std::string madeWith = meta.tokenizer.empty() ? "" : "; it names the tokenizer in " + meta.tokenizer;
  if (modelTokenizer != nullptr && !meta.tokenizerFingerprint.empty()) {
    const std::string model = tokenizerFingerprint(*modelTokenizer);
    if (model != meta.tokenizerFingerprint)
      return file.path() + " was tokenized by another tokenizer than the model's " +
             modelTokenizer->source() + " (fingerprints " + meta.tokenizerFingerprint + " and " + model +
             madeWith + ")";
    // The same tokenizer: its own end-of-text, which a sidecar edited by hand may contradict (documents
    // would split at another token). Not the config's, which may name another (an instruct model's).
    if (meta.eotTokenId < 0 || meta.eotTokenId == modelTokenizer->eotId()) return "";
    return file.path() + "'s sidecar names end-of-text id " + std::to_string(meta.eotTokenId) +
           ", but its tokenizer's is " + std::to_string(modelTokenizer->eotId()) + " (edited by hand?)";
  }
  if (meta.eotTokenId < 0 || modelEndOfText < 0 || meta.eotTokenId == modelEndOfText) return "";
  return file.path() + " was tokenized with end-of-text id " + std::to_string(meta.eotTokenId) +
         ", the model's is " + std::to_string(modelEndOfText) +
         (meta.tokenizer.empty() ? "" : " (" + madeWith.substr(2) + ")");
}

}  // namespace nf
