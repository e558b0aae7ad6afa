#include "data/ioi.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "data/synthetic_corpus.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "util/random.h"

namespace nf {
namespace {

std::vector<std::string> singleTokenWords(const Tokenizer& tokenizer, const std::vector<std::string>& words) {
  std::vector<std::string> kept;
  for (const auto& w : words)
    if (tokenizer.encode(" " + w).size() == 1) kept.push_back(w);
  return kept;
}

struct Filled {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<int64_t> slotPositions;  // token position of each placeholder, in frame order
};

// Encodes the frame piece by piece. Each placeholder follows a space and precedes a non-letter, so the
// space moves into the slot (" Mary") and every piece boundary is a pre-token boundary: the pieces'
// tokens concatenate to the whole text's tokens (checked).
Filled fillFrame(const Tokenizer& tokenizer, const std::string& frame,
                 const std::vector<std::pair<std::string, std::string>>& slots, bool prependEot) {
  Filled f;
  if (prependEot) f.tokens.push_back(tokenizer.eotId());
  std::size_t pos = 0;
  while (pos < frame.size()) {
    const std::size_t open = frame.find('{', pos);
    std::string literal = frame.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (open != std::string::npos) {
      if (literal.empty() || literal.back() != ' ')
        throw std::logic_error("IOI frame \"" + frame + "\" has a placeholder without a space before it");
      literal.pop_back();
    }
    f.text += literal;
    tokenizer.encodeAppend(literal, f.tokens, false);
    if (open == std::string::npos) break;
    const std::size_t close = frame.find('}', open);
    const std::string name = frame.substr(open + 1, close - open - 1);
    auto slot = std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == name; });
    if (slot == slots.end()) throw std::logic_error("IOI frame has an unknown placeholder {" + name + "}");
    f.slotPositions.push_back(static_cast<int64_t>(f.tokens.size()));
    const std::string word = " " + slot->second;
    f.text += word;
    tokenizer.encodeAppend(word, f.tokens, false);
    pos = close + 1;
  }
  if (tokenizer.encode(f.text) !=
      std::vector<int32_t>(f.tokens.begin() + (prependEot ? 1 : 0), f.tokens.end()))
    throw std::logic_error("IOI frame \"" + frame + "\" does not tokenize piecewise");
  return f;
}

}  // namespace

IoiPromptSet makeIoiPromptSet(const Tokenizer& tokenizer, const IoiOptions& options) {
  const auto& frames = ioiFrames();
  if (options.frameIndex < 0 || options.frameIndex >= static_cast<int>(frames.size()))
    throw std::invalid_argument("IOI frame " + std::to_string(options.frameIndex) + " does not exist (0…" +
                                std::to_string(frames.size() - 1) + ")");
  if (options.count < 4 || options.count % 4 != 0)
    throw std::invalid_argument(
        "the number of IOI prompts must be a positive multiple of 4 (both name orders × "
        "both answers), got " +
        std::to_string(options.count));
  if (options.prependEndOfText && tokenizer.eotId() < 0)
    throw std::invalid_argument("the tokenizer has no <|endoftext|> token to start the prompts with");

  const auto names = singleTokenWords(tokenizer, corpusNames());
  const auto places = singleTokenWords(tokenizer, corpusPlaces());
  const auto objects = singleTokenWords(tokenizer, corpusObjects());
  if (names.size() < 2 || places.empty() || objects.empty())
    throw std::invalid_argument("the tokenizer has too few single-token words for IOI prompts (" +
                                std::to_string(names.size()) + " names, " + std::to_string(places.size()) +
                                " places, " + std::to_string(objects.size()) + " objects; need 2, 1, 1)");

  IoiPromptSet set;
  set.frame = frames[options.frameIndex];
  set.startsWithEndOfText = options.prependEndOfText;
  set.namesAvailable = static_cast<int64_t>(names.size());
  set.placesAvailable = static_cast<int64_t>(places.size());
  set.objectsAvailable = static_cast<int64_t>(objects.size());
  Random random(options.seed);
  for (int64_t group = 0; group < options.count / 4; ++group) {
    const std::string x = random.pick(names);
    std::string y = x;
    while (y == x) y = random.pick(names);
    const std::string place = random.pick(places), object = random.pick(objects);
    for (const char* order : {"ABBA", "BABA"}) {
      for (const auto& [io, subject] : {std::pair{x, y}, std::pair{y, x}}) {
        const bool ioFirst = std::string(order) == "ABBA";
        const std::string a = ioFirst ? io : subject, b = ioFirst ? subject : io;
        auto fill = [&](const std::string& repeated) {
          return fillFrame(tokenizer, set.frame,
                           {{"A", a}, {"B", b}, {"PLACE", place}, {"S", repeated}, {"OBJECT", object}},
                           options.prependEndOfText);
        };
        const Filled clean = fill(subject), corrupted = fill(io);
        IoiPrompt p{order,
                    io,
                    subject,
                    place,
                    object,
                    clean.text,
                    corrupted.text,
                    clean.tokens,
                    corrupted.tokens,
                    tokenizer.encode(" " + io).front(),
                    tokenizer.encode(" " + subject).front()};
        if (set.prompts.empty()) {
          set.length = static_cast<int64_t>(clean.tokens.size());
          set.firstNamePosition = clean.slotPositions.at(0);
          set.secondNamePosition = clean.slotPositions.at(1);
          set.subjectPosition = clean.slotPositions.at(3);
          set.endPosition = set.length - 1;
        }
        if (static_cast<int64_t>(clean.tokens.size()) != set.length ||
            static_cast<int64_t>(corrupted.tokens.size()) != set.length ||
            clean.slotPositions.at(3) != set.subjectPosition)
          throw std::logic_error("IOI prompt \"" + clean.text +
                                 "\" breaks the set's fixed length or positions");
        set.prompts.push_back(std::move(p));
      }
    }
  }
  return set;
}

