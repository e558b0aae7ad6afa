// What a run keeps of the model it started from, in RUN/source/: a copy of its config.json and tokenizer
// files, and source.json (the folder and a fingerprint of its weights, model/model_folder.h). final/ ships
// the tokenizer the run trained with whatever becomes of the folder, and a folder changed since the start
// is noticed — named when the run resumes, refused for analyses of "the model the run started from" —
// instead of silently used. Plain C++ (no torch).
#pragma once
#include <string>

namespace nf::run {

// Writes RUN/source/ whole (beside it, then renamed in) for the model folder a run starts from; without
// `weights` (a pretraining run, which reads only the folder's shape) no fingerprint is kept or compared.
void keepSourceModel(const std::string& runDir, const std::string& modelFolder, bool weights);
// "" while the folder the run started from still holds the same weights (or the run has no source/, having
// started before it was kept); otherwise what became of it, e.g. "runs/m: its weights changed since the
// run started".
std::string sourceModelChange(const std::string& runDir);

}  // namespace nf::run
