// SentencePiece tokenizer.model files (LLaMA's and TinyLlama's tokenizer), encoded and decoded by
// Debian's libsentencepiece, so the library's own normalization, dummy prefix, merges and byte fallback
// apply. The library is reached through the nf_sentencepiece.so module (sentencepiece_backend.h says why).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "text/regex.h"
#include "text/tokenizer.h"

namespace nf {

class SentencePieceBackend;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Reads a tokenizer.model file; errors name it and give the library's reason, or say where the module
  // was looked for. addBosToken: tokenizer_config.json's add_bos_token (Hugging Face's LlamaTokenizer
  // starts every encoding with <s> unless it is false).
  // added: tokens the folder adds after the model file's pieces (a fine-tune's <|im_start|>, its <pad>), in
  // id order from its last piece on; each is matched in text as a control piece is, and is its one id.
  static std::unique_ptr<SentencePieceTokenizer> load(const std::string& path, bool addBosToken = true,
                                                      const std::vector<std::string>& added = {});
  ~SentencePieceTokenizer() override;

  // As the library encodes; with allowSpecial, control tokens written in the text ("<s>", "</s>") become
  // their ids and the text between them is encoded piece by piece, as Hugging Face's LlamaTokenizer does.
  void encodeAppend(std::string_view text, std::vector<int32_t>& out,
                    bool allowSpecial = true) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocabSize() const override;
  int32_t eotId() const override;  // the model's </s>
  int32_t bosId() const override;  // the model's <s>
  bool huggingFaceAddsBos() const override { return m_addBosToken && bosId() >= 0; }
  // "▁" as a space, a byte piece "<0x0A>" as its byte, control and unknown pieces as written.
  std::string tokenBytes(int32_t id) const override;
  int32_t idOf(std::string_view bytes) const override;
  // A piece as the model file spells it ("▁the", "<0x0A>"), as tokenizer.json's added tokens name pieces;
  // ids within the model file's pieces only.
  std::string piece(int32_t id) const;

 private:
  SentencePieceTokenizer() = default;
  void encodeText(std::string_view text, std::vector<int32_t>& out) const;

  int32_t pieceCount() const;  // the model file's pieces; the added tokens follow

  std::unique_ptr<SentencePieceBackend> m_processor;
  std::vector<std::string> m_added;  // ids pieceCount() …
  std::optional<Regex> m_special;    // the control and unknown pieces' texts, and the added tokens'
  std::unordered_map<std::string, int32_t> m_idOfSpecial, m_idOfBytes;
  bool m_addBosToken = true;
};

}  // namespace nf
