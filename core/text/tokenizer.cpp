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

#ifdef NF_TOKENIZER_FORMATS
// Tokens a folder adds beside its tokenizer.model (tokenizer.json's added_tokens, tokenizer_config.json's
// added_tokens_decoder, added_tokens.json), which transformers encodes each as its one id: id → (text, file).
std::map<int64_t, std::pair<std::string, std::string>> addedTokens(const std::string& folder) {
  std::map<int64_t, std::pair<std::string, std::string>> added;
  auto add = [&](const std::string& file, const nlohmann::json& content, const nlohmann::json& id) {
    const std::string path = folder + "/" + file;
    if (!content.is_string() || !id.is_number_integer() || id.get<int64_t>() < 0)
      throw FileError(
          path, "has an added token that is not a text and an id: " + content.dump() + ", " + id.dump());
    const auto [it, fresh] = added.emplace(id.get<int64_t>(), std::pair{content.get<std::string>(), file});
    if (!fresh && it->second.first != content.get<std::string>())
      throw FileError(path, "adds \"" + content.get<std::string>() + "\" as id " + id.dump() + ", where " +
                                it->second.second + " has \"" + it->second.first + "\"");
  };
  auto read = [&](const char* file) {
    const std::string path = folder + "/" + file;
    const nlohmann::json j = has(folder, file) ? readJsonFile(path) : nlohmann::json::object();
    if (!j.is_object()) throw FileError(path, "is not a JSON object");
    return j;
  };
  auto field = [](const nlohmann::json& t, const char* key) {
    return t.is_object() ? t.value(key, nlohmann::json()) : nlohmann::json();
  };
  const nlohmann::json hf = read(TokenizerFiles::kHuggingFace);
  if (hf.contains("added_tokens") && !hf["added_tokens"].is_array())
    throw FileError(folder + "/" + TokenizerFiles::kHuggingFace, "added_tokens is not a list");
  for (const nlohmann::json& t : hf.value("added_tokens", nlohmann::json::array()))
    add(TokenizerFiles::kHuggingFace, field(t, "content"), field(t, "id"));
  const nlohmann::json decoder =
      read("tokenizer_config.json").value("added_tokens_decoder", nlohmann::json());
  for (const auto& [id, t] : decoder.items()) {
    const bool whole =
        !id.empty() && id.size() < 10 && id.find_first_not_of("0123456789") == std::string::npos;
    add("tokenizer_config.json", field(t, "content"),
        whole ? nlohmann::json(std::stoll(id)) : nlohmann::json(id));
  }
  const nlohmann::json byText = read("added_tokens.json");
  for (const auto& [text, id] : byText.items()) add("added_tokens.json", text, id);
  return added;
}

// tokenizer.model with the tokens the folder adds: those within its pieces must be the pieces there; those
// after it follow from its last piece on, each matched in text as its one id (a fine-tune's <|im_start|>
// at 32000 had been cut into pieces, unsaid).
std::unique_ptr<SentencePieceTokenizer> sentencePieceWithAddedTokens(const std::string& folder, bool addBos) {
  const std::string model = folder + "/" + TokenizerFiles::kSentencePiece;
  auto tokenizer = SentencePieceTokenizer::load(model, addBos);
  const int32_t pieces = tokenizer->vocabSize();
  std::vector<std::string> beyond;
  for (const auto& [id, token] : addedTokens(folder)) {
    const auto& [text, file] = token;
    // Named as the model file spells the piece ("▁<PRE>", "<0x0A>"), or as its text ("<s>").
    if (id < pieces && (tokenizer->piece(static_cast<int32_t>(id)) == text ||
                        tokenizer->tokenBytes(static_cast<int32_t>(id)) == text))
      continue;
    if (id < pieces || id != pieces + static_cast<int64_t>(beyond.size()))
      throw FileError(
          folder + "/" + file,
          "adds the token \"" + text + "\" as id " + std::to_string(id) + ", where " +
              TokenizerFiles::kSentencePiece +
              (id < pieces
                   ? " has the piece \"" + tokenizer->tokenBytes(static_cast<int32_t>(id)) + "\""
                   : "'s " + std::to_string(pieces) + " pieces and the tokens added before it end at " +
                         std::to_string(pieces + beyond.size() - 1)));
    beyond.push_back(text);
  }
  return beyond.empty() ? std::move(tokenizer) : SentencePieceTokenizer::load(model, addBos, beyond);
}
#endif

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
    const TokenizerConfig config = readTokenizerConfig(folder);
    if (config.addEosToken.value_or(false))
      throw FileError(folder + "/tokenizer_config.json",
                      "says add_eos_token: transformers' LlamaTokenizer then ends every encoding with </s>, "
                      "which this build's reader of " +
                          std::string(F::kSentencePiece) + " does not");
    return sentencePieceWithAddedTokens(folder, config.addBosToken.value_or(true));
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
    for (const auto& [key, flag] :
         {std::pair{"add_bos_token", &config.addBosToken}, std::pair{"add_eos_token", &config.addEosToken}}) {
      if (file != configFile || !j.contains(key)) continue;
      if (!j[key].is_boolean())
        throw FileError(path, std::string(key) + " is " + j[key].dump() + ", not true or false");
      *flag = j[key].get<bool>();
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

std::vector<bool> specialTokenIds(const Tokenizer& tokenizer) {
  // Asked of the encodings themselves, so that each format's own notion (a tokenizer.json's "special"
  // flag, SentencePiece's control and unknown pieces, GPT-2's <|endoftext|>) is the one used.
  std::vector<bool> special(static_cast<std::size_t>(tokenizer.vocabSize()), false);
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tokenizer.vocabSize(); ++id) {
    const std::string text = tokenizer.tokenBytes(id);
    ids.clear();
    tokenizer.encodeAppend(text, ids, /*allowSpecial=*/true);
    if (ids.size() != 1 || ids[0] != id) continue;
    ids.clear();
    tokenizer.encodeAppend(text, ids, /*allowSpecial=*/false);
    special[id] = ids.size() != 1 || ids[0] != id;
  }
  return special;
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
