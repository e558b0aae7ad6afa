// Small tokenizer files for the tests, made at test time (nothing is downloaded): a Hugging Face
// tokenizer.json around a vocabulary our GPT-2 trainer learned, with the normalizer, pre-tokenizer and
// added tokens of a real model family's file (GPT-NeoX/Pythia, Qwen2.5, SmolLM2), and a SentencePiece
// model trained by the library's Python trainer.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "check.h"
#include "data/synthetic_corpus.h"
#include "io/atomic_file.h"
#include "temp_dir.h"
#include "text/bpe_tokenizer.h"
#include "text_fixtures.h"

namespace nf::test {

// The sections of one family's tokenizer.json, copied from the real files (vocabulary aside).
struct HfFamily {
  const char* name;
  const char* sections;  // normalizer, pre_tokenizer, post_processor, decoder
  const char* model;     // model's fields other than vocab and merges
  bool pairMerges;       // merges as ["a", "b"] (tokenizers ≥ 0.20) rather than "a b"
};

// GPT-NeoX-20B's (Pythia's): NFC, ByteLevel with GPT-2's regex, runs of spaces as added tokens.
inline const HfFamily kGptNeoX = {"gpt-neox",
                                  R"({"normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true}})",
                                  R"({"type": "BPE", "dropout": null, "unk_token": null,
  "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false})",
                                  false};

// Qwen2.5's: NFC, its Split regex (single digits, newlines with what precedes them), ByteLevel without regex.
inline const HfFamily kQwen2 = {"qwen2",
                                R"({"normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
  "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}})",
                                R"({"type": "BPE", "dropout": null, "unk_token": null,
  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
  "ignore_merges": false})",
                                true};

// SmolLM2's: no normalizer, every digit alone, then ByteLevel with GPT-2's regex.
inline const HfFamily kSmolLM2 = {"smollm2",
                                  R"({"normalizer": null,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": true},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},
  "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}})",
                                  R"({"type": "BPE", "dropout": null, "unk_token": null,
  "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false})",
                                  false};

inline nlohmann::json addedToken(int64_t id, const std::string& content, bool special, bool normalized) {
  return {{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", normalized}, {"special", special}};
}

// A tokenizer.json: `bpe`'s vocabulary and merges in the family's setting, with these added tokens.
inline nlohmann::json hfTokenizerJson(const BpeTokenizer& bpe, const HfFamily& family,
                                      const nlohmann::json& addedTokens) {
  TempDir dir;
  bpe.save(dir.path());
  nlohmann::json model = nlohmann::json::parse(family.model);
  model["vocab"] = nlohmann::json::parse(readTextFile(dir.path("vocab.json")));
  nlohmann::json merges = nlohmann::json::array();
  const std::string text = readTextFile(dir.path("merges.txt"));
  for (std::size_t start = text.find('\n') + 1, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    const std::size_t space = line.find(' ');
    if (family.pairMerges)
      merges.push_back({line.substr(0, space), line.substr(space + 1)});
    else
      merges.push_back(line);
  }
  model["merges"] = merges;
  nlohmann::json j = nlohmann::json::parse(family.sections);
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = addedTokens;
  j["model"] = model;
  return j;
}

// The family's added tokens as its real file has them, at ids after `bpe`'s vocabulary (its
// <|endoftext|>, the last id, stays where the trainer put it).
inline nlohmann::json familyAddedTokens(const BpeTokenizer& bpe, const HfFamily& family) {
  const int64_t eot = bpe.eotId(), n = bpe.vocabSize();
  nlohmann::json added = nlohmann::json::array({addedToken(eot, kEndOfText, true, false)});
  const std::string name = family.name;
  if (name == "gpt-neox") {
    added.push_back(addedToken(n, "<|padding|>", true, false));
    // GPT-NeoX-20B's runs of spaces: ordinary (not special) and looked for in the normalized text.
    for (int spaces = 2; spaces <= 4; ++spaces)
      added.push_back(addedToken(n + spaces - 1, std::string(spaces, ' '), false, true));
  } else if (name == "qwen2") {
    added.push_back(addedToken(n, "<|im_start|>", true, false));
    added.push_back(addedToken(n + 1, "<|im_end|>", true, false));
    added.push_back(addedToken(n + 2, "<tool_call>", false, false));
  } else {
    for (const char* t : {"<|im_start|>", "<|im_end|>", "<repo_name>"})
      added.push_back(addedToken(n + static_cast<int64_t>(added.size()) - 1, t, true, false));
  }
  return added;
}

inline void writeHfTokenizer(const std::string& folder, const nlohmann::json& tokenizerJson) {
  std::filesystem::create_directories(folder);
  writeFileAtomic(folder + "/tokenizer.json", tokenizerJson.dump(1));
}

// `documents` documents of the synthetic corpus (`seed`), one per line: text for a SentencePiece model whose
// vocabulary holds the corpus's words (the IOI names among them).
inline std::string corpusLines(uint64_t seed, int documents) {
  SyntheticCorpus corpus(CorpusStyle::Main, seed);
  std::string text;
  for (int i = 0; i < documents; ++i) text += corpus.nextDocument() + "\n";
  return text;
}

// Trains a LLaMA-style SentencePiece BPE model on `text` with the library's Python trainer:
// <folder>/tokenizer.model. Skips the test in a build that cannot read it: without tokenizer formats, or
// with sanitizers (tools/sanitized-suite.sh), which cannot load the SentencePiece module that reads it
// (text/sentencepiece_tokenizer.cpp).
inline void trainSentencePiece(const std::string& folder, const std::string& text, int vocab) {
#ifndef NF_TOKENIZER_FORMATS
  SKIP("built with -DNF_TOKENIZER_FORMATS=OFF: no tokenizer.model");
#endif
#ifdef __SANITIZE_ADDRESS__
  SKIP("a sanitizer build cannot load the SentencePiece module that reads tokenizer.model");
#endif
  requireReferencePython("sentencepiece");
  std::filesystem::create_directories(folder);
  writeFileAtomic(folder + "/train.txt", text);
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR +
                          "/hf_tokenizer_reference.py sp-train " + folder + "/train.txt " +
                          std::to_string(vocab) + " " + folder + "/tokenizer";
  if (runCommand(cmd) != 0) throw Failure("SentencePiece training failed: " + cmd);
  std::filesystem::remove(folder + "/train.txt");
  std::filesystem::remove(folder + "/tokenizer.vocab");
}

}  // namespace nf::test