nlohmann::json toJson(const IoiPromptSet& set) {
  nlohmann::json prompts = nlohmann::json::array();
  for (const auto& p : set.prompts)
    prompts.push_back({{"order", p.order},
                       {"indirect_object", p.indirectObject},
                       {"subject", p.subject},
                       {"place", p.place},
                       {"object", p.object},
                       {"clean_text", p.cleanText},
                       {"corrupted_text", p.corruptedText},
                       {"clean_tokens", p.clean},
                       {"corrupted_tokens", p.corrupted},
                       {"correct_id", p.correctId},
                       {"wrong_id", p.wrongId}});
  return {
      {"format", kIoiFormat.name},
      {"version", kIoiFormat.version},
      {"frame", set.frame},
      {"corruption", "the repeated subject is replaced by the indirect object"},
      {"starts_with_end_of_text", set.startsWithEndOfText},
      {"length", set.length},
      {"positions",
       {{"first_name", set.firstNamePosition},
        {"second_name", set.secondNamePosition},
        {"subject", set.subjectPosition},
        {"end", set.endPosition}}},
      {"words_available",
       {{"names", set.namesAvailable}, {"places", set.placesAvailable}, {"objects", set.objectsAvailable}}},
      {"prompts", prompts}};
}

IoiPromptSet ioiPromptSetFromJson(const nlohmann::json& j, const std::string& source) {
  IoiPromptSet set;
  try {
    checkFileFormat(j, kIoiFormat, source);
    set.frame = j.at("frame").get<std::string>();
    set.startsWithEndOfText = j.at("starts_with_end_of_text").get<bool>();
    set.length = j.at("length").get<int64_t>();
    const auto& pos = j.at("positions");
    set.firstNamePosition = pos.at("first_name").get<int64_t>();
    set.secondNamePosition = pos.at("second_name").get<int64_t>();
    set.subjectPosition = pos.at("subject").get<int64_t>();
    set.endPosition = pos.at("end").get<int64_t>();
    for (const auto& p : j.at("prompts")) {
      IoiPrompt prompt{p.at("order"),          p.at("indirect_object"), p.at("subject"),
                       p.at("place"),          p.at("object"),          p.at("clean_text"),
                       p.at("corrupted_text"), p.at("clean_tokens"),    p.at("corrupted_tokens"),
                       p.at("correct_id"),     p.at("wrong_id")};
      if (static_cast<int64_t>(prompt.clean.size()) != set.length ||
          static_cast<int64_t>(prompt.corrupted.size()) != set.length)
        throw FileError(source, "prompt " + std::to_string(set.prompts.size()) + " has " +
                                    std::to_string(prompt.clean.size()) + "/" +
                                    std::to_string(prompt.corrupted.size()) + " tokens, the set says " +
                                    std::to_string(set.length));
      set.prompts.push_back(std::move(prompt));
    }
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("malformed IOI prompt set: ") + e.what());
  }
  if (set.prompts.empty()) throw FileError(source, "holds no prompts");
  return set;
}

}  // namespace nf
