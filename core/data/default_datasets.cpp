#include "data/default_datasets.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "data/ioi.h"
#include "data/synthetic_corpus.h"
#include "data/tokenize.h"
#include "io/atomic_file.h"

namespace nf {

Datasets prepareSyntheticDatasets(const std::string& folder, const std::string& tokenizerFolder,
                                  const ProgressFn& progress) {
  namespace fs = std::filesystem;
  fs::create_directories(folder);
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(tokenizerFolder);
  constexpr int64_t kMB = 1000 * 1000;
  struct Split {
    const char* name;
    CorpusStyle style;
    int64_t bytes;
  };
  const Split splits[] = {{"train", CorpusStyle::Main, 12 * kMB},
                          {"val", CorpusStyle::Main, 2 * kMB},
                          {"alt", CorpusStyle::Alternative, 2 * kMB}};
  constexpr uint64_t kSeed = 1;
  std::string paths[3];
  for (uint64_t i = 0; i < 3; ++i) {
    const std::string text = folder + "/" + splits[i].name + ".txt";
    paths[i] = folder + "/" + splits[i].name + ".bin";
    if (fs::exists(paths[i])) continue;
    // The seeds of `normfree-cli corpus --seed 1`: 3·seed + split.
    writeSyntheticCorpus(text, splits[i].style, kSeed * 3 + i, splits[i].bytes, progress);
    tokenizeFiles({text}, *tokenizer, tokenizerFolder, paths[i], progress);
    fs::remove(text);  // the token file is what training reads; the text can be made again
  }
  const std::string ioi = folder + "/ioi.json";
  if (!fs::exists(ioi)) writeFileAtomic(ioi, toJson(makeIoiPromptSet(*tokenizer, IoiOptions{})).dump());
  return {paths[0], paths[1], paths[2], ioi};
}

}  // namespace nf
