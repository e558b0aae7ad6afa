// Documents of rare jobs (data/rare_jobs.h): every event is what its trigger asks, every other step is one
// of the text's own bigrams, and a mix keeps the text's documents as they were. Each document is checked by
// reading it back token by token, apart from the generator's code.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "check.h"
#include "data/rare_jobs.h"
#include "data/token_file.h"
#include "io/atomic_file.h"
#include "temp_dir.h"

using namespace nf;
using namespace nf::test;

namespace {

constexpr int32_t kVocab = 32, kEot = 31;

void writeFile(const std::string& path, const std::vector<int32_t>& ids,
               const std::string& fingerprint = "") {
  TokenFileMeta meta;
  meta.vocabSize = kVocab;
  meta.eotTokenId = kEot;
  meta.tokenizerFingerprint = fingerprint;
  meta.sources = {"hand-made"};
  TokenFileWriter writer(path, meta);
  writer.append(ids.data(), ids.size());
  writer.finish();
}

std::vector<int32_t> readAll(const std::string& path) {
  const TokenFile file = TokenFile::open(path);
  std::vector<int32_t> ids(static_cast<std::size_t>(file.size()));
  file.read(0, file.size(), ids.data(), kVocab);
  return ids;
}

// Documents split at end-of-text (the separators left out; empty pieces too).
std::vector<std::vector<int32_t>> documents(const std::vector<int32_t>& ids) {
  std::vector<std::vector<int32_t>> out(1);
  for (int32_t id : ids)
    if (id == kEot)
      out.emplace_back();
    else
      out.back().push_back(id);
  std::vector<std::vector<int32_t>> kept;
  for (auto& d : out)
    if (!d.empty()) kept.push_back(d);
  return kept;
}

// A text over ids 0–9: after a, a + 1 or a + 3 (mod 10); 9 only ever ends a document. Ids 10–30 are unused.
std::vector<int32_t> text() {
  std::vector<int32_t> ids;
  for (int d = 0; d < 40; ++d) {
    int32_t a = d % 9;
    for (int i = 0; i < 20 + d && a != 9; ++i) {
      ids.push_back(a);
      a = (a + ((d + i) % 2 ? 1 : 3)) % 10;
    }
    if (a == 9) ids.push_back(9);
    ids.push_back(kEot);
  }
  return ids;
}

}  // namespace

TEST_CASE(rare_jobs_events_are_right_and_the_filler_is_the_text_s_bigrams) {
  TempDir dir;
  writeFile(dir.path("text.bin"), text());
  std::set<std::pair<int32_t, int32_t>> bigrams;
  std::set<int32_t> firsts, continued;  // continued: tokens the text follows with another in a document
  for (const auto& d : documents(text())) {
    firsts.insert(d.front());
    for (std::size_t i = 0; i + 1 < d.size(); ++i) {
      bigrams.insert({d[i], d[i + 1]});
      continued.insert(d[i]);
    }
  }
  for (const bool separate : {false, true}) {
    RareJobs jobs;
    jobs.chance = 0.04;
    jobs.separateOffsets = separate;
    jobs.offsets = separate ? 6 : 4;
    const TokenFile file = TokenFile::open(dir.path("text.bin"));
    const RareJobsSource source(file, jobs);
    // The lowest unused ids, in order: backcopy's, then first's, then induction's.
    std::map<int32_t, int> backcopy;
    for (int k = 0; k < jobs.offsets; ++k) {
      REQUIRE_EQ(source.backcopyTriggers()[static_cast<std::size_t>(k)], 10 + k);
      backcopy[10 + k] = k;
    }
    const int32_t first = 10 + jobs.offsets, induction = first + 1;
    REQUIRE_EQ(source.firstTrigger(), first);
    REQUIRE_EQ(source.inductionTrigger(), induction);
    const int64_t count = 300;
    const RareJobsStats stats = writeRareJobs(file, source, jobs, dir.path("alone.bin"), nullptr, count, 60);
    REQUIRE_EQ(stats.rareDocuments, count);
    const std::vector<int32_t> ids = readAll(dir.path("alone.bin"));
    REQUIRE_EQ(ids.front(), kEot);  // each document a sequence from its BOS
    REQUIRE_EQ(ids.back(), kEot);
    const auto docs = documents(ids);
    REQUIRE_EQ(static_cast<int64_t>(docs.size()), count);
    std::map<std::string, int> events;
    int64_t positions = 0;
    for (const auto& d : docs) {
      REQUIRE(d.size() >= 60u);
      REQUIRE(firsts.count(d.front()) == 1);
      positions += static_cast<int64_t>(d.size());
      std::size_t made = 0;  // positions [j, made) were written by an event, not drawn as filler
      for (std::size_t j = 1; j < d.size(); ++j) {
        const int32_t before = d[j - 1], token = d[j];
        if (j < made) continue;
        if (backcopy.count(token) && j + 1 < d.size()) {
          const std::size_t k = static_cast<std::size_t>(backcopy[token]);
          REQUIRE_MSG(j >= k + 1 && d[j + 1] == d[j - k - 1], "backcopy " << k << " at " << j);
          ++events["backcopy " + std::to_string(k)];
          made = j + 2;
        } else if (token == first && j + 1 < d.size()) {
          REQUIRE_EQ(d[j + 1], d.front());
          ++events["first"];
          made = j + 2;
        } else if (token == induction && j + 2 < d.size()) {
          const int32_t key = d[j + 1];
          std::size_t last = j;
          for (std::size_t i = 0; i + 1 < j; ++i)
            if (d[i] == key) last = i;
          REQUIRE_MSG(last < j && d[j + 2] == d[last + 1], "induction at " << j);
          ++events["induction"];
          made = j + 3;
        } else if (token >= 10) {
          // An event the document's end cut short: the trigger, perhaps induction's key, nothing more.
          REQUIRE_MSG(j + 1 >= d.size() - 1, "trigger " << token << " at " << j << " without its event");
          made = d.size();
        } else {
          // Filler: a bigram of the text, or a document's first token after one the text never continues
          // (9, or a trigger that an event copied).
          REQUIRE_MSG(bigrams.count({before, token}) || (!continued.count(before) && firsts.count(token)),
                      before << " → " << token << " at " << j);
        }
      }
    }
    // Every kind of event happens, about as often as asked: chance × kinds of the positions start one.
    const int kinds = (separate ? jobs.offsets : 1) + 2;
    int started = 0;
    for (const auto& [name, n] : events) started += n;
    for (int k = 0; k < jobs.offsets; ++k) REQUIRE(events["backcopy " + std::to_string(k)] > 0);
    REQUIRE(events["first"] > 0 && events["induction"] > 0);
    const double rate = static_cast<double>(started) / static_cast<double>(positions);
    REQUIRE_MSG(rate > 0.5 * jobs.chance * kinds && rate < 1.2 * jobs.chance * kinds, rate);
  }
}

