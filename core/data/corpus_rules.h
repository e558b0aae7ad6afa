// The synthetic corpus's grammar data, as tables: name lists, the IOI frames and the places and objects
// they are filled with, and the word lists and sentence templates of each style (corpus_rules.cpp). The
// engine that reads them is corpus_grammar.h. Internal to core/data; the public API is synthetic_corpus.h.
#pragma once
#include <string>
#include <vector>

#include "data/corpus_grammar.h"

namespace nf::corpus {

// Names. Each main name is a single GPT-2 token after a space, so IOI prompts built from them line up.
const std::vector<std::string>& mainFemaleNames();
const std::vector<std::string>& mainMaleNames();
// The alternative style shares a few names with the main one and has many of its own.
const std::vector<std::string>& altFemaleNames();
const std::vector<std::string>& altMaleNames();

// Exported lists: the IOI frames and the words they are filled with (also used throughout the main text).
const std::vector<std::string>& placeWords();
const std::vector<std::string>& objectWords();
const std::vector<std::string>& frames();

// The compiled grammar of each style: the shared rules, the style's rules and its lists (built once).
const Grammar& mainGrammar();
const Grammar& altGrammar();

}  // namespace nf::corpus
