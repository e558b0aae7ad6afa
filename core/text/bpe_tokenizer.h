// GPT-2's byte-level BPE tokenizer, reading and writing Hugging Face's vocab.json + merges.txt, so
// GPT-2's own files work unchanged and ours load in any GPT-2 tokenizer. Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nf {

inline constexpr const char* kEndOfText = "<|endoftext|>";

// An adjacent pair of token ids as one hash key.
inline uint64_t tokenPairKey(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Copies vocab.json and merges.txt from one folder to another (atomically), when the first has them.
// Returns whether it did: model folders carry their tokenizer along when copied, trained or exported.
bool copyTokenizerFiles(const std::string& from, const std::string& to);

class BpeTokenizer {
 public:
  // Reads <folder>/vocab.json and <folder>/merges.txt. Errors name the file and the problem.
  static BpeTokenizer load(const std::string& folder);
  // From parsed contents; `vocabSource` and `mergesSource` name them in error messages.
  static BpeTokenizer fromFiles(const std::string& vocabJson, const std::string& mergesTxt,
                                const std::string& vocabSource, const std::string& mergesSource);

  // Writes vocab.json and merges.txt (atomically) into folder, creating it if needed.
  void save(const std::string& folder) const;

  // Byte string → token ids. Literal "<|endoftext|>" in the text becomes the end-of-text id.
  std::vector<int32_t> encode(std::string_view text) const;
  // The same, appending to out; "<|endoftext|>" is treated as ordinary text when allowSpecial is false.
  void encodeAppend(std::string_view text, std::vector<int32_t>& out, bool allowSpecial = true) const;
  // Token ids → the exact bytes they stand for (decode(encode(s)) == s for every byte string s).
  std::string decode(const std::vector<int32_t>& ids) const;

  int32_t vocabSize() const { return static_cast<int32_t>(m_tokenBytes.size()); }
  int32_t eotId() const { return m_eotId; }  // -1 when the vocabulary has no "<|endoftext|>"
  const std::string& tokenBytes(int32_t id) const { return m_tokenBytes.at(id); }
  // The id of the token whose bytes are exactly `bytes`, or -1.
  int32_t idOf(std::string_view bytes) const;
  std::size_t mergeCount() const { return m_mergeRanks.size(); }

  // Building blocks shared with the trainer.
  struct Merge {
    int32_t left, right, result;
  };
  // merges in rank order; tokenBytes[id] = the bytes of token id; ids 0…255 need not be the single bytes.
  BpeTokenizer(std::vector<std::string> tokenBytes, const std::vector<Merge>& merges);
  // GPT-2's byte ↔ printable-character mapping (bytes_to_unicode): the vocab file's alphabet.
  static const std::vector<std::string>& byteToUnicode();  // 256 UTF-8 strings

 private:
  BpeTokenizer() = default;
  void encodePiece(std::string_view piece, std::vector<int32_t>& out) const;

  std::vector<std::string> m_tokenBytes;
  std::unordered_map<std::string, int32_t> m_idOfBytes;
  std::vector<Merge> m_merges;
  std::unordered_map<uint64_t, uint32_t> m_mergeRanks;  // (left << 32 | right) → rank
  int32_t m_byteIds[256] = {};
  int32_t m_eotId = -1;

  // Pieces already encoded (most words repeat); guarded so encode() can be called from any thread.
  mutable std::unordered_map<std::string, std::vector<int32_t>> m_cache;
  mutable std::unique_ptr<std::mutex> m_cacheMutex = std::make_unique<std::mutex>();
};

}  // namespace nf