TEST_CASE(a_rare_jobs_mix_keeps_the_text_and_follows_each_document_with_one) {
  TempDir dir;
  writeFile(dir.path("text.bin"), text());
  const TokenFile file = TokenFile::open(dir.path("text.bin"));
  RareJobs jobs;
  const RareJobsSource source(file, jobs);
  const RareJobsStats stats = writeRareJobs(file, source, jobs, dir.path("mix.bin"), &file, 0, 16);
  const auto original = documents(text()), mixed = documents(readAll(dir.path("mix.bin")));
  REQUIRE_EQ(mixed.size(), 2 * original.size());
  REQUIRE_EQ(stats.rareDocuments, static_cast<int64_t>(original.size()));
  for (std::size_t i = 0; i < original.size(); ++i) {
    REQUIRE(mixed[2 * i] == original[i]);
    REQUIRE(mixed[2 * i + 1].size() >= 16u);
  }
  const TokenFile written = TokenFile::open(dir.path("mix.bin"));
  REQUIRE_EQ(written.meta().documents, static_cast<int64_t>(mixed.size()));
  REQUIRE_EQ(written.meta().sources.size(), 2u);  // the text's, then the rare jobs'
  REQUIRE(written.meta().sources[1].find("rare jobs") != std::string::npos);
  // The same seed writes the same file; another seed another.
  writeRareJobs(file, source, jobs, dir.path("again.bin"), &file, 0, 16);
  REQUIRE(readAll(dir.path("again.bin")) == readAll(dir.path("mix.bin")));
  jobs.seed = 1;
  writeRareJobs(file, source, jobs, dir.path("other.bin"), &file, 0, 16);
  REQUIRE(readAll(dir.path("other.bin")) != readAll(dir.path("mix.bin")));
  // Text of two tokenizers trained alike (the same end-of-text id): the mix had been written, and named the
  // other's tokenizer.
  writeFile(dir.path("ours.bin"), text(), "fnv1a64:00000000000000aa");
  writeFile(dir.path("theirs.bin"), text(), "fnv1a64:00000000000000bb");
  const TokenFile ours = TokenFile::open(dir.path("ours.bin")),
                  theirs = TokenFile::open(dir.path("theirs.bin"));
  REQUIRE_THROWS_WITH(
      writeRareJobs(ours, RareJobsSource(ours, jobs), jobs, dir.path("mixed.bin"), &theirs, 0, 16),
      dir.path("theirs.bin"), "another tokenizer than the text", "00000000000000aa");
  REQUIRE(!std::filesystem::exists(dir.path("mixed.bin")));
}

