// The part of libsentencepiece the SentencePiece tokenizer uses, behind an interface. Debian's
// libsentencepiece carries its own copy of protobuf (3.14) and exports its symbols, which clash with the
// protobuf (3.21) that LibTorch loads: a process linking both crashes at start-up. So the library lives in
// a module of its own, nf_sentencepiece.so (sentencepiece_module.cpp), which the tokenizer loads on first
// use with the module's own symbols bound first (RTLD_DEEPBIND).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace nf {

// Bumped whenever the interface changes, so a stale module is refused rather than called wrongly.
inline constexpr int kSentencePieceBackendAbi = 1;

class SentencePieceBackend {
 public:
  virtual ~SentencePieceBackend() = default;
  // Each returns "" on success, else the library's message.
  virtual std::string load(const std::string& serializedModel) = 0;
  virtual std::string encode(std::string_view text, std::vector<int>& ids) const = 0;
  virtual std::string decode(const std::vector<int>& ids, std::string& text) const = 0;

  virtual int pieceSize() const = 0;
  virtual std::string piece(int id) const = 0;
  virtual bool isByte(int id) const = 0;
  virtual bool isControl(int id) const = 0;
  virtual bool isUnknown(int id) const = 0;
  virtual int bosId() const = 0;  // -1 when the model has none
  virtual int eosId() const = 0;
};

}  // namespace nf

// What the module exports (C names, looked up with dlsym).
extern "C" {
int nfSentencePieceBackendAbi();
nf::SentencePieceBackend* nfMakeSentencePieceBackend();
}
