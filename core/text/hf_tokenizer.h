// Hugging Face tokenizer.json for byte-level BPE, the files of GPT-NeoX/Pythia, SmolLM2 and Qwen2.5:
// added tokens matched literally first (on the raw text, or on the normalized text for "normalized"
// ones), the Unicode normalizer (none, NFC, NFD, NFKC, NFKD, or a Sequence of them, through ICU), the
// pre-tokenizer (ByteLevel, or a Sequence of Split and Digits steps ending in ByteLevel; regexes run by
// PCRE2), then BPE merges by rank on the bytes, and the ByteLevel decoder. Everything else — another model
// type, pre-tokenizer, normalizer or decoder, a post-processor that adds tokens, byte fallback — is
// refused with the file and the unsupported part named (UnsupportedTokenizer).
//
// Beyond the format: text that is not valid UTF-8 (which Hugging Face cannot take) is cut at each run of
// invalid bytes, and the run goes to BPE as one piece of its own, so every byte string encodes; and
// decode(encode(s)) == s unless a normalizer rewrites the text or ByteLevel's add_prefix_space adds a space
// to each piece.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/atomic_file.h"
#include "text/bpe_tokenizer.h"
#include "text/regex.h"

namespace nf {

// A well-formed tokenizer file of a kind this reader does not support; what() names the part.
class UnsupportedTokenizer : public FileError {
 public:
  UnsupportedTokenizer(const std::string& path, const std::string& problem, bool fromSentencePiece = false)
      : FileError(path, problem), m_fromSentencePiece(fromSentencePiece) {}
  // Whether the file is SentencePiece's tokenizer rewritten (BPE with byte fallback: LLaMA's), which a
  // tokenizer.model beside it holds in its original form.
  bool fromSentencePiece() const { return m_fromSentencePiece; }

 private:
  bool m_fromSentencePiece;
};

class HfTokenizer final : public Tokenizer {
 public:
  // Reads <folder>/tokenizer.json; tokenizer_config.json and special_tokens_map.json beside it, when
  // present, name the end-of-sequence and begin-of-sequence tokens.
  static std::unique_ptr<HfTokenizer> load(const std::string& folder);
  // From contents: `source` names tokenizer.json in errors; `specialTokens` is an object with
  // "eos_token"/"bos_token" entries as tokenizer_config.json has them, or null.
  static std::unique_ptr<HfTokenizer> fromJson(const std::string& tokenizerJson, const std::string& source,
                                               const nlohmann::json& specialTokens = nullptr);

  void encodeAppend(std::string_view text, std::vector<int32_t>& out,
                    bool allowSpecial = true) const override;
  // The exact bytes (Hugging Face's decoder would then replace invalid UTF-8 with U+FFFD).
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocabSize() const override { return m_vocabSize; }
  // "<|endoftext|>" when it is a token, else the eos_token of tokenizer_config.json.
  int32_t eotId() const override { return m_eotId; }
  int32_t bosId() const override { return m_bosId; }
  std::string tokenBytes(int32_t id) const override;
  int32_t idOf(std::string_view bytes) const override;
  // Only for GPT-2's own pre-tokenization (ByteLevel with its regex, nothing before it).
  std::size_t streamCut(std::string_view text) const override;

 private:
  enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
  struct Step {                // one pre-tokenization step, applied to every piece
    bool prefixSpace = false;  // ByteLevel's add_prefix_space; else a split:
    std::shared_ptr<const Regex> regex;
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
  };
  // Added tokens of one kind (raw or normalized) as one leftmost-longest literal matcher.
  struct AddedSet {
    std::optional<Regex> all, ordinary;  // with and without the special tokens
    std::unordered_map<std::string, int32_t> idOf;
  };

  explicit HfTokenizer(BpeTokenizer bpe) : m_bpe(std::move(bpe)) {}
  // depth: how deep in Sequences (bounded: a file nesting 100,000 of them must not exhaust the stack).
  void parseNormalizer(const nlohmann::json& j, int depth = 0);
  void parsePreTokenizer(const nlohmann::json& j, int depth = 0);
  void parseAddedTokens(const nlohmann::json& j);
  void checkPostProcessor(const nlohmann::json& j, int depth = 0) const;
  std::string normalize(std::string_view text) const;
  // Cuts text at the added tokens of `set`: matches go to out as ids, the text between them to `rest`.
  template <typename Rest>
  void splitAdded(std::string_view text, const AddedSet& set, bool allowSpecial, std::vector<int32_t>& out,
                  const Rest& rest) const;
  void encodeText(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const;
  void encodeValid(std::string_view text, std::vector<int32_t>& out, bool allowSpecial) const;
  void encodePiece(std::string_view piece, std::size_t stepIndex, std::vector<int32_t>& out) const;

  BpeTokenizer m_bpe;  // the model's vocabulary and merges
  bool m_ignoreMerges = false;
  std::vector<std::string> m_normalizer;  // "NFC", "NFD", "NFKC", "NFKD", applied in order
  std::vector<Step> m_steps;
  AddedSet m_rawAdded, m_normalizedAdded;
  std::unordered_map<int32_t, std::string> m_addedContent;  // id → text of every added token
  std::unordered_map<std::string, int32_t> m_addedIdOfContent;
  int32_t m_vocabSize = 0, m_eotId = -1, m_bosId = -1;
  bool m_byteLevel = false, m_gpt2Pretokenization = false;
};

}  // namespace nf
