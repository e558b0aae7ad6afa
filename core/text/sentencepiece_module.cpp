// nf_sentencepiece.so: libsentencepiece behind SentencePieceBackend (see sentencepiece_backend.h for why
// it is a module of its own).
#include <sentencepiece_processor.h>

#include "text/sentencepiece_backend.h"

namespace {

class Backend final : public nf::SentencePieceBackend {
 public:
  std::string load(const std::string& serializedModel) override {
    return message(m_processor.LoadFromSerializedProto(serializedModel));
  }
  std::string encode(std::string_view text, std::vector<int>& ids) const override {
    return message(m_processor.Encode(text, &ids));
  }
  std::string decode(const std::vector<int>& ids, std::string& text) const override {
    return message(m_processor.Decode(ids, &text));
  }
  int pieceSize() const override { return m_processor.GetPieceSize(); }
  std::string piece(int id) const override { return m_processor.IdToPiece(id); }
  bool isByte(int id) const override { return m_processor.IsByte(id); }
  bool isControl(int id) const override { return m_processor.IsControl(id); }
  bool isUnknown(int id) const override { return m_processor.IsUnknown(id); }
  int bosId() const override { return m_processor.bos_id(); }
  int eosId() const override { return m_processor.eos_id(); }

 private:
  static std::string message(const sentencepiece::util::Status& status) {
    return status.ok() ? std::string() : status.ToString();
  }
  sentencepiece::SentencePieceProcessor m_processor;
};

}  // namespace

extern "C" {
__attribute__((visibility("default"))) int nfSentencePieceBackendAbi() {
  return nf::kSentencePieceBackendAbi;
}
__attribute__((visibility("default"))) nf::SentencePieceBackend* nfMakeSentencePieceBackend() {
  return new Backend();
}
}
