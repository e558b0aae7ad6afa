#include "data/ioi.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "data/synthetic_corpus.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"
#include "util/random.h"

namespace nf {
namespace {

// Where each token's bytes lie in `text`, the text its ids were encoded from. The tokens' bytes
// concatenated must end with the text: a SentencePiece dummy prefix may stand before it.
std::vector<std::pair<std::size_t, std::size_t>> tokenSpans(const Tokenizer& tokenizer,
                                                            const std::vector<int32_t>& ids,
                                                            const std::string& text) {
  std::string joined;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (int32_t id : ids) {
    const std::size_t begin = joined.size();
    joined += tokenizer.tokenBytes(id);
    spans.push_back({begin, joined.size()});
  }
  if (joined.size() < text.size() || joined.compare(joined.size() - text.size(), text.size(), text) != 0)
    throw std::invalid_argument(
        tokenizer.source() + ": the tokens of \"" + text +
        "\" do not spell it out (the tokenizer rewrites text), so IOI prompts cannot be made");
  const std::size_t offset = joined.size() - text.size();
  for (auto& [begin, end] : spans) {
    begin = begin < offset ? 0 : begin - offset;
    end = end < offset ? 0 : end - offset;
  }
  return spans;
}

// The token that is exactly text[begin, end), or -1.
int64_t tokenAt(const std::vector<std::pair<std::size_t, std::size_t>>& spans, std::size_t begin,
                std::size_t end) {
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (spans[i].first == begin && spans[i].second == end) return static_cast<int64_t>(i);
  return -1;
}

// The token of " word" in running text (the word with the space before it, where the tokenizer joins
// them), or -1 when the word is more than one token.
int32_t wordToken(const Tokenizer& tokenizer, const std::string& word) {
  const std::string text = "a " + word + " a";
  const std::vector<int32_t> ids = tokenizer.encode(text);
  const int64_t at = tokenAt(tokenSpans(tokenizer, ids, text), 1, 2 + word.size());
  return at < 0 ? -1 : ids[at];
}

struct Words {
  std::vector<std::string> kept, rejected;
};

Words singleTokenWords(const Tokenizer& tokenizer, const std::vector<std::string>& words,
                       std::unordered_map<std::string, int32_t>& ids) {
  Words w;
  for (const auto& word : words) {
    const int32_t id = wordToken(tokenizer, word);
    (id >= 0 ? w.kept : w.rejected).push_back(word);
    if (id >= 0) ids[word] = id;
  }
  return w;
}

std::string listed(const std::vector<std::string>& words) {
  constexpr std::size_t kShown = 12;
  std::string s;
  for (std::size_t i = 0; i < words.size() && i < kShown; ++i) s += (i ? ", " : "") + words[i];
  if (words.size() > kShown) s += ", … (" + std::to_string(words.size()) + " in all)";
  return words.empty() ? "none" : s;
}

struct Filled {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<int64_t> slotPositions;  // token position of each placeholder, in frame order
};

// Fills the frame and encodes it whole; each placeholder follows a space, and " word" must be exactly
// one token there.
Filled fillFrame(const Tokenizer& tokenizer, const std::string& frame,
                 const std::vector<std::pair<std::string, std::string>>& slots, int32_t startId) {
  Filled f;
  std::vector<std::pair<std::size_t, std::size_t>> slotBytes;
  std::size_t pos = 0;
  while (pos < frame.size()) {
    const std::size_t open = frame.find('{', pos);
    f.text += frame.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (open == std::string::npos) break;
    if (f.text.empty() || f.text.back() != ' ')
      throw std::logic_error("IOI frame \"" + frame + "\" has a placeholder without a space before it");
    const std::size_t close = frame.find('}', open);
    const std::string name = frame.substr(open + 1, close - open - 1);
    auto slot = std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == name; });
    if (slot == slots.end()) throw std::logic_error("IOI frame has an unknown placeholder {" + name + "}");
    slotBytes.push_back({f.text.size() - 1, f.text.size() + slot->second.size()});
    f.text += slot->second;
    pos = close + 1;
  }
  if (startId >= 0) f.tokens.push_back(startId);
  const std::vector<int32_t> ids = tokenizer.encode(f.text);
  const auto spans = tokenSpans(tokenizer, ids, f.text);
  f.tokens.insert(f.tokens.end(), ids.begin(), ids.end());
  for (std::size_t i = 0; i < slotBytes.size(); ++i) {
    const int64_t at = tokenAt(spans, slotBytes[i].first, slotBytes[i].second);
    if (at < 0)
      throw std::invalid_argument(
          tokenizer.source() + ": in \"" + f.text + "\" the word \"" +
          f.text.substr(slotBytes[i].first + 1, slotBytes[i].second - slotBytes[i].first - 1) +
          "\" is not one token");
    f.slotPositions.push_back(at + (startId >= 0 ? 1 : 0));
  }
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
  // Prompts start as documents do in token files (tokenize.h).
  const int32_t startId = options.prependEndOfText ? tokenizer.documentStartId() : -1;
  if (options.prependEndOfText && startId < 0)
    throw std::invalid_argument(tokenizer.source() +
                                " has no begin-of-sequence or end-of-text token to start the prompts with");