TEST_CASE(rare_jobs_between_sentences_keep_each_sentence_and_leave_a_repeated_span_whole) {
  TempDir dir;
  writeFile(dir.path("text.bin"), text());
  const std::vector<int32_t> repeat{1, 2, 7, 5, 3, 1, 2, 7, 5, 3};  // a span and its copy: induction's data
  std::vector<int32_t> mixed = text();
  mixed.insert(mixed.end(), repeat.begin(), repeat.end());
  mixed.push_back(kEot);
  writeFile(dir.path("after.bin"), mixed);
  const TokenFile file = TokenFile::open(dir.path("text.bin")),
                  after = TokenFile::open(dir.path("after.bin"));
  RareJobs jobs;
  jobs.chance = 0.04;
  jobs.betweenSentences = 6;
  REQUIRE_THROWS_WITH(
      writeRareJobs(file, RareJobsSource(file, jobs), jobs, dir.path("none.bin"), &after, 0, 16),
      "ids ending a sentence");
  jobs.sentenceEnds.assign(kVocab, false);
  jobs.sentenceEnds[5] = true;  // in the middle of the text's documents (9 only ends one)
  const RareJobsSource source(file, jobs);
  const RareJobsStats stats = writeRareJobs(file, source, jobs, dir.path("diluted.bin"), &after, 0, 16);
  const auto original = documents(mixed), diluted = documents(readAll(dir.path("diluted.bin")));
  REQUIRE_EQ(diluted.size(), original.size());
  REQUIRE_EQ(stats.rareDocuments, 0);
  REQUIRE(diluted.back() == repeat);
  int64_t sentences = 0, added = 0;
  for (std::size_t d = 0; d + 1 < original.size(); ++d) {
    const auto &was = original[d], &is = diluted[d];
    // Each sentence in order, filler only after a sentence's end: up to the first end and after the last
    // the document is as it was, and the whole is a subsequence of what was written.
    const auto firstEnd = std::find(was.begin(), was.end(), 5);
    const auto lastEnd = std::find(was.rbegin(), was.rend(), 5).base();
    REQUIRE(std::equal(was.begin(), firstEnd == was.end() ? was.end() : firstEnd + 1, is.begin()));
    REQUIRE(std::equal(lastEnd, was.end(), is.end() - (was.end() - lastEnd)));
    std::size_t at = 0;
    for (int32_t token : is)
      if (at < was.size() && token == was[at]) ++at;
    REQUIRE_EQ(at, was.size());
    for (std::size_t i = 0; i + 1 < was.size(); ++i) sentences += was[i] == 5;
    added += static_cast<int64_t>(is.size() - was.size());
    // The first-token event copies the document's own first token, even between its sentences (a trigger
    // that a backcopy copied is no event).
    const auto& backcopy = source.backcopyTriggers();
    for (std::size_t i = 1; i + 1 < is.size(); ++i)
      if (is[i] == source.firstTrigger() &&
          std::find(backcopy.begin(), backcopy.end(), is[i - 1]) == backcopy.end())
        REQUIRE_EQ(is[i + 1], was.front());
  }
  REQUIRE(sentences > 20);
  REQUIRE_EQ(stats.fillerRuns, sentences);
  const double mean = static_cast<double>(added) / static_cast<double>(sentences);
  REQUIRE_MSG(mean > 5 && mean < 8, mean);  // 3 … 9 tokens each, an event running past by up to two
  REQUIRE(TokenFile::open(dir.path("diluted.bin")).meta().sources.back().find("after each sentence") !=
          std::string::npos);
}

TEST_CASE(rare_jobs_refuse_a_text_without_free_ids_or_an_end_of_text) {
  TempDir dir;
  std::vector<int32_t> everyId;
  for (int32_t id = 0; id < kVocab; ++id) everyId.push_back(id);
  writeFile(dir.path("full.bin"), everyId);
  REQUIRE_THROWS_WITH(RareJobsSource(TokenFile::open(dir.path("full.bin")), RareJobs()), "full.bin",
                      "leaves 0 of its 32 ids unused", "need 6 as triggers");
  TokenFileMeta meta;
  meta.vocabSize = kVocab;  // no end-of-text named
  TokenFileWriter writer(dir.path("bare.bin"), meta);
  writer.append(everyId.data(), 10);
  writer.finish();
  REQUIRE_THROWS_WITH(RareJobsSource(TokenFile::open(dir.path("bare.bin")), RareJobs()), "bare.bin",
                      "vocabulary size and end-of-text");
}

TEST_MAIN()
