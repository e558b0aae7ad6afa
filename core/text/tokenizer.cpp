#include "text/tokenizer.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "text/bpe_tokenizer.h"
#include "util/fnv1a.h"
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
  // Hugging Face's LlamaTokenizer starts every encoding with <s> unless add_bos_token is false.
  auto loadSentencePiece = [&] {
    return SentencePieceTokenizer::load(folder + "/" + F::kSentencePiece,
                                        readTokenizerConfig(folder).addBosToken.value_or(true));
  };
  if (has(folder, F::kHuggingFace)) {
    try {
      return HfTokenizer::load(folder);
    } catch (const UnsupportedTokenizer& e) {
      // LLaMA's tokenizer.json is SentencePiece's BPE rewritten; tokenizer.model is the original.
      if (!e.fromSentencePiece() || !sentencePiece) throw;
      return loadSentencePiece();
    }
  }
  if (gpt2) return std::make_unique<BpeTokenizer>(BpeTokenizer::load(folder));
  if (sentencePiece) return loadSentencePiece();
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

TokenizerConfig readTokenizerConfig(const std::string& folder) {
  TokenizerConfig config;
  // Hugging Face's SPECIAL_TOKENS_ATTRIBUTES; special_tokens_map.json's entry replaces the config's.
  std::map<std::string, std::vector<std::string>> special;
  const std::string configFile = "tokenizer_config.json";
  for (const std::string& file : {configFile, std::string("special_tokens_map.json")}) {
    const std::string path = folder + "/" + file;
    if (!std::filesystem::exists(path)) continue;
    const nlohmann::json j = readJsonFile(path);
    if (!j.is_object()) throw FileError(path, "is not a JSON object");
    if (file == configFile && j.contains("add_bos_token")) {
      if (!j["add_bos_token"].is_boolean())
        throw FileError(path, "add_bos_token is " + j["add_bos_token"].dump() + ", not true or false");
      config.addBosToken = j["add_bos_token"].get<bool>();
    }
    for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                            "mask_token", "additional_special_tokens", "extra_special_tokens"}) {
      if (!j.contains(key)) continue;
      std::vector<std::string>& texts = special[key];
      texts.clear();
      const nlohmann::json tokens = j[key].is_array() ? j[key] : nlohmann::json::array({j[key]});
      for (const nlohmann::json& token : tokens) {
        // A string, or an AddedToken object with its "content"; null names none.
        const nlohmann::json& content =
            token.is_object() && token.contains("content") ? token["content"] : token;
        if (content.is_string()) texts.push_back(content.get<std::string>());
      }
    }
  }
  for (const auto& entry : special)
    config.specialTokens.insert(config.specialTokens.end(), entry.second.begin(), entry.second.end());
  return config;
}

std::string tokenizerFingerprint(const Tokenizer& tokenizer) {
  // FNV-1a over length-prefixed fields: a match by accident is out of reach for the mistakes it is for
  // (another tokenizer's files).
  Fnv1a fnv;
  auto add = [&fnv](std::string_view bytes) {
    fnv.add(std::to_string(bytes.size()) + ":");
    fnv.add(bytes);
  };
  add(std::to_string(tokenizer.vocabSize()) + " " + std::to_string(tokenizer.eotId()) + " " +
      std::to_string(tokenizer.bosId()));
  for (int32_t id = 0; id < tokenizer.vocabSize(); ++id) add(tokenizer.tokenBytes(id));
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fnv.hash));
  return std::string("fnv1a64:") + text;
}

bool hasTokenizer(const std::string& folder) {
  using F = TokenizerFiles;
  return has(folder, F::kHuggingFace) || (has(folder, F::kGpt2Vocab) && has(folder, F::kGpt2Merges)) ||
         has(folder, F::kSentencePiece);
}

bool copyTokenizerFiles(const std::string& from, const std::string& to) {
  if (!hasTokenizer(from)) return false;
  for (const char* file : TokenizerFiles::kAll)
    if (has(from, file)) writeFileAtomic(to + "/" + file, readTextFile(from + "/" + file));
  return true;
}

}  // namespace nf
