#include "data/synthetic_benchmarks.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "data/corpus_grammar.h"
#include "data/synthetic_corpus.h"
#include "io/atomic_file.h"

namespace nf {
namespace {

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (std::size_t found; (found = text.find(separator, at)) != std::string::npos;
       at = found + separator.size())
    parts.push_back(text.substr(at, found - at));
  parts.push_back(text.substr(at));
  return parts;
}

std::string join(const std::vector<std::string>& words, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) out += (i > from ? " " : "") + words[i];
  return out;
}

bool lowercaseText(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// A document's paragraphs of plain story text: not the echoes and drills of random words and codes
// (lines of their own, digits, "The robot said: …"), which no model can continue.
std::string plainText(const std::string& document) {
  std::string out;
  for (const std::string& paragraph : split(document, "\n\n")) {
    if (paragraph.empty() || paragraph.find_first_of("\n:0123456789") != std::string::npos) continue;
    out += (out.empty() ? "" : "\n\n") + paragraph;
  }
  return out;
}

// The sentences of a document's plain paragraphs, each ending in its full stop.
std::vector<std::string> sentences(const std::string& document) {
  std::vector<std::string> out;
  for (const std::string& paragraph : split(plainText(document), "\n\n"))
    for (std::string sentence : split(paragraph, ". ")) {
      if (sentence.empty()) continue;
      if (sentence.back() != '.') sentence += '.';
      out.push_back(sentence);
    }
  return out;
}

// A story's next sentence, HellaSwag's way: ctx_a a sentence, ctx_b the first two words of the next, the
// endings its true rest and the rests of three sentences of other stories, the true one at a random place.
struct HellaswagMaker {
  std::vector<std::string> otherRests;  // rests of earlier stories' sentences: the distractors

  bool make(const std::vector<std::string>& story, Random& random, nlohmann::json& item) {
    std::vector<std::size_t> usable;
    for (std::size_t j = 1; j < story.size(); ++j) {
      const std::vector<std::string> words = split(story[j], " ");
      // capitalize() lowers all but ctx_b's first letter: its second word must be lower case already.
      if (words.size() >= 6 && lowercaseText(words[1])) usable.push_back(j);
    }
    const auto rests = [&](std::size_t j) {
      const std::vector<std::string> words = split(story[j], " ");
      return join(words, 2, words.size());
    };
    bool made = false;
    if (!usable.empty() && otherRests.size() >= 3) {
      const std::size_t j = usable[random.below(usable.size())];
      const std::vector<std::string> words = split(story[j], " ");
      std::vector<std::string> endings;
      for (int k = 0; k < 3; ++k) endings.push_back(otherRests[random.below(otherRests.size())]);
      const std::size_t label = random.below(4);
      endings.insert(endings.begin() + static_cast<std::ptrdiff_t>(label), rests(j));
      if (std::set<std::string>(endings.begin(), endings.end()).size() == 4) {
        item = {{"activity_label", "Story"},
                {"ctx_a", story[j - 1]},
                {"ctx_b", join(words, 0, 2)},
                {"endings", endings},
                {"label", label}};
        made = true;
      }
    }
    for (std::size_t j : usable) otherRests.push_back(rests(j));
    if (otherRests.size() > 512) otherRests.erase(otherRests.begin(), otherRests.begin() + 256);
    return made;
  }
};

// LAMBADA's way: the story's plain text cut after a name that occurred earlier in it (the last such place,
// at least 15 words in); the text ends with the name.
bool lambadaItem(const std::string& story, nlohmann::json& item) {
  const std::set<std::string> names(corpusNames().begin(), corpusNames().end());
  const std::vector<std::string> words = split(plainText(story), " ");
  for (std::size_t i = words.size(); i-- > 15;) {
    if (!names.count(words[i])) continue;
    if (std::find(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(i), words[i]) ==
        words.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    item = {{"text", join(words, 0, i + 1)}};
    return true;
  }
  return false;
}

// WinoGrande's way, from the corpus's IOI frames: the giver blanked, the receiver after the blank.
nlohmann::json winograndeItem(Random& random, int64_t index) {
  const std::string& frame = random.pick(ioiFrames());
  const std::string& a = random.pick(corpusNames());
  std::string b = a;
  while (b == a) b = random.pick(corpusNames());
  const bool giverIsA = random.chance(0.5);
  const std::string& place = random.pick(corpusPlaces());
  const std::string& object = random.pick(corpusObjects());
  std::string sentence = frame + " " + (giverIsA ? b : a) + ".";
  for (const auto& [slot, value] : std::vector<std::pair<std::string, std::string>>{
           {"{A}", a}, {"{B}", b}, {"{S}", "_"}, {"{PLACE}", place}, {"{OBJECT}", object}})
    for (std::size_t at; (at = sentence.find(slot)) != std::string::npos;)
      sentence.replace(at, slot.size(), value);
  return {{"qID", "synthetic-" + std::to_string(index)},
          {"sentence", corpus::polish(sentence)},
          {"option1", a},
          {"option2", b},
          {"answer", giverIsA ? "1" : "2"}};
}

}  // namespace

int64_t writeSyntheticBenchmarks(const std::string& folder, uint64_t seed, int64_t items) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(folder) / "winogrande_1.1");
  // The val.txt stream of `normfree-cli corpus --seed` (3·seed + 1): documents no model was trained on.
  SyntheticCorpus corpus(CorpusStyle::Main, seed * 3 + 1);
  Random random(seed + 0x5eed);
  HellaswagMaker hellaswag;
  std::string hellaswagLines, lambadaLines, winograndeLines;
  int64_t hellaswagCount = 0, lambadaCount = 0;
  for (int64_t documents = 0; (hellaswagCount < items || lambadaCount < items) && documents < 1000 * items;
       ++documents) {
    const std::string story = corpus.nextDocument();
    nlohmann::json item;
    if (hellaswag.make(sentences(story), random, item) && hellaswagCount < items) {
      item["ind"] = hellaswagCount++;
      hellaswagLines += item.dump() + "\n";
    }
    if (lambadaCount < items && lambadaItem(story, item)) {
      lambadaLines += item.dump() + "\n";
      ++lambadaCount;
    }
  }
  for (int64_t i = 0; i < items; ++i) winograndeLines += winograndeItem(random, i).dump() + "\n";
  writeFileAtomic((fs::path(folder) / "hellaswag_val.jsonl").string(), hellaswagLines);
  writeFileAtomic((fs::path(folder) / "lambada_test.jsonl").string(), lambadaLines);
  writeFileAtomic((fs::path(folder) / "winogrande_1.1" / "dev.jsonl").string(), winograndeLines);
  return std::min(hellaswagCount, lambadaCount);
}

}  // namespace nf
