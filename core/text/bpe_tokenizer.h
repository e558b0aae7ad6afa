// GPT-2's byte-level BPE tokenizer, reading and writing Hugging Face's vocab.json + merges.txt (and
// added_tokens.json), so GPT-2's own files work unchanged and ours load in any GPT-2 tokenizer. Its merge
// engine also serves tokenizer.json's byte-level BPE (hf_tokenizer.h). Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/tokenizer.h"

namespace nf {

// An adjacent pair of token ids as one hash key.
inline uint64_t tokenPairKey(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

class BpeTokenizer final : public Tokenizer {
 public:
  // Reads <folder>/vocab.json and <folder>/merges.txt, and added_tokens.json beside them where present (as
  // Hugging Face's GPT2Tokenizer does: {"token": id}; an id is the token's own in vocab.json or one of
  // those after the vocabulary, which the added tokens fill without a gap). Errors name the file and the
  // problem.
  static BpeTokenizer load(const std::string& folder);
  // From parsed contents; `vocabSource` and `mergesSource` name them in error messages.
  static BpeTokenizer fromFiles(const std::string& vocabJson, const std::string& mergesTxt,
                                const std::string& vocabSource, const std::string& mergesSource);

  // Writes vocab.json and merges.txt (and added_tokens.json, if any were read) atomically into folder,
  // creating it if needed.
  void save(const std::string& folder) const;

  // Byte string → token ids (GPT-2's pre-tokenization, then merges). An added token's text is its id,
  // found before pre-tokenization (the leftmost, and the longest there); "<|endoftext|>" and the added
  // tokens that tokenizer_config.json or special_tokens_map.json name are special: text where allowSpecial
  // is false.
  void encodeAppend(std::string_view text, std::vector<int32_t>& out,
                    bool allowSpecial = true) const override;
  // Token ids → the exact bytes they stand for (decode(encode(s)) == s for every byte string s).
  std::string decode(const std::vector<int32_t>& ids) const override;

  int32_t vocabSize() const override { return static_cast<int32_t>(m_tokenBytes.size()); }
  int32_t eotId() const override { return m_eotId; }  // -1 when the vocabulary has no "<|endoftext|>"
  std::string tokenBytes(int32_t id) const override { return m_tokenBytes.at(id); }
  int32_t idOf(std::string_view bytes) const override;
  // GPT-2's pre-tokenization knows where a cut is safe (pretokenizer.h), unless an added token holds
  // whitespace after another character, which a cut there would split: then 0.
  std::size_t streamCut(std::string_view text) const override;
  std::size_t mergeCount() const { return m_mergeRanks.size(); }

  // One pre-tokenized piece → its tokens by the merges alone (no special tokens), appended to out.
  void encodeWord(std::string_view piece, std::vector<int32_t>& out) const;

  // Building blocks shared with the trainer.
  struct Merge {
    int32_t left, right, result;
  };
  // merges in rank order; tokenBytes[id] = the bytes of token id; ids 0…255 need not be the single bytes.
  // Tokens marked in rawTokens (fromStrings' raw fallback) may repeat another token's bytes.
  BpeTokenizer(std::vector<std::string> tokenBytes, const std::vector<Merge>& merges,
               const std::vector<bool>& rawTokens = {});
  // A merge as the files write it: two token strings, and where it stands for messages ("line 7").
  struct MergeStrings {
    std::string left, right, where;
  };
  // From token strings (id → string, in byteToUnicode()'s alphabet) and merges in rank order. With
  // rawFallback a string with other characters stands for its own UTF-8 (Hugging Face's ByteLevel
  // decoder reads tokens so); without, it is an error. Strings marked in `literal` are their own bytes.
  // Errors name vocabSource or mergesSource.
  static BpeTokenizer fromStrings(const std::vector<std::string>& tokenStrings,
                                  const std::vector<MergeStrings>& merges, const std::string& vocabSource,
                                  const std::string& mergesSource, bool rawFallback,
                                  const std::vector<bool>& literal = {});
  // GPT-2's byte ↔ printable-character mapping (bytes_to_unicode): the vocab file's alphabet.
  static const std::vector<std::string>& byteToUnicode();  // 256 UTF-8 strings

 private:
  // A text found whole before pre-tokenization: "<|endoftext|>" and added_tokens.json's tokens.
  struct Literal {
    std::string text;
    int32_t id;
    bool special;
  };

  BpeTokenizer() = default;
  void encodePiece(std::string_view piece, std::vector<int32_t>& out) const;  // with the cache lock held
  void addLiteral(Literal literal);
  void readAddedTokens(const std::string& folder);

  std::vector<std::string> m_tokenBytes;
  std::unordered_map<std::string, int32_t> m_idOfBytes;
  std::vector<Merge> m_merges;
  std::unordered_map<uint64_t, uint32_t> m_mergeRanks;  // (left << 32 | right) → rank
  int32_t m_byteIds[256] = {};
  int32_t m_eotId = -1;
  std::vector<Literal> m_literals;  // longest first, so that the longest of those starting at one place wins
  std::vector<std::pair<std::string, int32_t>> m_addedTokens;  // added_tokens.json as read
  int32_t m_vocabFileSize = 0;                                 // the ids of vocab.json: 0 … this − 1
  bool m_literalSplittable = false;                            // a stream cut could split a literal

  // Pieces already encoded (most words repeat); guarded so encode() can be called from any thread.
  mutable std::unordered_map<std::string, std::vector<int32_t>> m_cache;
  mutable std::unique_ptr<std::mutex> m_cacheMutex = std::make_unique<std::mutex>();
};

}  // namespace nf
