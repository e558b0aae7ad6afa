#include "text/sentencepiece_tokenizer.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "io/atomic_file.h"
#include "text/sentencepiece_backend.h"

namespace nf {
namespace {

constexpr const char* kModuleName = "nf_sentencepiece.so";

using MakeBackend = SentencePieceBackend* (*)();

// Loads nf_sentencepiece.so once: from $NF_SENTENCEPIECE_MODULE, where the build put it, or beside the
// running program. Throws a message listing where it looked.
MakeBackend backendFactory() {
  static std::once_flag once;
  static MakeBackend factory = nullptr;
  static std::string problem;
  std::call_once(once, [] {
#ifdef __SANITIZE_ADDRESS__
    // The module's own symbols come first only through RTLD_DEEPBIND (below), which ASan's runtime refuses
    // by ending the process: said here instead.
    problem = std::string("the SentencePiece module ") + kModuleName +
              " cannot be loaded in a build with AddressSanitizer (its runtime refuses RTLD_DEEPBIND)";
    return;
#endif
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("NF_SENTENCEPIECE_MODULE")) candidates.push_back(env);
#ifdef NF_SENTENCEPIECE_MODULE
    candidates.push_back(NF_SENTENCEPIECE_MODULE);
#endif
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back((self.parent_path() / kModuleName).string());
    // Every candidate is tried in turn; the message lists what each one said.
    std::string tried;
    for (const std::string& path : candidates) {
      tried += (tried.empty() ? "" : "; ") + path;
      if (!std::filesystem::exists(path)) {
        tried += ": not there";
        continue;
      }
      // The module's own symbols first: its libsentencepiece must use its own protobuf, not LibTorch's.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!handle) {
        tried += std::string(": cannot load: ") + dlerror();
        continue;
      }
      auto abi = reinterpret_cast<int (*)()>(dlsym(handle, "nfSentencePieceBackendAbi"));
      auto make = reinterpret_cast<MakeBackend>(dlsym(handle, "nfMakeSentencePieceBackend"));
      if (!abi || !make || abi() != kSentencePieceBackendAbi) {
        tried += ": not a SentencePiece module of this build (rebuild it)";
        dlclose(handle);
        continue;
      }
      factory = make;
      return;
    }
    problem = std::string("the SentencePiece module ") + kModuleName + " could not be loaded (" + tried +
              "; set NF_SENTENCEPIECE_MODULE to its path)";
  });
  if (!factory) throw std::runtime_error(problem);
  return factory;
}

}  // namespace

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(const std::string& path,
                                                                     bool addBosToken,
                                                                     const std::vector<std::string>& added) {
  if (!std::filesystem::exists(path)) throw FileError(path, "not found");
  auto tokenizer = std::unique_ptr<SentencePieceTokenizer>(new SentencePieceTokenizer());
  SentencePieceTokenizer& t = *tokenizer;
  try {
    t.m_processor.reset(backendFactory()());
  } catch (const std::runtime_error& e) {
    throw FileError(path, std::string("cannot be read: ") + e.what());
  }
  // Loaded from memory, so that the library's message never has to name the file.
  const std::string problem = t.m_processor->load(readTextFile(path));
  if (!problem.empty()) throw FileError(path, "is not a SentencePiece model the library reads: " + problem);
  t.m_source = path;
  t.m_addBosToken = addBosToken;
  t.m_added = added;

  std::vector<std::string> special;
  for (int32_t id = 0; id < t.vocabSize(); ++id) {
    const std::string bytes = t.tokenBytes(id);
    t.m_idOfBytes.emplace(bytes, id);  // the first of equal pieces
    const bool matched = id >= t.pieceCount() || t.m_processor->isControl(id) || t.m_processor->isUnknown(id);
    if (matched && !bytes.empty() && t.m_idOfSpecial.emplace(bytes, id).second) special.push_back(bytes);
  }
  // Longest first, so that the leftmost match is also the longest there.
  std::stable_sort(special.begin(), special.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string pattern;
  for (const std::string& s : special) (pattern.empty() ? pattern : pattern += "|") += Regex::escape(s);
  if (!pattern.empty()) t.m_special.emplace(pattern, Regex::Mode::Bytes);
  return tokenizer;
}

void SentencePieceTokenizer::encodeText(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<int> ids;
  const std::string problem = m_processor->encode(text, ids);
  if (!problem.empty()) throw std::runtime_error(m_source + ": encoding failed: " + problem);
  out.insert(out.end(), ids.begin(), ids.end());
}

void SentencePieceTokenizer::encodeAppend(std::string_view text, std::vector<int32_t>& out,
                                          bool allowSpecial) const {
  if (!allowSpecial || !m_special) {
    encodeText(text, out);
    return;
  }
  std::vector<Regex::Match> matches;
  m_special->findAll(text, matches);
  std::size_t pos = 0;
  for (const Regex::Match& m : matches) {
    encodeText(text.substr(pos, m.begin - pos), out);
    out.push_back(m_idOfSpecial.at(std::string(text.substr(m.begin, m.end - m.begin))));
    pos = m.end;
  }
  encodeText(text.substr(pos), out);
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  for (int32_t id : ids)
    if (id < 0 || id >= vocabSize())
      throw std::out_of_range("token id " + std::to_string(id) + " is out of range for a vocabulary of " +
                              std::to_string(vocabSize()));
  // Runs of the model file's pieces by the library, an added token as its text.
  std::string text;
  std::vector<int> run;
  auto flush = [&] {
    std::string piece;
    const std::string problem = m_processor->decode(run, piece);
    if (!problem.empty()) throw std::runtime_error(m_source + ": decoding failed: " + problem);
    text += piece;
    run.clear();
  };
  for (int32_t id : ids) {
    if (id < pieceCount()) {
      run.push_back(id);
      continue;
    }
    if (!run.empty()) flush();
    text += m_added[id - pieceCount()];
  }
  if (!run.empty()) flush();
  return text;
}

int32_t SentencePieceTokenizer::pieceCount() const { return m_processor->pieceSize(); }
int32_t SentencePieceTokenizer::vocabSize() const {
  return pieceCount() + static_cast<int32_t>(m_added.size());
}
int32_t SentencePieceTokenizer::eotId() const { return m_processor->eosId(); }
int32_t SentencePieceTokenizer::bosId() const { return m_processor->bosId(); }

std::string SentencePieceTokenizer::tokenBytes(int32_t id) const {
  if (id < 0 || id >= vocabSize())
    throw std::out_of_range("token id " + std::to_string(id) + " is out of range for a vocabulary of " +
                            std::to_string(vocabSize()));
  if (id >= pieceCount()) return m_added[id - pieceCount()];
  const std::string piece = m_processor->piece(id);
  // A byte piece is written "<0x0A>".
  if (m_processor->isByte(id))
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  if (m_processor->isControl(id) || m_processor->isUnknown(id)) return piece;
  std::string bytes;
  const std::string_view space = "\xe2\x96\x81";  // U+2581 "▁", SentencePiece's space
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, space.size(), space) == 0) {
      bytes += ' ';
      i += space.size();
    } else {
      bytes += piece[i++];
    }
  }
  return bytes;
}

std::string SentencePieceTokenizer::piece(int32_t id) const {
  if (id < 0 || id >= pieceCount())
    throw std::out_of_range("token id " + std::to_string(id) + " is not one of the " +
                            std::to_string(pieceCount()) + " pieces of " + m_source);
  return m_processor->piece(id);
}

int32_t SentencePieceTokenizer::idOf(std::string_view bytes) const {
  auto it = m_idOfBytes.find(std::string(bytes));
  return it == m_idOfBytes.end() ? -1 : it->second;
}

}  // namespace nf
