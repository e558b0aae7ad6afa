// Indirect-object-identification prompt sets for patching (PROTOCOL §7): clean prompts such as
// "When Mary and John went to the store, John gave a drink to" (answer " Mary", wrong " John"), each with
// a corrupted twin whose repeated subject is replaced by the indirect object ("…, Mary gave a drink to"),
// so the answer flips. Within a set every prompt has the same token length and the same name positions;
// names, places and objects are kept only if they are one token (with the space before them, as running
// text has them) in the tokenizer in use, whatever its kind. Prompts come in groups of four: both name
// orders (ABBA, BABA) × both names as answer.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace nf {

struct IoiPrompt {
  std::string order;  // "ABBA" (IO first) or "BABA" (subject first)
  std::string indirectObject, subject, place, object;
  std::string cleanText, corruptedText;
  std::vector<int32_t> clean, corrupted;  // equal lengths
  int32_t correctId = -1, wrongId = -1;   // " IO" and " S": the metric is logit(correct) − logit(wrong)
};

struct IoiPromptSet {
  std::string frame;                // with {A} {B} {PLACE} {S} {OBJECT} placeholders
  bool startsWithEndOfText = true;  // with the tokenizer's document start: its BOS, or end-of-text
  int64_t length = 0;               // tokens per prompt
  // Token positions shared by every prompt: first name, second name, repeated subject, last token.
  int64_t firstNamePosition = 0, secondNamePosition = 0, subjectPosition = 0, endPosition = 0;
  int64_t namesAvailable = 0, placesAvailable = 0, objectsAvailable = 0;  // single-token words found
  std::vector<IoiPrompt> prompts;
  std::string source;  // the file it was read from; empty for a set made here
};

struct IoiOptions {
  int64_t count = 480;  // a multiple of 4
  int frameIndex = 0;   // which of ioiFrames()
  uint64_t seed = 0;
  // Start every prompt as documents start in training: with the tokenizer's begin-of-sequence token, or
  // end-of-text (<|endoftext|>) where it has none.
  bool prependEndOfText = true;
};

// Errors (std::invalid_argument) name the tokenizer's files and, when too few words are one token, the
// words that are not.
IoiPromptSet makeIoiPromptSet(const Tokenizer& tokenizer, const IoiOptions& options);

nlohmann::json toJson(const IoiPromptSet& set);
// Reads what toJson wrote; `source` names the file in errors. Checks lengths and positions agree.
IoiPromptSet ioiPromptSetFromJson(const nlohmann::json& j, const std::string& source);
// A set read from a file, before a model is measured on it: every id inside the model's vocabulary; what
// makeIoiPromptSet guarantees of every prompt (correct_id ≠ wrong_id; at the subject position the clean
// tokens hold wrong_id, the corrupted ones correct_id); and — given the model's tokenizer — the clean and
// the corrupted tokens those of their texts, so a set made with another tokenizer is refused instead of
// measured (plausible, wrong logit differences). FileError naming the set and the prompt.
void checkIoiPromptSetFor(const IoiPromptSet& set, int64_t vocabSize, const Tokenizer* tokenizer);

}  // namespace nf