  std::unordered_map<std::string, int32_t> wordIds;
  const Words names = singleTokenWords(tokenizer, corpusNames(), wordIds);
  const Words places = singleTokenWords(tokenizer, corpusPlaces(), wordIds);
  const Words objects = singleTokenWords(tokenizer, corpusObjects(), wordIds);
  if (names.kept.size() < 2 || places.kept.empty() || objects.kept.empty())
    throw std::invalid_argument(tokenizer.source() + " has too few single-token words for IOI prompts (" +
                                std::to_string(names.kept.size()) + " names, " +
                                std::to_string(places.kept.size()) + " places, " +
                                std::to_string(objects.kept.size()) +
                                " objects; need 2, 1, 1). Not one token with the space before "
                                "it: names " +
                                listed(names.rejected) + "; places " + listed(places.rejected) +
                                "; objects " + listed(objects.rejected));

  IoiPromptSet set;
  set.frame = frames[options.frameIndex];
  set.startsWithEndOfText = options.prependEndOfText;
  set.namesAvailable = static_cast<int64_t>(names.kept.size());
  set.placesAvailable = static_cast<int64_t>(places.kept.size());
  set.objectsAvailable = static_cast<int64_t>(objects.kept.size());
  Random random(options.seed);
  for (int64_t group = 0; group < options.count / 4; ++group) {
    const std::string x = random.pick(names.kept);
    std::string y = x;
    while (y == x) y = random.pick(names.kept);
    const std::string place = random.pick(places.kept), object = random.pick(objects.kept);
    for (const char* order : {"ABBA", "BABA"}) {
      for (const auto& [io, subject] : {std::pair{x, y}, std::pair{y, x}}) {
        const bool ioFirst = std::string(order) == "ABBA";
        const std::string a = ioFirst ? io : subject, b = ioFirst ? subject : io;
        auto fill = [&](const std::string& repeated) {
          return fillFrame(tokenizer, set.frame,
                           {{"A", a}, {"B", b}, {"PLACE", place}, {"S", repeated}, {"OBJECT", object}},
                           startId);
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
                    wordIds.at(io),
                    wordIds.at(subject)};
        if (set.prompts.empty()) {
          set.length = static_cast<int64_t>(clean.tokens.size());
          set.firstNamePosition = clean.slotPositions.at(0);
          set.secondNamePosition = clean.slotPositions.at(1);
          set.subjectPosition = clean.slotPositions.at(3);
          set.endPosition = set.length - 1;
        }
        if (static_cast<int64_t>(clean.tokens.size()) != set.length ||
            static_cast<int64_t>(corrupted.tokens.size()) != set.length ||
            clean.slotPositions.at(3) != set.subjectPosition ||
            clean.tokens[set.subjectPosition] != p.wrongId ||
            corrupted.tokens[set.subjectPosition] != p.correctId)
          throw std::invalid_argument(tokenizer.source() + ": IOI prompt \"" + clean.text +
                                      "\" breaks the set's fixed length or name positions");
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
  checkFileFormat(j, kIoiFormat, source);
  IoiPromptSet set;
  try {
    // Every number checked (JsonIn): a length or position of 1e40 is refused, never converted.
    readJson(j, "IOI prompt set", [&](const JsonIn& in) {
      set.frame = in["frame"].text();
      set.startsWithEndOfText = in["starts_with_end_of_text"].flag();
      set.length = in["length"].whole<int64_t>();
      const JsonIn pos = in["positions"];
      // Patching indexes every prompt with these: each must lie inside the prompts.
      for (auto [key, position] :
           {std::pair{"first_name", &set.firstNamePosition},
            std::pair{"second_name", &set.secondNamePosition}, std::pair{"subject", &set.subjectPosition},
            std::pair{"end", &set.endPosition}}) {
        *position = pos[key].whole<int64_t>();
        if (*position < 0 || *position >= set.length)
          throw std::invalid_argument("IOI prompt set: 'positions." + std::string(key) + "' is " +
                                      std::to_string(*position) + ", outside prompts of " +
                                      std::to_string(set.length) + " tokens");
      }
      set.prompts = in["prompts"].list([](const JsonIn& p) {
        return IoiPrompt{p["order"].text(),
                         p["indirect_object"].text(),
                         p["subject"].text(),
                         p["place"].text(),
                         p["object"].text(),
                         p["clean_text"].text(),
                         p["corrupted_text"].text(),
                         p["clean_tokens"].wholes<int32_t>(),
                         p["corrupted_tokens"].wholes<int32_t>(),
                         p["correct_id"].whole<int32_t>(),
                         p["wrong_id"].whole<int32_t>()};
      });
      return 0;
    });
  } catch (const std::invalid_argument& e) {
    throw FileError(source, std::string("malformed IOI prompt set: ") + e.what());
  }
  for (std::size_t i = 0; i < set.prompts.size(); ++i) {
    const IoiPrompt& prompt = set.prompts[i];
    if (static_cast<int64_t>(prompt.clean.size()) != set.length ||
        static_cast<int64_t>(prompt.corrupted.size()) != set.length)
      throw FileError(source, "prompt " + std::to_string(i) + " has " + std::to_string(prompt.clean.size()) +
                                  "/" + std::to_string(prompt.corrupted.size()) + " tokens, the set says " +
                                  std::to_string(set.length));
  }
  if (set.prompts.empty()) throw FileError(source, "holds no prompts");
  set.source = source;
  return set;
}

void checkIoiPromptSetFor(const IoiPromptSet& set, int64_t vocabSize, const Tokenizer* tokenizer) {
  const std::string source = set.source.empty() ? "the IOI prompt set" : set.source;
  const int32_t startId = tokenizer && set.startsWithEndOfText ? tokenizer->documentStartId() : -1;
  auto encoded = [&](const std::string& text) {
    std::vector<int32_t> ids;
    if (startId >= 0) ids.push_back(startId);
    const std::vector<int32_t> textIds = tokenizer->encode(text);
    ids.insert(ids.end(), textIds.begin(), textIds.end());
    return ids;
  };
  const auto subject = static_cast<std::size_t>(set.subjectPosition);
  auto subjectToken = [&](const std::vector<int32_t>& tokens) {
    return subject < tokens.size() ? std::to_string(tokens[subject]) : std::string("none");
  };
  for (std::size_t i = 0; i < set.prompts.size(); ++i) {
    const IoiPrompt& p = set.prompts[i];
    const std::string prompt = "prompt " + std::to_string(i);
    auto inVocabulary = [&](int32_t id, const char* field) {
      if (id < 0 || id >= vocabSize)
        throw FileError(source, prompt + "'s " + field + " " + std::to_string(id) +
                                    " is outside the model's vocabulary of " + std::to_string(vocabSize));
    };
    inVocabulary(p.correctId, "correct_id");
    inVocabulary(p.wrongId, "wrong_id");
    for (int32_t id : p.clean) inVocabulary(id, "clean token");
    for (int32_t id : p.corrupted) inVocabulary(id, "corrupted token");
    // What makeIoiPromptSet guarantees of every prompt: two names, the repeated subject (wrong_id) in the
    // clean prompt and the indirect object (correct_id) in its place in the corrupted one. Without it the
    // logit difference measures something else.
    if (p.correctId == p.wrongId)
      throw FileError(source, prompt + "'s correct_id and wrong_id are both " + std::to_string(p.correctId) +
                                  ": its logit difference is always 0");
    if (subject >= p.clean.size() || subject >= p.corrupted.size() || p.clean[subject] != p.wrongId ||
        p.corrupted[subject] != p.correctId)
      throw FileError(source, prompt + " has " + subjectToken(p.clean) + " (clean) and " +
                                  subjectToken(p.corrupted) + " (corrupted) at the subject position " +
                                  std::to_string(set.subjectPosition) + ", not its wrong_id " +
                                  std::to_string(p.wrongId) + " and correct_id " +
                                  std::to_string(p.correctId) +
                                  ": the corrupted prompt must put the indirect object where the clean one "
                                  "repeats the subject");
    if (!tokenizer) continue;
    auto spelled = [&](const std::vector<int32_t>& tokens, const std::string& text, const std::string& what) {
      if (encoded(text) != tokens)
        throw FileError(source, prompt + "'s " + what + " as " + tokenizer->source() +
                                    " encodes it: the set was made with another tokenizer (make one for this "
                                    "model with 'normfree-cli ioi --tokenizer MODEL')");
    };
    spelled(p.clean, p.cleanText, "tokens are not its clean_text");
    spelled(p.corrupted, p.corruptedText, "corrupted_tokens are not its corrupted_text");
  }
}

}  // namespace nf
