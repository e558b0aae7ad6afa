// The datasets a run uses when the user has chosen none: new documents of the synthetic corpus (seed 1,
// i.e. the files `normfree-cli corpus --seed 1` writes: train 12 MB, val and alt 2 MB each), tokenized with
// the model's tokenizer, and an IOI prompt set made from that tokenizer — the recipe of
// resources/tiny-gpt2/experiment.sh, so the GUI and the main job fine-tune on the same data.
#pragma once
#include <string>

#include "util/progress.h"

namespace nf {

struct Datasets {
  std::string train, val, alt;  // token files
  std::string ioi;              // IOI prompt set (JSON)
};

// The files in `folder`, made (each atomically, reporting progress) only where missing, so a second call
// is instant. Throws FileError naming the file when the tokenizer cannot be read or a file not written.
Datasets prepareSyntheticDatasets(const std::string& folder, const std::string& tokenizerFolder,
                                  const ProgressFn& progress = {});

}  // namespace nf
