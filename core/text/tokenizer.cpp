#include "text/tokenizer.h"

#include <filesystem>

#include "io/atomic_file.h"
#include "text/bpe_tokenizer.h"
#ifdef NF_TOKENIZER_FORMATS
#include "text/hf_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#endif

namespace nf {
namespace {

bool has(const std::string& folder, const char* file) { return std::filesystem::exists(folder + "/" + file); }

}  // namespace

std::string Tokenizer::decodeKnown(const std::vector<int32_t>& ids) const {
  std::vector<int32_t> known;
  for (int32_t id : ids)
    if (id >= 0 && id < vocabSize()) known.push_back(id);
  return decode(known);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  encodeAppend(text, ids);
  return ids;
}

std::size_t Tokenizer::streamCut(std::string_view) const { return 0; }

std::unique_ptr<Tokenizer> loadTokenizer(const std::string& folder) {
  using F = TokenizerFiles;
  const bool gpt2 = has(folder, F::kGpt2Vocab) && has(folder, F::kGpt2Merges);
  const bool sentencePiece = has(folder, F::kSentencePiece);
#ifdef NF_TOKENIZER_FORMATS
  if (has(folder, F::kHuggingFace)) {
    try {
      return HfTokenizer::load(folder);
    } catch (const UnsupportedTokenizer&) {
      // The other files hold the same tokenizer in its older form (LLaMA's tokenizer.json is
      // SentencePiece's BPE rewritten; tokenizer.model is the original).
      if (!gpt2 && !sentencePiece) throw;
    }
  }
  if (gpt2) return std::make_unique<BpeTokenizer>(BpeTokenizer::load(folder));
  if (sentencePiece) return SentencePieceTokenizer::load(folder + "/" + F::kSentencePiece);
#else
  if (gpt2) return std::make_unique<BpeTokenizer>(BpeTokenizer::load(folder));
  if (has(folder, F::kHuggingFace) || sentencePiece)
    throw FileError(
        folder + "/" + (sentencePiece ? F::kSentencePiece : F::kHuggingFace),
        "cannot be read by this build, which reads only vocab.json + merges.txt (it was configured "
        "with -DNF_TOKENIZER_FORMATS=OFF, without PCRE2, ICU and SentencePiece)");
#endif
  if (!std::filesystem::is_directory(folder)) throw FileError(folder, "is not a folder");
  throw FileError(folder, std::string("has no tokenizer (looked for ") + F::kHuggingFace + ", " +
                              F::kGpt2Vocab + " + " + F::kGpt2Merges + ", " + F::kSentencePiece + ")");
}

bool hasTokenizer(const std::string& folder) {
  using F = TokenizerFiles;
  return has(folder, F::kHuggingFace) || (has(folder, F::kGpt2Vocab) && has(folder, F::kGpt2Merges)) ||
         has(folder, F::kSentencePiece);
}

bool copyTokenizerFiles(const std::string& from, const std::string& to) {
  if (!hasTokenizer(from)) return false;
  using F = TokenizerFiles;
  for (const char* file :
       {F::kHuggingFace, F::kGpt2Vocab, F::kGpt2Merges, F::kSentencePiece, "tokenizer_config.json",
        "special_tokens_map.json", "added_tokens.json", "generation_config.json"})
    if (has(from, file)) writeFileAtomic(to + "/" + file, readTextFile(from + "/" + file));
  return true;
}

}  // namespace nf
