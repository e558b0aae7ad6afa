// The tokenizer the engine speaks to, whatever files it came from, and the one loader that picks a model
// folder's tokenizer by the files present: Hugging Face tokenizer.json (byte-level BPE), GPT-2's
// vocab.json + merges.txt, SentencePiece's tokenizer.model. Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nf {

inline constexpr const char* kEndOfText = "<|endoftext|>";

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Text → token ids, with no begin/end-of-sequence tokens added. Special tokens written literally in
  // the text ("<|endoftext|>") become their ids.
  std::vector<int32_t> encode(std::string_view text) const;
  // The same, appending to out; with allowSpecial false, special tokens' text is ordinary text.
  virtual void encodeAppend(std::string_view text, std::vector<int32_t>& out,
                            bool allowSpecial = true) const = 0;
  // Token ids → text, as the format's own decoder gives it.
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // decode, leaving out ids past the vocabulary: a model's vocabulary may be padded beyond its
  // tokenizer's (Pythia: 50,304 for 50,277 tokens; Qwen2.5: 151,936 for 151,665), and sampling can pick one.
  std::string decodeKnown(const std::vector<int32_t>& ids) const;

  virtual int32_t vocabSize() const = 0;
  // The token that ends a document (token files separate documents with it); -1 when there is none.
  virtual int32_t eotId() const = 0;
  // The token that starts a document when the format has one (LLaMA's <s>); else -1.
  virtual int32_t bosId() const { return -1; }
  // What a document starts with after the previous one's end-of-text: the begin-of-sequence token where
  // Hugging Face's tokenizer starts every encoding with it (huggingFaceAddsBos), else end-of-text itself
  // (GPT-2). Token files, IOI and other prompts start so.
  int32_t documentStartId() const { return huggingFaceAddsBos() ? bosId() : eotId(); }
  // Whether Hugging Face's tokenizer for these files starts every encoding with the BOS (LLaMA's
  // SentencePiece LlamaTokenizer does unless tokenizer_config.json says add_bos_token: false; byte-level
  // BPE — GPT-2, Pythia, Qwen2 — does not): lm-evaluation-harness scores text encoded so
  // (eval/benchmark.h), and token files start documents so (data/tokenize.h).
  virtual bool huggingFaceAddsBos() const { return false; }
  // The bytes a token stands for in running text: a byte-level token's bytes, a SentencePiece piece
  // with "▁" as a space, a special token's own text. What per-token displays show.
  virtual std::string tokenBytes(int32_t id) const = 0;
  // The token whose tokenBytes are exactly `bytes`, or -1.
  virtual int32_t idOf(std::string_view bytes) const = 0;

  // The last position p > 0 where text may be cut so that encoding text[0, p) and the rest separately
  // gives the same tokens as the whole, whatever follows; 0 when the tokenizer cannot say (then a
  // stream encodes whole documents).
  virtual std::size_t streamCut(std::string_view text) const;

  // What it was read from, for messages: "/models/pythia/tokenizer.json".
  const std::string& source() const { return m_source; }

 protected:
  Tokenizer() = default;
  Tokenizer(const Tokenizer&) = default;
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(const Tokenizer&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;

  std::string m_source = "the tokenizer made in memory";
};

// The tokenizer files loadTokenizer reads, in the order it prefers them.
struct TokenizerFiles {
  static constexpr const char* kHuggingFace = "tokenizer.json";
  static constexpr const char* kGpt2Vocab = "vocab.json";
  static constexpr const char* kGpt2Merges = "merges.txt";
  static constexpr const char* kSentencePiece = "tokenizer.model";
  // Every file a tokenizer is read from or travels with (copyTokenizerFiles copies them).
  static constexpr const char* kAll[] = {kHuggingFace,
                                         kGpt2Vocab,
                                         kGpt2Merges,
                                         kSentencePiece,
                                         "tokenizer_config.json",
                                         "special_tokens_map.json",
                                         "added_tokens.json",
                                         "generation_config.json",
                                         "chat_template.jinja"};  // transformers ≥ 4.49 keeps it apart
};

// A folder's tokenizer: tokenizer.json when present, else vocab.json + merges.txt (with added_tokens.json),
// else tokenizer.model. The one tokenizer.json that gives way is SentencePiece's BPE rewritten with byte
// fallback (LLaMA's, TinyLlama's), to the tokenizer.model beside it: the same tokenizer in the form we read.
// Any other tokenizer.json we cannot read is an error, never a silent turn to vocab.json + merges.txt,
// which need not encode as it does. Errors name the folder and the files looked for, or the file and its
// problem.
std::unique_ptr<Tokenizer> loadTokenizer(const std::string& folder);

// What tokenizer_config.json and special_tokens_map.json beside the tokenizer files say that the loaders
// use; a file that is absent says nothing.
struct TokenizerConfig {
  std::optional<bool> addBosToken;         // add_bos_token: whether Hugging Face's tokenizer starts with BOS
  std::optional<bool> addEosToken;         // add_eos_token: … and ends with EOS (LlamaTokenizer's)
  std::vector<std::string> specialTokens;  // the texts of bos_token, eos_token, …, additional_special_tokens
};
// Errors name the file: not JSON, not a JSON object, an add_bos_token or add_eos_token that is not true or
// false.
TokenizerConfig readTokenizerConfig(const std::string& folder);

// Whether folder holds files loadTokenizer reads (it may still refuse them).
bool hasTokenizer(const std::string& folder);

// What a tokenizer maps ids to, as a short text ("fnv1a64:" and 16 hex digits): each id's tokenBytes in
// order, its size, end-of-text and begin-of-sequence ids. The same vocabulary read from another format
// (tokenizer.json, vocab.json + merges.txt) gives the same fingerprint; another vocabulary of the same size
// a different one. Token files record it (data/token_file.h) so that tokens are never read by a model of
// another tokenizer unsaid.
std::string tokenizerFingerprint(const Tokenizer& tokenizer);

// Which ids are special: those that only text read with special tokens gives (encodeAppend's allowSpecial) —
// end-of-text, <s>, <unk>, <|im_start|>, <|padding|> — and ordinary text never does.
std::vector<bool> specialTokenIds(const Tokenizer& tokenizer);

// Copies a folder's tokenizer files (TokenizerFiles::kAll: the ones above plus the configs, generation
// settings and chat template that travel with them) to another folder, atomically. Returns whether it copied
// a tokenizer: model folders carry their tokenizer along when copied, trained or exported.
bool copyTokenizerFiles(const std::string& from, const std::string& to);

}  // namespace nf
