#include "data/synthetic_corpus.h"

// The public API of the synthetic corpus. How a document is made: corpus_grammar.h (the grammar engine),
// corpus_rules.cpp (word lists and templates), corpus_writer.h and corpus_main_style.cpp /
// corpus_alt_style.cpp (the document writers).

#include "data/corpus_rules.h"
#include "data/corpus_writer.h"
#include "io/atomic_file.h"
#include "text/tokenizer.h"

namespace nf {

const char* corpusStyleName(CorpusStyle style) { return style == CorpusStyle::Main ? "main" : "alternative"; }

SyntheticCorpus::SyntheticCorpus(CorpusStyle style, uint64_t seed) : m_style(style), m_random(seed) {}

std::string SyntheticCorpus::nextDocument() {
  return m_style == CorpusStyle::Main ? corpus::mainDocument(m_random) : corpus::altDocument(m_random);
}

const std::vector<std::string>& ioiFrames() { return corpus::frames(); }

const std::vector<std::string>& corpusNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = corpus::mainFemaleNames();
    all.insert(all.end(), corpus::mainMaleNames().begin(), corpus::mainMaleNames().end());
    return all;
  }();
  return names;
}

const std::vector<std::string>& corpusPlaces() { return corpus::placeWords(); }
const std::vector<std::string>& corpusObjects() { return corpus::objectWords(); }

int64_t writeSyntheticCorpus(const std::string& path, CorpusStyle style, uint64_t seed, int64_t bytes,
                             const ProgressFn& progress) {
  SyntheticCorpus corpus(style, seed);
  AtomicFile file(path);
  const std::string task = std::string("corpus ") + corpusStyleName(style) + " → " + path;
  int64_t written = 0, documents = 0, lastReport = 0;
  while (written < bytes) {
    const std::string document =
        (documents ? std::string(kEndOfText) : std::string()) + corpus.nextDocument();
    file.write(document);
    written += static_cast<int64_t>(document.size());
    ++documents;
    if (progress && written - lastReport >= (1 << 20)) {
      progress({task, written, bytes, "B", false});
      lastReport = written;
    }
  }
  file.commit();
  if (progress) progress({task, written, bytes, "B", true});
  return documents;
}

}  // namespace nf
