// The project's own English-like corpus, deterministic from a seed, so the bundled tiny model can be
// trained anywhere without downloads. It is built for circuits worth inspecting: indirect-object
// sentences (name moving), repeated spans (induction), and facts about named people, places and things,
// with enough grammatical and lexical variety that a small model cannot just memorise it.
// Torch-free: plain strings in, plain strings out.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/progress.h"
#include "util/random.h"

namespace nf {

// Main: the training distribution (train and val are two seeds of it). Alternative: other templates
// and word lists, playing the role The Pile plays in the paper (a differently distributed eval set).
enum class CorpusStyle { Main, Alternative };

const char* corpusStyleName(CorpusStyle style);  // "main", "alternative"

// Endless stream of documents; the same (style, seed) always gives the same documents, on every machine.
class SyntheticCorpus {
 public:
  SyntheticCorpus(CorpusStyle style, uint64_t seed);
  // One document: a few sentences to a few paragraphs of plain text, no end-of-text marker.
  std::string nextDocument();

 private:
  CorpusStyle m_style;
  Random m_random;
};

// Writes documents of (style, seed) separated by "<|endoftext|>" until the file holds at least `bytes`
// bytes (atomically). Returns the number of documents.
int64_t writeSyntheticCorpus(const std::string& path, CorpusStyle style, uint64_t seed, int64_t bytes,
                             const ProgressFn& progress = {});

// The indirect-object-identification sentence frames the main corpus uses, shared with the IOI prompt
// sets so patching asks the model about sentences it was trained on. Placeholders: {A} and {B} are the
// two names in the order the first clause mentions them, {S} the subject of the second clause (the
// repeated name), {PLACE} and {OBJECT} a place and an object. Each frame ends with " to"; the indirect
// object {IO} (the name that is not {S}) follows it in the corpus.
const std::vector<std::string>& ioiFrames();

// Word lists of the main corpus that IOI prompt sets draw from (without leading spaces).
const std::vector<std::string>& corpusNames();
const std::vector<std::string>& corpusPlaces();
const std::vector<std::string>& corpusObjects();

}  // namespace nf
